/**
 * The conformance vectors of properties/vectors/ (docs/protocol.md, "Conformance vectors"): they are what the
 * generator makes from the model, they follow their schema, the reference queue and the model pass every one,
 * every wrong queue fails at least one, transitions.json covers every reachable transition of its state space, and
 * the Python example's runner (examples/python/test_vectors.py) replays them all on its queue.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { Ajv2020 } from "ajv/dist/2020.js";
import { beforeAll, describe, expect, test } from "vitest";
import { WorkQueueModel } from "../../../model/index.js";
import { WorkQueue } from "../../../src/index.js";
import { readView, type SubjectFactory } from "../../core/subject.js";
import { chainOf, renderFile, type VectorFile } from "../../vectors/format.js";
import { generateVectors } from "../../vectors/generate.js";
import { replayVector } from "../../vectors/replay.js";
import { commands, modelAfter, reachable, stateOf, transitionMaxRetries } from "../../vectors/transitions.js";
import * as wrongQueues from "../wrong/all.mjs";

const folder = new URL("../../vectors/", import.meta.url);
const names = readdirSync(folder)
  .filter((name) => name.endsWith(".json") && name !== "vectors.schema.json")
  .sort();
const files = Object.fromEntries(
  names.map((name) => [name, JSON.parse(readFileSync(new URL(name, folder), "utf8")) as VectorFile]),
);
const vectors = names.flatMap((name) =>
  (files[name] as VectorFile).vectors.map((vector, index) => ({ name, vector, index })),
);

/**
 * `naive`, the correct base of the wrong queues, and the wrong queues that are right on every call protocol v1 can
 * make, so that no vector can catch them: they merge items that are not strings (the number 1 and "1", objects equal as JSON, NaN), or get `Infinity` wrong, which
 * protocol v1 cannot send. The gate catches them in process (properties/test/sequential/strength.test.ts).
 */
const rightOnStrings = ["naive", "coercesToString", "jsonKeys", "indexOfDedup", "infinityMeansTen"];

/**
 * The wrong queues that need more items or calls than the vector files hold (1,001 items, 4,097 items, 65,538 calls):
 * the vectors stay small enough to read and replay by hand. The gate catches them (properties/test/sequential/strength.test.ts).
 */
const beyondVectors = ["dropsPast1000", "evictsStatesBeyond4096", "stampWrapsAt65536"];

/** The features a queue offers, as `serve` announces them: `len`, and `shutdown` when it has both. */
async function featuresOf(make: SubjectFactory<string>): Promise<string[]> {
  const probe = await make({ maxRetries: 0 });
  const shuts = typeof probe.shutDown === "function" && readView(probe, "shuttingDown") !== undefined;
  return shuts ? ["len", "shutdown"] : ["len"];
}

/** The vectors `make` fails, each named by its file and description, with the step and both replies. */
async function failures(make: SubjectFactory<string>): Promise<string[]> {
  const features = await featuresOf(make);
  const failed: string[] = [];
  for (const { name, vector, index } of vectors) {
    if (!vector.features.every((feature) => features.includes(feature))) continue;
    const failure = await replayVector(make, (files[name] as VectorFile).vectors, index);
    if (failure === undefined) continue;
    const { step, request, expected, actual } = failure;
    const replies = `${JSON.stringify(request)}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`;
    failed.push(`${name}: ${vector.description} — step ${step + 1}, ${replies}`);
  }
  return failed;
}

test("the folder holds the three vector files and their schema", () => {
  expect(names).toEqual(["edge-cases.json", "traces.json", "transitions.json"]);
});

test.each(names)("docs/protocol.md gives the number of vectors of %s", (name) => {
  const protocol = readFileSync(new URL("../../../docs/protocol.md", import.meta.url), "utf8");
  const count = (files[name] as VectorFile).vectors.length.toLocaleString("en-US");
  expect(protocol).toMatch(new RegExp(`^\\| \`${name}\` \\| ${count} \\|`, "m"));
});

