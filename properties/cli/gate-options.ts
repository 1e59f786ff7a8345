/**
 * The gate's command line: its options read and checked ({@link parseGate}), read leniently to report a usage error
 * ({@link salvage}), what they decide of the check, and the replay: a token checked against them before anything
 * starts, and the command that replays a counterexample with every option that decided the run.
 */
import { parseArgs } from "node:util";
import { defaultProfile } from "../core/commands.js";
import { defaultRuns, defaultTimeoutMs } from "../core/options.js";
import type { ReplayOptionNames } from "../core/replay.js";
import { anyItems, stringItems } from "../core/universes.js";
import { type ConformanceOptions, replayOptionsOf } from "../sequential/options.js";
import { checkArguments, checkOptions, checkReplay, parse, positive, sharedReplayNames, UsageError } from "./args.js";

/** The gate's options, as `parseArgs` declares them. */
const gateOptions = {
  ...checkOptions,
  timeout: { type: "string" },
  lockstep: { type: "boolean" },
  shutdown: { type: "boolean" },
  time: { type: "boolean" },
  json: { type: "boolean" },
  junit: { type: "string" },
  html: { type: "string" },
  module: { type: "string" },
  version: { type: "boolean" },
} as const;

/**
 * Reads the command line once into a finished request: every default filled (the library's own), the `--replay`
 * token read, and the check's options as the target decides them ({@link planned}); nothing reads the command
 * line again.
 *
 * @throws UsageError when it is not one the gate can run.
 */
export function parseGate(argv: readonly string[]) {
  const split = argv.indexOf("--");
  const { values, positionals } = parse(split < 0 ? argv : argv.slice(0, split), gateOptions, true);
  const command = split < 0 ? [] : argv.slice(split + 1);
  if (values.help) return { help: true as const };
  if (values.version) return { help: true as const, version: true };
  if (positionals.length > 0) throw new UsageError(`unexpected \`${positionals[0]}\`: put the command after \`--\``);
  if (command.length > 0 === (values.module !== undefined)) {
    throw new UsageError("give either `-- <command> [args…]` or `--module <file>`, not both and not neither");
  }
  const { replayed: _, ...check } = checkArguments(values, defaultRuns);
  const shutDown = values.shutdown ?? false;
  const time = values.time ?? false;
  return {
    help: false as const,
    command,
    module: values.module,
    json: values.json ?? false,
    junit: values.junit,
    html: values.html,
    pipeline: !(values.lockstep ?? false),
    shutDown,
    time,
    timeoutMs: positive("timeout", values.timeout) ?? defaultTimeoutMs,
    check: planned(values.module, { ...check, profile: check.profile ?? defaultProfile }, shutDown, time),
  };
}

/**
 * What a command line that is not one the gate can run still says, read leniently, so that its usage error is
 * reported where the reports were asked for: `--json`, `--junit FILE`, the target and the profile (none when
 * `--profile` names none).
 */
export function salvage(argv: readonly string[]) {
  const split = argv.indexOf("--");
  const { values } = parseArgs({
    args: [...(split < 0 ? argv : argv.slice(0, split))],
    options: gateOptions,
    strict: false,
    allowPositionals: true,
  });
  const text = (value: unknown) => (typeof value === "string" ? value : undefined);
  const profile = text(values.profile);
  return {
    json: values.json === true,
    junit: text(values.junit),
    target: text(values.module) ?? (split < 0 ? "" : argv.slice(split + 1).join(" ")),
    profile:
      profile === undefined ? defaultProfile : profile === "contract" || profile === "robust" ? profile : undefined,
  };
}

/** The parsed options of a run of the gate. */
export type GateOptions = Exclude<ReturnType<typeof parseGate>, { help: true }>;

/** Over the wire, items are JSON strings and maxRetries a JSON integer. */
const protocolItems = { ...stringItems, name: "protocol v1 strings", invalid: [] };

/**
 * What the options decide of the check before anything is started; over the protocol, shutdown and time follow the
 * features the implementation announces.
 */
function planned<C extends ConformanceOptions>(module: string | undefined, check: C, shutDown: boolean, time: boolean) {
  return module === undefined
    ? { ...check, items: protocolItems, finiteMaxRetries: true }
    : { ...check, shutDown, time, items: anyItems };
}

/** How the gate names the options a replay token carries, over the protocol or in process. */
export function replayNames(protocol: boolean): ReplayOptionNames {
  const feature = (name: string) => (on: boolean) => (on ? `the "${name}" feature` : `no "${name}" feature`);
  const flag = (name: string) => (on: boolean) => (on ? `--${name}` : `no --${name}`);
  return {
    ...sharedReplayNames,
    shutDown: protocol ? feature("shutdown") : flag("shutdown"),
    time: protocol ? feature("time") : flag("time"),
    items: (items) => `${items === protocolItems.name ? "-- <command>" : "--module"} (items: ${items})`,
    finiteMaxRetries: (finite) => (finite ? "-- <command> (finite maxRetries)" : "--module (any maxRetries)"),
  };
}

/** Refuses a `--replay` token made under other options, before anything is started. */
export function checkReplayFirst(options: GateOptions): void {
  if (options.check.replay === undefined) return;
  const { shutDown, time, ...decided } = replayOptionsOf(options.check);
  const known = options.module === undefined ? decided : { ...decided, shutDown, time };
  checkReplay(options.check.replay, known, replayNames(options.module === undefined));
}

/**
 * The command that replays `token`, with every option that decides the run; `--replay=` so that nothing in the
 * token is read as an option; `npx` in front, so that it runs as pasted in a project that installed the package,
 * where the bin is not on the PATH.
 */
export function replayCommand(options: GateOptions, token: string): string {
  const words = ["npx", "workqueue-conformance", "--profile", options.check.profile];
  if (options.check.maxCommands !== undefined) words.push("--max-commands", String(options.check.maxCommands));
  if (options.module !== undefined && options.shutDown) words.push("--shutdown");
  if (options.module !== undefined && options.time) words.push("--time");
  if (!options.pipeline) words.push("--lockstep");
  if (options.timeoutMs !== defaultTimeoutMs) words.push("--timeout", String(options.timeoutMs));
  words.push(`--replay=${token}`);
  const target = options.module === undefined ? ["--", ...options.command] : ["--module", options.module];
  return [...words, ...target.map(quote)].join(" ");
}

/** A word as a POSIX shell reads it: as it is when it is safe, else in single quotes. */
function quote(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", "'\\''")}'`;
}
