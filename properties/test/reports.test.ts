/**
 * The gate tells the truth in every format: each outcome has its documented exit code and one-line message, the
 * JSON report matches its schema, the JUnit report validates against the JUnit XML schema whatever bytes the
 * implementation printed, and a printed replay works when pasted. `main` runs in this process; the
 * implementations are child processes or modules (`npm test` builds `dist/` first).
 */
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Ajv } from "ajv";
import { describe, expect, test } from "vitest";
import { validateXML } from "xmllint-wasm";
import { main } from "../cli/gate.js";
import { toJson } from "../report/json.js";
import type { GateOutcome } from "../report/outcome.js";

const root = new URL("../../", import.meta.url).pathname;
const scratch = mkdtempSync(join(tmpdir(), "workqueue-reports-"));
const fixture = (name: string) => join(root, "properties/test/fixtures", name);
const serve = (name: string) => [
  "--",
  "node",
  join(root, "dist/properties/protocol/serve-module.js"),
  join(root, "properties/test/wrong/queues.mjs"),
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
    expect([code, json.verdict, json.formatVersion]).toEqual([0, "conforms", 1]);
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

  test("--shrink-time-ms sets the shrinking budget, which the JSON report gives with the time taken; JUnit names the items", async () => {
    const { json, xml } = await reported(
      "--profile",
      "contract",
      "--runs",
      "300",
      "--shrink-time-ms",
      "60000",
      ...serve("lostDirtyMark"),
    );
    expect(json.counterexample).toMatchObject({ shrinkTimeMs: 60_000, minimal: true });
    expect(json.counterexample.shrinkMs).toBeLessThanOrEqual(60_000);
    expect(xml).toContain('<property name="items" value="protocol v1 strings"/>');
    const bad = await gate("--shrink-time-ms", "0", "--", "no-such-command-here");
    expect([bad.code, bad.err.trim()]).toEqual([
      2,
      "workqueue-conformance: --shrink-time-ms must be a positive integer, got `0` (see --help)",
    ]);
  });

  test("does not conform under overlapping calls: exit 1, and the JSON report holds the calls round by round", async () => {
    const { code, json, xml } = await reported("--runs", "100", "--module", fixture("add-answers-early.mjs"));
    expect([code, json.verdict, json.counterexample.invariant.rule]).toEqual([1, "does not conform", "§10.8"]);
    expect(json.counterexample.steps).toEqual([]);
    expect(json.counterexample.overlapping.length).toBeGreaterThanOrEqual(2);
    expect(json.counterexample.overlapping[0]).toMatchObject({ round: 1, afterPrevious: false });
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

  test("a replay token that is not one: exit 2, one line, and the reports say usage error", async () => {
    // Read before anything starts: the command is never run.
    const { code, err } = await gate("--replay=abc", "--", "no-such-command-here");
    expect(code).toBe(2);
    expect(err.trim().split("\n")).toEqual([
      expect.stringMatching(/^workqueue-conformance: --replay: Expected `replay` .*not a replay token \(see --help\)$/),
    ]);
    const first = await gate("--profile", "contract", "--runs", "300", "--module", fixture("lost-dirty-mark.mjs"));
    const token = /--replay=(\S+)/.exec(first.out)?.[1] ?? "";
    const { json } = await reported("--replay", token, "--module", fixture("lost-dirty-mark.mjs"));
    expect([json.verdict, json.exitCode, json.error.kind]).toEqual(["usage error", 2, "usage error"]);
    expect(json.error.message).toContain('made with `profile` "contract", but this check has "robust"');
  });

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
  /** The words of the printed replay command, as a shell splits them (the command quotes what needs it). */
  const pasted = (out: string) => {
    const line = /replay: (workqueue-conformance .*)$/m.exec(out)?.[1] ?? "";
    return [...line.matchAll(/'([^']*)'|(\S+)/g)].map(([, quoted, plain]) => quoted ?? plain ?? "").slice(1);
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
