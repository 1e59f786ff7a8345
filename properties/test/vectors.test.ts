/**
 * The conformance vectors of properties/vectors/ (docs/protocol.md, "Conformance vectors"): they are what the
 * generator makes from the model, they follow their schema, the reference queue and the model pass every one,
 * every wrong queue fails at least one, transitions.json covers every reachable transition of its state space, and
 * the Python example's runner (examples/python/test_vectors.py) replays them all on its queue.
 */
import { execFile } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { promisify } from "node:util";
import { Ajv2020 } from "ajv/dist/2020.js";
import { beforeAll, describe, expect, test } from "vitest";
import { WorkQueueModel } from "../../model/index.js";
import { WorkQueue } from "../../src/index.js";
import { readView, type SubjectFactory } from "../engine/subject.js";
import { renderFile, type Vector, type VectorFile } from "../vectors/format.js";
import { generateVectors } from "../vectors/generate.js";
import { replayVector } from "../vectors/replay.js";
import { commands, modelAfter, reachable, stateOf, transitionMaxRetries } from "../vectors/transitions.js";
import * as wrongQueues from "./wrong/queues.mjs";

const folder = new URL("../vectors/", import.meta.url);
const names = readdirSync(folder)
  .filter((name) => name.endsWith(".json") && name !== "vectors.schema.json")
  .sort();
const files = Object.fromEntries(
  names.map((name) => [name, JSON.parse(readFileSync(new URL(name, folder), "utf8")) as VectorFile]),
);
const vectors = names.flatMap((name) => (files[name] as VectorFile).vectors.map((vector) => ({ name, vector })));

/**
 * `naive`, the correct base of the wrong queues, and the wrong queues that are right on every call protocol v1 can
 * make, so that no vector can catch them: they merge items that are not strings (the number 1 and "1", objects equal as JSON, NaN), or get `Infinity` wrong, which
 * protocol v1 cannot send. The gate catches them in process (properties/test/strength.test.ts).
 */
const rightOnStrings = ["naive", "coercesToString", "jsonKeys", "indexOfDedup", "infinityMeansTen"];

/**
 * The wrong queues that need more items or calls than the vector files hold (1,001 items, 4,097 items, 65,538 calls):
 * the vectors stay small enough to read and replay by hand. The gate catches them (properties/test/strength.test.ts).
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
  for (const { name, vector } of vectors) {
    if (!vector.features.every((feature) => features.includes(feature))) continue;
    const failure = await replayVector(make, vector);
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
  const protocol = readFileSync(new URL("../../docs/protocol.md", import.meta.url), "utf8");
  const count = (files[name] as VectorFile).vectors.length.toLocaleString("en-US");
  expect(protocol).toMatch(new RegExp(`^\\| \`${name}\` \\| ${count} \\|`, "m"));
});

test.each(names)("%s follows properties/vectors/vectors.schema.json", (name) => {
  const schema = JSON.parse(readFileSync(new URL("vectors.schema.json", folder), "utf8"));
  const validate = new Ajv2020({ allErrors: true, strict: true }).compile(schema);
  expect(validate(files[name]), JSON.stringify(validate.errors?.slice(0, 5))).toBe(true);
});

describe("the committed files are a fresh generation (run `npm run vectors` after changing the model or a trace)", () => {
  let generated: Record<string, VectorFile>;
  beforeAll(async () => {
    const traces = new URL("../traces/", import.meta.url);
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
  for (const vector of file.vectors as Vector[]) {
    const requests = vector.steps.map((step) => step.request);
    for (const [i, request] of requests.entries()) {
      if (!isCommand(request)) continue;
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

test("the Python example replays every vector on its queue with examples/python/test_vectors.py", async () => {
  const cwd = new URL("../../examples/python/", import.meta.url).pathname;
  const { stderr } = await promisify(execFile)("python3", ["-m", "unittest", "test_vectors"], { cwd });
  expect(stderr).toMatch(/^Ran 1 test/m);
  expect(stderr).toMatch(/^OK$/m);
  const ran = Number(/replayed (\d+) vectors/.exec(stderr)?.[1]);
  expect(ran).toBe(vectors.length);
});
