/**
 * The golden traces in properties/traces/, each a regression or a worked case of docs/spec.md, replayed on the
 * reference queue and on the model: both must answer exactly what the trace says.
 */
import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, test } from "vitest";
import { WorkQueueModel } from "../../../model/index.js";
import { WorkQueue } from "../../../src/index.js";
import { runTrace } from "../../report/traces.js";

const folder = new URL("../../traces/", import.meta.url);
const traces = readdirSync(folder).filter((name) => name.endsWith(".trace"));

describe.each([
  ["the reference queue", (options: { maxRetries: number }) => new WorkQueue<unknown>(options)],
  ["the model", (options: { maxRetries: number }) => new WorkQueueModel<unknown>(options)],
])("%s", (_, make) => {
  test.each(traces)("answers as %s says", (name) => {
    const text = readFileSync(new URL(name, folder), "utf8");
    expect(runTrace(text, make)).toBe(text);
  });
});

test("a trace fails when an answer differs", () => {
  const text = 'new maxRetries=1\n----\n\nget\n----\n"a"\n';
  expect(runTrace(text, (options) => new WorkQueue<unknown>(options))).toBe(
    "new maxRetries=1\n----\n\nget\n----\nundefined\n",
  );
});
