/**
 * The gate over protocol v1, end to end: `workqueue-conformance` (its `main`, in this process) against child
 * processes — the Python example, wrong queues served over the wire, and implementations that break the protocol.
 * The wrong queues are served by the built `dist/properties/protocol/serve-module.js` (`npm test` builds first).
 */
import { execFile, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable, Writable } from "node:stream";
import { promisify } from "node:util";
import { XMLParser } from "fast-xml-parser";
import { describe, expect, test } from "vitest";
import { WorkQueue } from "../../../src/index.js";
import { main } from "../../cli/gate.js";
import { serve as serveQueue } from "../../protocol/serve.js";

const root = new URL("../../../", import.meta.url).pathname;
const python = ["python3", join(root, "examples/python/workqueue.py")];
const serve = (name: string) => [
  "node",
  join(root, "dist/properties/protocol/serve-module.js"),
  join(root, "properties/test/wrong/all.mjs"),
  name,
];
const broken = (mode: string, pidFile?: string) => [
  "node",
  join(root, "properties/test/fixtures/broken.mjs"),
  mode,
  ...(pidFile === undefined ? [] : [pidFile]),
];
const scratch = mkdtempSync(join(tmpdir(), "workqueue-conformance-"));

/** Runs the gate with `argv` and captures its exit code and output. */
async function gate(...argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(argv, { out: (t) => out.push(t), err: (t) => err.push(t), progress: false });
  return { code, out: out.join(""), err: err.join("") };
}

/** Whether a process with `pid` still exists. */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe("an implementation that conforms", () => {
  test("the Python example conforms over the protocol, pipelined, and the gate exits 0", async () => {
    const { code, out } = await gate("--runs", "100", "--", ...python);
    expect(out).toContain("python-workqueue");
    expect(out).toMatch(/✓ robust profile conforms: 100 runs/);
    // It shows every view protocol v1 carries (len, shuttingDown, waiting); the others it could not have shown.
    expect(out).not.toContain("checked without");
    expect(code).toBe(0);
  });

  test("the Python example conforms in lock step and in the contract profile", async () => {
    const { code, out } = await gate("--lockstep", "--profile", "contract", "--runs", "30", "--", ...python);
    expect(out).toContain("in lock step");
    expect(code).toBe(0);
  });

  test("the reference queue served over the protocol by serve-module conforms", async () => {
    const reference = [
      "node",
      join(root, "dist/properties/protocol/serve-module.js"),
      join(root, "properties/test/fixtures/reference.mjs"),
    ];
    const { code } = await gate("--runs", "50", "--", ...reference);
    expect(code).toBe(0);
  });

  test("a module is checked in process with --module", async () => {
    const { code, out } = await gate("--runs", "50", "--module", join(root, "properties/test/fixtures/reference.mjs"));
    expect(out).toContain("in process");
    expect(code).toBe(0);
  });
});

describe("a wrong implementation over the protocol", () => {
  test.each([
    ["lifo", "items are handed out in the order they were queued"],
    ["lostDirtyMark", "every add while in flight leads to exactly one later dispatch after done"],
    ["offByOneGiveUp", "retry gives up exactly when the failure count reaches maxRetries"],
    ["ringBufferBreaksOnGrow", "nothing queued is lost: get hands out an item whenever one is queued"],
    ["plainObjectStates", "nothing queued is lost: get hands out an item whenever one is queued"],
  ])("%s is rejected with exit code 1 and a counterexample", async (name, invariant) => {
    const { code, out } = await gate("--profile", "contract", "--runs", "300", "--", ...serve(name));
    expect(out).toContain(`does not conform: ${invariant}`);
    expect(out).toMatch(/\n +1\. /);
    expect(out).toMatch(/replay: npx workqueue-conformance --profile contract --replay=wq3\.[\w-]+ -- node /);
    expect(code).toBe(1);
  });

  test("a queue that announces shutdown is sent shutdown and shuttingDown, and rejected when it ignores shutdown", async () => {
    const { code, out } = await gate("--runs", "300", "--", ...serve("shutDownOnlySetsAFlag"));
    expect(out).toContain("features len, shutdown");
    expect(out).toContain("does not conform: while shutting down, add and retry request nothing");
    // The queue's first line is the protocol's `new` request, with the check's option that drew the shutdown.
    expect(out).toMatch(/\n {4}new \{"maxRetries":\d+\} {3}\/\/ shutDown: true\n/);
    expect(out).toContain("shutDown()");
    expect(code).toBe(1);
  });

  test("--json prints the outcome as JSON, with the counterexample's steps", async () => {
    const { code, out } = await gate("--json", "--profile", "contract", "--runs", "300", "--", ...serve("lifo"));
    const outcome = JSON.parse(out);
    expect(outcome).toMatchObject({ verdict: "does not conform", exitCode: 1, profile: "contract" });
    expect(outcome.counterexample.invariant.name).toBe("items are handed out in the order they were queued");
    expect(outcome.counterexample.steps.at(-1)).toMatchObject({ call: "get()", actual: { kind: "value" } });
    expect(code).toBe(1);
  });

  test("--junit writes a JUnit report that a parser reads as one failed test case", async () => {
    const file = join(scratch, "lifo.xml");
    const { code } = await gate("--junit", file, "--profile", "contract", "--runs", "300", "--", ...serve("lifo"));
    const xml = new XMLParser({ ignoreAttributes: false }).parse(readFileSync(file, "utf8"));
    const suite = xml.testsuites.testsuite;
    expect(suite["@_tests"]).toBe("1");
    expect(suite["@_failures"]).toBe("1");
    expect(suite.testcase.failure["@_message"]).toBe("items are handed out in the order they were queued");
    expect(suite.testcase.failure["#text"]).toContain("get() →");
    expect(code).toBe(1);
  });
});

