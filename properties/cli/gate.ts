/**
 * `workqueue-conformance`: the conformance gate as a command. A thin shell over the library: it parses options,
 * connects the implementation (a child process over protocol v1, or a module in process), runs
 * {@link checkDriver}, and prints the outcome. The exit code is returned; `bin.ts` exits with it.
 */
import { readFileSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { type ProtocolBreach, StartError } from "../core/breach.js";
import { type Driver, inProcess } from "../core/driver.js";
import { loadFactory } from "../core/load.js";
import { plural } from "../core/render.js";
import type { SubjectFactory } from "../core/subject.js";
import { connect } from "../protocol/driver.js";
import { toJson } from "../report/json.js";
import { toJunit } from "../report/junit.js";
import type { GateOutcome } from "../report/outcome.js";
import { protocolLines } from "../report/protocol-lines.js";
import { formatReport, withoutEscapes } from "../report/text.js";
import { checkConformance } from "../sequential/check-conformance.js";
import { checkDriver } from "../sequential/conformance.js";
import { type ConformanceOptions, replayOptionsOf } from "../sequential/options.js";
import { checkReplay, oneLine, UsageError } from "./args.js";
import { exitCodeHelp, exitCodes, failureOf } from "./exit-codes.js";
import { checkReplayFirst, type GateOptions, parseGate, replayCommand, replayNames, salvage } from "./gate-options.js";
import { claimPage, refuseNothingToDraw, type Target, writePage } from "./html.js";

export const usage = `usage: workqueue-conformance [options] -- <command> [args…]
       workqueue-conformance [options] --module <file>

Checks a work queue against the executable model of docs/spec.md with random command sequences. The command is
started without a shell and spoken to over protocol v1 (docs/protocol.md); a module must export a queue factory
\`(options) => queue\` as \`default\` or \`factory\` and is checked in process; when its \`get\` answers a promise, it is
also given overlapping calls (docs/spec.md §10.8), and so is a command that announces the "concurrent" feature, in
rounds of requests it runs on its own threads. A TypeScript module loads with the tsx installed in its project (or
on Node.js 22.18 or newer).

options:
  --profile contract|robust  which calls sequences may make (default: robust)
  --runs N                   how many random sequences (default: 100)
  --seed N                   the random seed (default: a fresh one, printed)
  --replay TOKEN             replay exactly one counterexample, from a failed report
  --max-commands N           the longest sequence (default: 100 with few items, 250 with many)
  --shrink-calls N           how many calls shrinking a counterexample may make (default: 500000): the same
                             counterexample on any machine; when they run out, the report gives the shortest
                             found and says that it may not be minimal
  --shrink-time-ms N         a safety net: how long shrinking may take whatever calls are left (default: 120000);
                             the report says when it is what stopped shrinking
  --timeout MS               how long to wait for each reply, or in process for each call and view to settle
                             (default: 5000; the handshake may take up to 30 s or this, if longer)
  --lockstep                 send one request at a time instead of a whole run at once
  --shutdown                 with --module: the queues offer shutDown, check it too (over the protocol, the
                             implementation's "shutdown" feature decides)
  --time                     with --module: the queues have addAfter and take clock and backoff options: check
                             time too (over the protocol, the "time" feature decides)
  --json                     print the outcome as JSON instead of text
  --junit FILE               also write the outcome as JUnit XML to FILE
  --html FILE                when overlapping calls fail, also write the failure to FILE as a timeline: a
                             self-contained HTML page (no network, no script from elsewhere); the gate says when
                             it writes none. Refused for a run that makes no overlapping calls: over the
                             protocol, without the "concurrent" feature; in process, a get that answers no promise
  --version                  print the version of workqueue-spec
  -h, --help                 print this help

${exitCodeHelp}`;

/** Where the gate writes. */
export interface Io {
  /** Writes to standard output. */
  readonly out: (text: string) => void;
  /** Writes to standard error. */
  readonly err: (text: string) => void;
  /** Whether a live progress line is wanted: a terminal, and not CI. */
  readonly progress: boolean;
  /** Whether the reader asked for no escape codes (`TERM=dumb`, `NO_COLOR`): none from the implementation either. */
  readonly plain?: boolean;
}

/** A live progress line on stderr: runs done, and commands per second. */
function progressLine(io: Io, total: number): ConformanceOptions["onProgress"] {
  if (!io.progress) return undefined;
  const start = performance.now();
  let shown = 0;
  return ({ runs, commands }) => {
    const now = performance.now();
    if (now - shown < 100) return;
    shown = now;
    const rate = Math.round((commands * 1000) / Math.max(1, now - start));
    io.err(`\r  ${Math.min(runs, total)}/${total} runs · ${plural(rate, "command")}/s \u001b[K`);
  };
}

/**
 * Connects what the options name: a child process over the protocol, or a module in process.
 *
 * @throws StartError when it cannot be started or loaded; ProtocolBreach when it fails the handshake.
 */
async function open(options: GateOptions): Promise<{
  driver: Driver & { close?: () => Promise<void> };
  described: string;
  check: ConformanceOptions;
  protocol: boolean;
  /** What decides whether the run can make overlapping calls, for `--html`. */
  target: Target;
  /** A module's factory, which `checkConformance` checks, overlapping calls included (docs/spec.md §10.8). */
  factory?: SubjectFactory<unknown>;
}> {
  if (options.module !== undefined) {
    const factory = await loadFactory(options.module).catch((error: Error) =>
      Promise.reject(new StartError(error.message)),
    );
    const driver = inProcess(factory, { shutDown: options.shutDown, timeoutMs: options.timeoutMs, time: options.time });
    return {
      driver,
      described: `${options.module}, in process`,
      check: options.check,
      protocol: false,
      target: { protocol: false, factory, time: options.time },
      factory,
    };
  }
  const [command = "", ...args] = options.command;
  const driver = await connect(command, args, { timeoutMs: options.timeoutMs, pipeline: options.pipeline });
  const how = options.pipeline ? "pipelined" : "in lock step";
  const features = driver.features.length === 0 ? "" : `, features ${driver.features.join(", ")}`;
  const check = {
    ...options.check,
    shutDown: driver.features.includes("shutdown"),
    time: driver.features.includes("time"),
  };
  return {
    driver,
    described: `${driver.name} (${options.command.join(" ")}) over protocol v1, ${how}${features}`,
    protocol: true,
    target: { protocol: true, features: driver.features },
    check,
  };
}

/**
 * Runs the gate with `argv` (the arguments after the program name) and returns the exit code. It never throws: an
 * error that escapes the run, as when a writer of `io` throws, is a bug in the gate, exit code 4, said in one line.
 */
export async function main(argv: readonly string[], io: Io): Promise<number> {
  try {
    return await run(argv, io);
  } catch (error) {
    const [{ error: said }, code] = classify(error);
    const hint = code === exitCodes["usage error"] ? " (see --help)" : " — a bug in the gate: please report it";
    try {
      io.err(`workqueue-conformance: ${said?.kind}: ${oneLine(said?.message ?? "")}${hint}\n`);
    } catch {
      // the writer is what failed: the exit code still says it
    }
    return code;
  }
}

/** Runs the gate: {@link main}, but for the errors that escape it. */
async function run(argv: readonly string[], io: Io): Promise<number> {
  let options: ReturnType<typeof parseGate>;
  try {
    options = parseGate(argv);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    // Reported where the reports were asked for, when the command line says where.
    const { json, junit, target, profile } = salvage(argv);
    const usageError = { kind: "usage error", message: error.message } as const;
    const outcome = { target, profile, error: usageError, durationMs: 0, exitCode: exitCodes["usage error"] };
    return finish(outcome, { json, junit }, io);
  }
  if (options.help) {
    io.out(`${"version" in options ? version() : usage}\n`);
    return exitCodes.conforms;
  }
  const start = performance.now();
  const outcome = (result: Pick<GateOutcome, "report" | "breach" | "error">, exitCode: number): GateOutcome => ({
    target: options.module ?? options.command.join(" "),
    profile: options.check.profile,
    ...result,
    durationMs: performance.now() - start,
    exitCode,
  });
  // Before anything starts: a report that cannot be written is a usage error, not one found after the check.
  const refused = (error: UsageError) => error;
  const junit =
    options.junit === undefined ? undefined : await writeJunit(options.junit, "").then(() => undefined, refused);
  const claimed =
    junit !== undefined || options.html === undefined ? junit : await claimPage(options.html).catch(refused);
  if (claimed instanceof UsageError) {
    const error = { kind: "usage error", message: claimed.message } as const;
    return finish(
      { ...outcome({ error }, exitCodes["usage error"]), durationMs: 0 },
      { json: options.json, junit: junit === undefined ? options.junit : undefined },
      io,
    );
  }
  let opened: Awaited<ReturnType<typeof open>> | undefined;
  let result: GateOutcome;
  try {
    checkReplayFirst(options);
    opened = await open(options);
    if (claimed !== undefined) await refuseNothingToDraw(claimed, opened.target);
    const checked = {
      ...opened.check,
      timeoutMs: options.timeoutMs,
      onProgress: progressLine(io, options.check.runs),
    };
    if (checked.replay !== undefined)
      checkReplay(checked.replay, replayOptionsOf(checked), replayNames(opened.protocol));
    const report =
      opened.factory === undefined
        ? await checkDriver(opened.driver, checked)
        : await checkConformance(opened.factory, checked);
    result = outcome({ report }, exitCodes[report.verdict]);
  } catch (error) {
    result = outcome(...classify(error));
  } finally {
    if (io.progress) io.err("\r\u001b[K");
    await opened?.driver.close?.();
  }
  if (!options.json && opened !== undefined) io.out(`workqueue-conformance: ${opened.described}\n`);
  const replay = (token: string) => replayCommand(options, token);
  const code = await finish(result, { ...options, replay }, io, opened?.protocol === true);
  const said = claimed === undefined ? undefined : await writePage(result, claimed, replay);
  if (said !== undefined) (options.json ? io.err : io.out)(`  ${said}\n`);
  return code;
}

/** {@link failureOf} as the gate's outcome: a breach keeps its error, for its kind and stderr tail. */
function classify(error: unknown): [Pick<GateOutcome, "breach" | "error">, number] {
  const failure = failureOf(error);
  if (failure.kind === "broke the protocol") return [{ breach: error as ProtocolBreach }, failure.code];
  return [{ error: { kind: failure.kind, message: failure.message } }, failure.code];
}

/** The version of workqueue-spec, from its package.json (found upwards from this file, built or not). */
function version(): string {
  for (let dir = new URL(".", import.meta.url); dir.pathname !== "/"; dir = new URL("..", dir)) {
    try {
      const manifest = JSON.parse(readFileSync(new URL("package.json", dir), "utf8")) as {
        name?: string;
        version?: string;
      };
      if (manifest.name === "workqueue-spec") return `workqueue-spec ${manifest.version}`;
    } catch {
      // no package.json here: look further up
    }
  }
  return "workqueue-spec (version unknown)";
}

/**
 * Writes the JUnit report to `path`.
 *
 * @throws UsageError when it cannot: the path is the user's to fix.
 */
function writeJunit(path: string, text: string): Promise<void> {
  return writeFile(path, text).catch((error: Error) => {
    throw new UsageError(`--junit: cannot write the report: ${oneLine(error.message)}`);
  });
}

/** Where the outcome goes, and how a replay is worded. */
interface Output {
  /** `--json`: print the outcome as JSON instead of text. */
  readonly json: boolean;
  /** `--junit FILE`. */
  readonly junit: string | undefined;
  /** The command that replays a token; a check that ran has one. */
  readonly replay?: (token: string) => string;
}

/** Prints the outcome in the chosen format, writes the JUnit file if asked, and returns the exit code. */
async function finish(outcome: GateOutcome, options: Output, io: Io, protocol = false): Promise<number> {
  const { report, breach, error } = outcome;
  // A run of concurrent rounds is no sequence of requests and replies: its rounds are in the detail.
  const found = report?.counterexample;
  const lines = protocol && found !== undefined && found.overlapping === undefined ? protocolLines(found) : undefined;
  if (options.junit !== undefined) await writeJunit(options.junit, toJunit(outcome));
  if (options.json) {
    io.out(`${JSON.stringify(toJson(outcome, lines), null, 2)}\n`);
    return outcome.exitCode;
  }
  if (error !== undefined) {
    const hint = error.kind === "usage error" ? " (see --help)" : " — a bug in the gate: please report it";
    io.err(`workqueue-conformance: ${error.kind}: ${oneLine(error.message)}${hint}\n`);
  } else if (breach !== undefined) {
    const stderr = io.plain === true ? withoutEscapes(breach.stderrTail) : breach.stderrTail;
    const tail = stderr === "" ? "" : `\n  its stderr ended with:\n${stderr.replace(/^/gm, "    ")}`;
    io.out(`✗ the implementation broke the protocol (${breach.kind}): ${breach.message}${tail}\n`);
  } else if (report !== undefined) {
    io.out(`${formatReport(report, options.replay ?? ((token) => token))}\n`);
    if (lines !== undefined) {
      io.out(`  as protocol v1 requests, to paste into a unit test of the implementation:\n`);
      io.out(`${lines.map((line) => `    ${line}`).join("\n")}\n`);
    }
    const seconds = outcome.durationMs / 1000;
    const rate = plural(Math.round(report.commands / seconds), "command");
    io.out(`  ${plural(report.commands, "command")} in ${seconds.toFixed(1)} s (${rate}/s)\n`);
  }
  return outcome.exitCode;
}