test("docs/protocol.md's example vector is one of transitions.json, with the chain it describes", () => {
  const protocol = readFileSync(new URL("../../../docs/protocol.md", import.meta.url), "utf8");
  const example = JSON.parse(/A vector is\n\n```json\n([^`]*)```/.exec(protocol)?.[1] ?? "null");
  const list = (files["transitions.json"] as VectorFile).vectors;
  expect(list).toContainEqual(example);
  const [, get, add] =
    /Vector (\d+) is\s+`get` from "a queued", which comes after vector (\d+), `add "a"` on a fresh/.exec(protocol) ??
    [];
  expect([example.after, list[Number(get)]?.description, list[Number(get)]?.after]).toEqual([
    Number(get),
    "maxRetries 1, a queued, b absent: get",
    Number(add),
  ]);
  expect([list[Number(add)]?.description, list[Number(add)]?.after]).toEqual([
    'maxRetries 1, a absent, b absent: add "a"',
    undefined,
  ]);
});

test.each(names)("%s follows properties/vectors/vectors.schema.json", (name) => {
  const schema = JSON.parse(readFileSync(new URL("vectors.schema.json", folder), "utf8"));
  const validate = new Ajv2020({ allErrors: true, strict: true }).compile(schema);
  expect(validate(files[name]), JSON.stringify(validate.errors?.slice(0, 5))).toBe(true);
});

test.each(names)("every `after` of %s names an earlier vector of the same maxRetries", (name) => {
  const list = (files[name] as VectorFile).vectors;
  const wrong = list.flatMap(({ after, maxRetries }, index) =>
    after === undefined || (after < index && list[after]?.maxRetries === maxRetries) ? [] : [`${index} after ${after}`],
  );
  expect(wrong).toEqual([]);
});

test("a chain is replayed from its first vector, and an `after` that names no earlier vector is refused", () => {
  const step = (item: string) => ({ request: { op: "add", item } as const, reply: { ok: true } });
  const vector = (item: string, after?: number) => ({
    description: item,
    rules: [],
    features: [],
    maxRetries: 0,
    ...(after === undefined ? {} : { after }),
    steps: [step(item)],
  });
  const items = (list: Parameters<typeof chainOf>[0], at: number) => chainOf(list, at).map((s) => s.request.item);
  expect(items([vector("a"), vector("b", 0), vector("c", 1), vector("d", 0)], 2)).toEqual(["a", "b", "c"]);
  expect(items([vector("a"), vector("b", 0), vector("c", 1), vector("d", 0)], 3)).toEqual(["a", "d"]);
  expect(() => chainOf([vector("a", 0)], 0)).toThrow("Expected vector 0's `after` to name an earlier vector, got `0`");
  expect(() => chainOf([vector("a"), vector("b", 2)], 1)).toThrow("got `2`");
  expect(() => chainOf([vector("a")], 1)).toThrow("Expected a vector at index 1 of 1");
});

describe("the committed files are a fresh generation (run `npm run vectors` after changing the model or a trace)", () => {
  let generated: Record<string, VectorFile>;
  beforeAll(async () => {
    const traces = new URL("../../traces/", import.meta.url);
    const traceNames = readdirSync(traces)
      .filter((name) => name.endsWith(".trace"))
      .sort();
    generated = await generateVectors(
      traceNames.map((name) => ({ name, text: readFileSync(new URL(name, traces), "utf8") })),
    );
  });

  test.each(names)("%s", (name) => {
    expect(Object.keys(generated).sort()).toEqual(names);
    expect(readFileSync(new URL(name, folder), "utf8")).toBe(renderFile(generated[name] as VectorFile));
  });
});

test.each([
  ["the reference queue", (options: { maxRetries: number }) => new WorkQueue<string>(options)],
  ["the model", (options: { maxRetries: number }) => new WorkQueueModel<string>(options)],
])("%s passes every vector", async (_, make) => {
  expect(await failures(make)).toEqual([]);
});

describe("every wrong queue fails at least one vector", () => {
  const wrong = Object.entries(wrongQueues as Record<string, SubjectFactory<string>>);

  const caught = wrong.filter(([name]) => !rightOnStrings.includes(name) && !beyondVectors.includes(name));
  test.each(caught)("%s", async (_, make) => {
    expect((await failures(make)).length).toBeGreaterThan(0);
  });

  test.each(wrong.filter(([name]) => rightOnStrings.includes(name)))(
    "%s is right on strings and passes every vector",
    async (_, make) => {
      expect(await failures(make)).toEqual([]);
    },
  );
});

test("transitions.json covers every reachable transition of its state space", async () => {
  const file = files["transitions.json"] as VectorFile;
  const reachableTransitions = new Set<string>();
  for (const maxRetries of transitionMaxRetries) {
    for (const { state } of await reachable(maxRetries)) {
      for (const command of commands) reachableTransitions.add(`${maxRetries} | ${state} | ${JSON.stringify(command)}`);
    }
  }
  const covered = new Set<string>();
  const isCommand = (request: object) =>
    commands.some((command) => JSON.stringify(command) === JSON.stringify(request));
  for (const [index, vector] of file.vectors.entries()) {
    const requests = chainOf(file.vectors, index).map((step) => step.request);
    const own = requests.length - vector.steps.length;
    for (const [i, request] of requests.entries()) {
      if (i < own || !isCommand(request)) continue;
      const before = stateOf(await modelAfter(vector.maxRetries, requests.slice(0, i)));
      covered.add(`${vector.maxRetries} | ${before} | ${JSON.stringify(request)}`);
    }
  }
  expect([...reachableTransitions].filter((t) => !covered.has(t))).toEqual([]);
  expect(covered.size).toBe(reachableTransitions.size);
  expect(file.coverage).toEqual({
    states: reachableTransitions.size / commands.length,
    transitions: reachableTransitions.size,
    covered: covered.size,
  });
});

test("workqueue-vectors writes transitions.json as committed, and names a folder it cannot write", async () => {
  const bin = new URL("../../../dist/properties/cli/vectors.js", import.meta.url).pathname;
  const out = mkdtempSync(join(tmpdir(), "vectors-"));
  try {
    const { stdout } = await promisify(execFile)(process.execPath, [bin, "--out", out]);
    expect(stdout).toBe(`wrote ${join(out, "transitions.json")}: 9,860 vectors\n`);
    expect(readFileSync(join(out, "transitions.json"), "utf8")).toBe(
      readFileSync(new URL("transitions.json", folder), "utf8"),
    );
    const missing = join(out, "no-such-folder");
    const failed = await promisify(execFile)(process.execPath, [bin, "--out", missing]).catch((error) => error);
    expect([failed.code, failed.stderr]).toEqual([
      2,
      expect.stringMatching(
        new RegExp(`^workqueue-vectors: cannot write ${join(missing, "transitions.json")}: ENOENT`),
      ),
    ]);
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
});

test("the Python example replays every vector on its queue with examples/python/test_vectors.py", async () => {
  const cwd = new URL("../../../examples/python/", import.meta.url).pathname;
  const { stderr } = await promisify(execFile)("python3", ["-m", "unittest", "test_vectors"], { cwd });
  expect(stderr).toMatch(/^Ran 1 test/m);
  expect(stderr).toMatch(/^OK$/m);
  const ran = Number(/replayed (\d+) vectors/.exec(stderr)?.[1]);
  expect(ran).toBe(vectors.length);
});
