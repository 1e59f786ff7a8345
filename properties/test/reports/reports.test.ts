/**
 * The gate tells the truth in every format: each outcome has its documented exit code and one-line message, the
 * JSON report matches its schema, the JUnit report validates against the JUnit XML schema whatever bytes the
 * implementation printed, and a printed replay works when pasted. `main` runs in this process; the
 * implementations are child processes or modules (`npm test` builds `dist/` first).
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Ajv } from "ajv";
import { describe, expect, test } from "vitest";
import { validateXML } from "xmllint-wasm";
import { main } from "../../cli/gate.js";
import { toJson } from "../../report/json.js";
import type { GateOutcome } from "../../report/outcome.js";
import { formatReport } from "../../report/text.js";
import type { ConformanceReport } from "../../sequential/report.js";

const root = new URL("../../../", import.meta.url).pathname;
const scratch = mkdtempSync(join(tmpdir(), "workqueue-reports-"));
const fixture = (name: string) => join(root, "properties/test/fixtures", name);
const serve = (name: string) => [
  "--",
  "node",
  join(root, "dist/properties/protocol/serve-module.js"),
  join(root, "properties/test/wrong/all.mjs"),
  name,
];
const broken = (mode: string) => ["--", "node", fixture("broken.mjs"), mode];
const schema = JSON.parse(readFileSync(join(root, "properties/report/report.schema.json"), "utf8"));
const validateJson = new Ajv({ allErrors: true, strict: false }).compile(schema);
const xsd = readFileSync(fixture("junit.xsd"), "utf8");

/** Runs the gate with `argv` and captures its exit code and output. */
async function gate(...argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(argv, { out: (t) => out.push(t), err: (t) => err.push(t), progress: false });
  return { code, out: out.join(""), err: err.join("") };
}

/** Runs the gate with `--json` and `--junit`, and checks both reports against their schemas. */
async function reported(...argv: string[]) {
  const file = join(scratch, `report-${Math.random().toString(36).slice(2)}.xml`);
  const { code, out } = await gate("--json", "--junit", file, ...argv);
  const json = JSON.parse(out);
  expect(validateJson(json), JSON.stringify(validateJson.errors)).toBe(true);
  const xml = readFileSync(file, "utf8");
  const { valid, errors } = await validateXML({ xml: [{ fileName: "report.xml", contents: xml }], schema: [xsd] });
  expect(valid, errors.map((e) => e.rawMessage).join("\n")).toBe(true);
  expect(json.exitCode).toBe(code);
  return { code, json, xml };
}