describe("the metrics feature", () => {
  const metrics = (mode: string) => ["python3", join(root, "properties/test/fixtures/python-metrics.py"), mode];

  test.each([
    ["counts-queued-adds", "the metric adds is", "§19.2 makes it"],
    ["dirty-done-unobserved", "the metric workDuration.count is", "§19.4 makes it"],
  ])("a Python queue whose metrics are wrong (%s) is rejected under the metrics rule", async (mode, metric, rule) => {
    const { code, out } = await gate("--runs", "100", "--", ...metrics(mode));
    expect(out).toContain("features len, shutdown, time, metrics");
    expect(out).toContain("does not conform: the metrics equal the model's");
    expect(out).toContain(metric);
    expect(out).toContain(rule);
    expect(out).toContain('→ {"op":"metrics"}');
    expect(code).toBe(1);
  });

  test("a timed implementation that does not announce metrics is reported as checked without them", async () => {
    const { code, out } = await gate("--runs", "20", "--", ...metrics("without-metrics"));
    expect(out).toContain("checked without metrics: skipped the metrics after every call (§19)");
    // Nor does it announce concurrent: it is given no rounds of requests with ids.
    expect(out).not.toContain("overlapping calls");
    expect(code).toBe(0);
  });

  test("metrics announced without time are not asked for, and not listed as checked without", async () => {
    // Its metrics reply is malformed: asked for once, it would be a breach (exit code 3).
    const { code, out } = await gate("--runs", "20", "--", ...metrics("untimed-metrics"));
    expect(out).not.toContain("checked without");
    expect(code).toBe(0);
  });
});

describe("an implementation that breaks the protocol", () => {
  test.each([
    ["crash", "crashed", "exited with code 1"],
    ["early", "exited early", "exited with code 0"],
    ["garbage", "malformed reply", "is not JSON"],
    ["malformed", "malformed reply", '/ok must be equal to constant; got {"ok":"yes"}'],
    ["chatty", "unasked output", "printed a line nobody asked for"],
    ["lenient", "malformed reply", 'must be answered with {"ok":false'],
    ["refuse", "refused", "no queues today"],
  ])("%s: the gate exits 3 and says why (%s)", async (mode, kind, why) => {
    const { code, out } = await gate("--runs", "20", "--", ...broken(mode));
    expect(out).toContain(`broke the protocol (${kind})`);
    expect(out).toContain(why);
    expect(code).toBe(3);
  });

  test("a crash is reported with the tail of the implementation's stderr", async () => {
    const { out } = await gate("--runs", "20", "--", ...broken("crash"));
    expect(out).toContain("its stderr ended with:");
    expect(out).toContain('KeyError: "a"');
  });

  test("a hung implementation times out, exits 3, and is killed and reaped", async () => {
    const pidFile = join(scratch, "hang.pid");
    const { code, out } = await gate("--timeout", "300", "--runs", "5", "--", ...broken("hang", pidFile));
    // It answers the handshake (whose deadline allows for a slow start) and hangs at the first run's `new`.
    expect(out).toContain('broke the protocol (timed out): no reply to {"op":"new","maxRetries":');
    expect(out).toContain("within 300 ms");
    expect(code).toBe(3);
    expect(alive(Number(readFileSync(pidFile, "utf8")))).toBe(false);
  });

  test("an implementation that keeps the protocol is reaped when the gate ends", async () => {
    const pidFile = join(scratch, "ok.pid");
    const { code } = await gate("--runs", "5", "--", ...broken("none", pidFile));
    expect(code).toBe(1);
    expect(alive(Number(readFileSync(pidFile, "utf8")))).toBe(false);
  });

  test("--json and --junit report a breach as an error, not a failure", async () => {
    const file = join(scratch, "crash.xml");
    const { out } = await gate("--json", "--junit", file, "--runs", "20", "--", ...broken("crash"));
    expect(JSON.parse(out)).toMatchObject({ verdict: "broke the protocol", exitCode: 3, breach: { kind: "crashed" } });
    const suite = new XMLParser({ ignoreAttributes: false }).parse(readFileSync(file, "utf8")).testsuites.testsuite;
    expect([suite["@_errors"], suite["@_failures"], suite.testcase.error["@_type"]]).toEqual(["1", "0", "crashed"]);
  });
});