describe("each outcome has its exit code, and both reports are written and valid", () => {
  test("conforms: exit 0", async () => {
    const { code, json, xml } = await reported(
      "--runs",
      "20",
      "--",
      "python3",
      join(root, "examples/python/workqueue.py"),
    );
    expect([code, json.verdict, json.formatVersion]).toEqual([0, "conforms", 3]);
    expect(xml).toContain('name="robust profile conforms to docs/spec.md"');
  });

  test("does not conform: exit 1, with consistent counts and the counterexample as protocol lines", async () => {
    const { code, json, xml } = await reported("--profile", "contract", "--runs", "300", ...serve("lostDirtyMark"));
    expect([code, json.verdict]).toEqual([1, "does not conform"]);
    expect(json.runs).toBeLessThanOrEqual(300);
    expect(json.commands).toBeGreaterThanOrEqual(json.counterexample.steps.length);
    expect(json.counterexample.protocolLines[0]).toMatch(/^→ \{"op":"new","maxRetries":\d+\}$/);
    expect(json.counterexample.protocolLines).toContainEqual(
      expect.stringMatching(/^→ \{"op":"done","item":"[^"]*"\}$/),
    );
    expect(xml).toContain('<failure type="§10.3"');
  });

  test("--shrink-calls and --shrink-time-ms set the shrinking budget and its safety net, which the JSON report gives with the time taken; JUnit names the items", async () => {
    const { json, xml } = await reported(
      "--profile",
      "contract",
      "--runs",
      "300",
      "--shrink-calls",
      "400000",
      "--shrink-time-ms",
      "60000",
      ...serve("lostDirtyMark"),
    );
    expect(json.counterexample).toMatchObject({ shrinkCalls: 400_000, shrinkTimeMs: 60_000, minimal: true });
    expect(json.counterexample).not.toHaveProperty("stoppedBy");
    expect(json.counterexample.shrinkCommands).toBeLessThanOrEqual(400_000);
    expect(json.counterexample.shrinkMs).toBeLessThanOrEqual(60_000);
    expect(xml).toContain('<property name="items" value="protocol v1 strings"/>');
    const bad = await gate("--shrink-time-ms", "0", "--", "no-such-command-here");
    expect([bad.code, bad.err.trim()]).toEqual([
      2,
      "workqueue-conformance: usage error: --shrink-time-ms must be a positive integer, got `0` (see --help)",
    ]);
    const calls = await gate("--shrink-calls", "-5", "--", "no-such-command-here");
    expect([calls.code, calls.err.trim()]).toEqual([
      2,
      "workqueue-conformance: usage error: --shrink-calls must be a positive integer, got `-5` (see --help)",
    ]);
  });

  test("a shrinking budget of calls that runs out: the JSON report says stoppedBy calls and minimal false", async () => {
    const { json } = await reported(
      "--profile",
      "contract",
      "--runs",
      "300",
      "--shrink-calls",
      "1",
      ...serve("lostDirtyMark"),
    );
    expect(json.counterexample).toMatchObject({ shrinkCalls: 1, minimal: false, stoppedBy: "calls" });
  });

  test("does not conform under overlapping calls: exit 1, and the JSON report holds the calls round by round", async () => {
    const { code, json, xml } = await reported("--runs", "100", "--module", fixture("add-answers-early.mjs"));
    expect([code, json.verdict, json.counterexample.invariant.rule]).toEqual([1, "does not conform", "§10.8"]);
    expect(json.counterexample.steps).toEqual([]);
    expect(json.counterexample.overlapping.length).toBeGreaterThanOrEqual(2);
    expect(json.counterexample.overlapping[0]).toMatchObject({ round: 1, afterPrevious: false });
    const rounds = json.counterexample.overlapping.map((call: { round: number }) => call.round);
    expect(rounds).toContain(json.counterexample.round); // the round no order explains, named
    expect(xml).toContain('<failure type="§10.8"');
  });

  test("a crash whose stderr holds ANSI colour codes and XML specials: exit 3, and the JUnit XML stays valid", async () => {
    const { code, json, xml } = await reported("--runs", "20", ...broken("colour"));
    expect([code, json.verdict, json.breach.kind]).toEqual([3, "broke the protocol", "crashed"]);
    expect(json.breach.stderrTail).toContain("\u001b[31m");
    expect(xml).toContain("\\u001b[31mTraceback");
    expect(xml).toContain("&lt;&quot;a&quot; &amp; &apos;b&apos;&gt;");
    expect(xml).toContain('name="robust profile conforms to docs/spec.md"');
  });

  test.each([
    ["TERM=dumb", { TERM: "dumb" }],
    ["NO_COLOR", { NO_COLOR: "1", TERM: "xterm-256color" }],
  ])("with %s, the stderr tail the gate prints holds no escape codes", (_, env) => {
    const bin = join(root, "dist/properties/cli/bin.js");
    const run = (plain: Record<string, string>) => {
      const { NO_COLOR, TERM, ...rest } = process.env;
      const options = { encoding: "utf8", env: { ...rest, ...plain } } as const;
      return spawnSync("node", [bin, "--runs", "20", ...broken("colour")], options);
    };
    const coloured = run({ TERM: "xterm-256color" });
    expect([coloured.status, coloured.stdout]).toEqual([3, expect.stringContaining("\u001b[31mTraceback")]);
    const plain = run(env);
    expect([plain.status, plain.stdout]).toEqual([
      3,
      expect.stringContaining("    Traceback (most recent call last):\n"),
    ]);
    expect(plain.stdout).toContain("KeyError: <\"a\" & 'b'>");
    expect(`${plain.stdout}${plain.stderr}`).not.toContain("\u001b");
  });

  test("a replay token that is not one: exit 2, one line, and the reports say usage error", async () => {
    // Read before anything starts: the command is never run.
    const { code, err } = await gate("--replay=abc", "--", "no-such-command-here");
    expect(code).toBe(2);
    expect(err.trim().split("\n")).toEqual([
      expect.stringMatching(
        /^workqueue-conformance: usage error: --replay: Expected `replay` .*not a replay token \(see --help\)$/,
      ),
    ]);
    const first = await gate("--profile", "contract", "--runs", "300", "--module", fixture("lost-dirty-mark.mjs"));
    const token = /--replay=(\S+)/.exec(first.out)?.[1] ?? "";
    const { json } = await reported("--replay", token, "--module", fixture("lost-dirty-mark.mjs"));
    expect([json.verdict, json.exitCode, json.error.kind]).toEqual(["usage error", 2, "usage error"]);
    expect(json.error.message).toBe(
      "--replay: the token was made with --profile contract, but this run has --profile robust: give the options that made it",
    );
  });

  test.each([
    [["--profile", "fast", "--module", "m.mjs"], "--profile must be contract or robust, got `fast`", undefined],
    [
      ["--bogus", "--profile", "contract", "--module", "m.mjs"],
      /^unknown option `--bogus`; the options are --profile, --runs, .*, --module, --version$/,
      "contract",
    ],
    [["--runs", "0", "--", "cmd"], "--runs must be a positive integer, got `0`", "robust"],
    [
      ["--profile", "contract"],
      "give either `-- <command> [args…]` or `--module <file>`, not both and not neither",
      "contract",
    ],
  ])(
    "a command line the gate cannot run, %j: exit 2, and the reports say usage error",
    async (argv, message, profile) => {
      const { code, json, xml } = await reported(...argv);
      expect([code, json.verdict, json.error, json.profile]).toEqual([
        2,
        "usage error",
        { kind: "usage error", message: typeof message === "string" ? message : expect.stringMatching(message) },
        profile,
      ]);
      expect(xml).toContain('<error type="usage error" message="');
    },
  );

  test("a module whose default export is a class: exit 2, naming the class", async () => {
    const { code, err } = await gate("--module", fixture("class-default.mjs"));
    expect(code).toBe(2);
    expect(err).toContain("got a class: export `(options) => new Queue(options)` instead");
  });

  test("a factory that throws: exit 3, naming the factory", async () => {
    const { code, json } = await reported("--module", fixture("factory-throws.mjs"));
    expect([code, json.breach.kind, json.breach.message]).toEqual([
      3,
      "threw",
      "the factory threw Error: cannot reach the database",
    ]);
  });

  test.each([
    ["revoked-proxy.mjs", /^the factory answered a value that threw TypeError: .*revoked when its `then` was read$/],
    ["revoked-view.mjs", /^size after [a-z]+\(.*\) threw TypeError: .*revoked$/],
  ])("a queue that throws when read (%s, a revoked Proxy): exit 3, saying what threw", async (module, message) => {
    const { code, json } = await reported("--runs", "5", "--module", fixture(module));
    expect([code, json.breach.kind, json.breach.message]).toEqual([3, "threw", expect.stringMatching(message)]);
  });

  test("a bug in the gate during the check, here a writer of its progress line that throws: exit 4, and the JSON report says so", async () => {
    const out: string[] = [];
    const err = (text: string) => {
      if (text.includes(" runs · ")) throw new Error("the progress line cannot be written");
    };
    const argv = ["--json", "--runs", "5", "--module", fixture("reference.mjs")];
    const code = await main(argv, { out: (t) => out.push(t), err, progress: true });
    const json = JSON.parse(out.join(""));
    expect(validateJson(json), JSON.stringify(validateJson.errors)).toBe(true);
    expect([code, json.verdict, json.error]).toEqual([
      4,
      "internal error",
      { kind: "internal error", message: "Error: the progress line cannot be written" },
    ]);
  });

  test("a bug in the gate that escapes the run, here writers that always throw: exit 4, never a raw error", async () => {
    const throws = () => {
      throw new Error("the output is closed");
    };
    const argv = ["--runs", "5", "--module", fixture("reference.mjs")];
    await expect(main(argv, { out: throws, err: throws, progress: false })).resolves.toBe(4);
  });

  test("a --junit file that cannot be written: exit 2 before anything starts, one line naming it", async () => {
    const file = join(scratch, "no-such-folder", "report.xml");
    const { code, out, err } = await gate("--junit", file, "--module", fixture("reference.mjs"));
    expect([code, out, err]).toEqual([
      2,
      "",
      `workqueue-conformance: usage error: --junit: cannot write the report: ENOENT: no such file or directory, open '${file}' (see --help)\n`,
    ]);
  });

  test("an in-process call that never settles: exit 3 once --timeout passes, with the reports written", async () => {
    const { code, json } = await reported(
      "--timeout",
      "100",
      "--profile",
      "contract",
      "--module",
      fixture("never-settles.mjs"),
    );
    expect([code, json.breach.kind]).toEqual([3, "timed out"]);
    expect(json.breach.message).toMatch(/^get\(\) did not settle within 100 ms$/);
  });

  test("--version prints the version and exits 0", async () => {
    const { code, out } = await gate("--version");
    const { version } = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
    expect([code, out]).toEqual([0, `workqueue-spec ${version}\n`]);
  });
});

test("Infinity is spelled out in the JSON report, never null", () => {
  const outcome = {
    target: "t",
    profile: "robust",
    durationMs: 1,
    exitCode: 1,
    report: {
      verdict: "does not conform",
      profile: "robust",
      runs: 1,
      commands: 1,
      invariants: [],
      seed: 1,
      items: "strings",
      unchecked: [],
      counterexample: { maxRetries: Number.POSITIVE_INFINITY, steps: [], invariant: { name: "n", rule: "§1" } },
    },
  } as unknown as GateOutcome;
  expect(JSON.stringify(toJson(outcome))).toContain('"maxRetries":"Infinity"');
});

describe("a printed replay works when pasted", () => {
  /**
   * The arguments of the printed replay command, as a shell splits them (the command quotes what needs it), after
   * `npx workqueue-conformance`.
   */
  const pasted = (out: string) => {
    const line = /replay: (npx workqueue-conformance .*)$/m.exec(out)?.[1] ?? "";
    return [...line.matchAll(/'([^']*)'|(\S+)/g)].map(([, quoted, plain]) => quoted ?? plain ?? "").slice(2);
  };
  const counterexample = (out: string) => /does not conform[\s\S]*?✗ [^\n]*\n(?= {2}found)/.exec(out)?.[0];

  test.each([
    [
      "over the protocol, with --max-commands",
      ["--profile", "contract", "--max-commands", "12", "--runs", "300", ...serve("lostDirtyMark")],
    ],
    [
      "in process, with --shutdown",
      [
        "--shutdown",
        "--runs",
        "300",
        "--module",
        join(root, "properties/test/fixtures/shut-down-only-sets-a-flag.mjs"),
      ],
    ],
  ])("%s: the same counterexample, exit 1", async (_, argv) => {
    const first = await gate(...argv);
    expect(first.code).toBe(1);
    const again = await gate(...pasted(first.out));
    expect([again.code, counterexample(again.out)]).toEqual([1, counterexample(first.out)]);
    expect(counterexample(first.out)).toBeDefined();
  });
});

describe("a replay token made under other options is a usage error naming the option, before anything starts", () => {
  // Made in process with --shutdown and --max-commands 12; the targets below do not exist, so a check that started
  // anything would fail otherwise.
  const made = gate(
    ...["--profile", "contract", "--max-commands", "12", "--shutdown", "--runs", "300"],
    ...["--module", fixture("shut-down-only-sets-a-flag.mjs")],
  ).then(({ out }) => /--replay=(\S+)/.exec(out)?.[1] ?? "");
  const missing = ["--module", "no/such/module.mjs"];

  test.each([
    [["--max-commands", "12", "--shutdown", ...missing], "--profile contract, but this run has --profile robust"],
    [["--profile", "contract", "--shutdown", ...missing], "--max-commands 12, but this run has no --max-commands"],
    [["--profile", "contract", "--max-commands", "12", ...missing], "--shutdown, but this run has no --shutdown"],
    [
      ["--profile", "contract", "--max-commands", "12", "--", "no-such-command-here"],
      "--module (items: any values), but this run has -- <command> (items: protocol v1 strings)",
    ],
  ])("workqueue-conformance %j: exit 2, one line", async (argv, differs) => {
    const { code, out, err } = await gate(`--replay=${await made}`, ...argv);
    expect([code, out, err]).toEqual([
      2,
      "",
      `workqueue-conformance: usage error: --replay: the token was made with ${differs}: give the options that made it (see --help)\n`,
    ]);
  });

  test("over the protocol, the implementation's features are compared once it has announced them", async () => {
    const first = await gate("--profile", "contract", "--runs", "300", ...serve("lostDirtyMark"));
    const token = /--replay=(\S+)/.exec(first.out)?.[1] ?? "";
    const python = ["--", "python3", join(root, "examples/python/workqueue.py")];
    const { code, err } = await gate("--profile", "contract", `--replay=${token}`, ...python);
    expect([code, err]).toEqual([
      2,
      'workqueue-conformance: usage error: --replay: the token was made with no "shutdown" feature, but this run has the "shutdown" feature: give the options that made it (see --help)\n',
    ]);
  });

  test("npm start: a token that decodes but leads to no run of the check ends in one line and exit 4, not a stack and exit 1", () => {
    // Every field valid, but a path to run 70,000 of a check that makes 500, and no commands to replay.
    const fields = [3, "contract", true, null, "all", "any values", false, false, 1, "70000:3", "", 1, true];
    const token = `wq3.${Buffer.from(JSON.stringify(fields)).toString("base64url")}`;
    const start = join(root, "dist/properties/cli/start.js");
    const { status, stderr } = spawnSync("node", [start, `--replay=${token}`], { encoding: "utf8" });
    expect(status).toBe(4);
    expect(stderr).toMatch(/^npm start: internal error: [^\n]+\n$/);
  });

  test("npm start: exit 2, one line, and nothing checked", async () => {
    const start = join(root, "dist/properties/cli/start.js");
    const { status, stdout, stderr } = spawnSync("node", [start, `--replay=${await made}`], { encoding: "utf8" });
    expect([status, stdout, stderr]).toEqual([
      2,
      "",
      "npm start: --replay: the token was made with --max-commands 12, but this run has no --max-commands: give the options that made it (see --help)\n",
    ]);
  });
});

test("a counterexample's first line and its JSON carry the backoff its queue was made with", () => {
  const counterexample = {
    invariant: { name: "n", rule: "§18.2" },
    detail: "d",
    maxRetries: 2,
    backoff: { baseMs: 2, maxMs: 4.5 },
    steps: [],
    shrinks: 0,
    minimal: true,
    shrinkMs: 0,
    replay: "t",
  };
  const report = { verdict: "does not conform", profile: "robust", runs: 1, commands: 1, invariants: [], seed: 1 };
  const full = { ...report, items: "strings", unchecked: [], counterexample } as unknown as ConformanceReport;
  expect(formatReport(full, (t) => t).split("\n")[1]).toBe(
    "    new WorkQueue({ maxRetries: 2, backoff: { baseMs: 2, maxMs: 4.5 } })",
  );
  const outcome = { target: "t", profile: "robust", durationMs: 1, exitCode: 1, report: full } as GateOutcome;
  expect(toJson(outcome)).toMatchObject({ counterexample: { backoff: { baseMs: 2, maxMs: 4.5 } } });
});