describe("usage errors exit 2", () => {
  test.each([
    [[], "give either"],
    [["--module", "x.mjs", "--", "python3"], "give either"],
    [["--runs", "0", "--", "python3"], "--runs must be a positive integer, got `0`"],
    [["--profile", "lenient", "--", "python3"], "--profile must be contract or robust"],
    [["--seed", "x", "--", "python3"], "--seed must be an integer"],
    [["python3", "queue.py"], "put the command after `--`"],
    [["--", "no-such-command-here"], "cannot start `no-such-command-here`"],
    [["--module", "no/such/module.mjs"], "no/such/module.mjs"],
  ])("%j", async (argv, message) => {
    const { code, err } = await gate(...argv);
    expect(err).toContain(message);
    expect(code).toBe(2);
  });

  test.each([
    [["--seed", "-x", "--", "python3"], "`--seed` needs a value; one that starts with a dash is written `--seed=-…`"],
    [["--module"], "`--module` needs a value"],
    [["--lockstep=yes", "--", "python3"], "`--lockstep` takes no value"],
    [["--frob", "--", "python3"], "unknown option `--frob`; the options are --profile, --runs, --seed"],
    [["--module", "no/such/module.mjs"], "no/such/module.mjs"],
  ])("%j: the message is one line, then see --help", async (argv, message) => {
    const { code, err } = await gate(...argv);
    expect([code, err.split("\n")]).toEqual([
      2,
      [expect.stringMatching(/^workqueue-conformance: usage error: .*\(see --help\)$/), ""],
    ]);
    expect(err).toContain(message);
  });

  test.each([
    ["--seed", "-11111", /seed -11111/],
    ["--runs", "-3", /--runs must be a positive integer, got `-3`/],
    ["--max-commands", "-3", /--max-commands must be a positive integer, got `-3`/],
    ["--timeout", "-3", /--timeout must be a positive integer, got `-3`/],
  ])("a negative number is the value of %s, not an ambiguous option", async (option, value, said) => {
    const runs = option === "--runs" ? [] : ["--runs", "5"];
    const { out, err } = await gate(
      option,
      value,
      ...runs,
      "--module",
      join(root, "properties/test/fixtures/reference.mjs"),
    );
    expect(`${out}${err}`).toMatch(said);
  });

  test("npm start takes a negative --seed", () => {
    const start = join(root, "dist/properties/cli/start.js");
    const argv = [start, "--seed", "-11111", "--runs", "5", "--profile", "contract"];
    const { status, stdout } = spawnSync("node", argv, { encoding: "utf8" });
    expect([status, stdout]).toEqual([expect.any(Number), expect.stringContaining("(seed -11111, ")]);
  });

  test("--help prints the usage and the exit codes, and exits 0", async () => {
    const { code, out } = await gate("--help");
    expect(out).toContain("usage: workqueue-conformance");
    expect(out).toContain("3  the implementation broke the protocol");
    expect(code).toBe(0);
  });
});

test("the built command runs: `workqueue-conformance --help` exits 0", async () => {
  const { stdout } = await promisify(execFile)("node", [join(root, "dist/properties/cli/bin.js"), "--help"]);
  expect(stdout).toContain("exit codes:");
});

test("serve answers a request of a feature it did not announce (time) as unknown, without calling the queue", async () => {
  const requests = [
    { op: "hello" },
    { op: "new", maxRetries: 1 },
    { op: "addAfter", item: "a", delayMs: 0 },
    { op: "waiting" },
    { op: "len" },
  ];
  const replies: string[] = [];
  const output = new Writable({
    write(chunk, _encoding, done) {
      replies.push(...String(chunk).trimEnd().split("\n"));
      done();
    },
  });
  const input = Readable.from(requests.map((request) => `${JSON.stringify(request)}\n`));
  await serveQueue((options) => new WorkQueue<string>(options), input, output, "reference");
  expect(replies.map((reply) => JSON.parse(reply))).toEqual([
    { ok: true, name: "reference", features: ["len", "shutdown"] },
    { ok: true },
    { ok: false, error: `unknown or malformed request: ${JSON.stringify(requests[2])}` },
    { ok: false, error: `unknown or malformed request: ${JSON.stringify(requests[3])}` },
    { ok: true, len: 0 },
  ]);
});
