/**
 * A counterexample's first line says how its queue was made, in the language of the implementation checked, with
 * every option that decided the run: `maxRetries`, the backoff, and the check's `time` and `shutDown`.
 */
import { expect, test } from "vitest";
import type { SubjectFactory } from "../../core/subject.js";
import { formatReport } from "../../report/text.js";
import { checkConformance } from "../../sequential/check-conformance.js";
import { constructionOf, inProcessConstruction } from "../../sequential/construction.js";
import * as escapes from "../wrong/escapes.mjs";

const untimed = { time: false, shutDown: false };
const backoff = { baseMs: 0.5, maxMs: 4 };

test("in process, the constructor with maxRetries and, when there is one, the backoff", () => {
  expect(inProcessConstruction(2, undefined)).toBe("new WorkQueue({ maxRetries: 2 })");
  expect(inProcessConstruction(Number.POSITIVE_INFINITY, backoff)).toBe(
    "new WorkQueue({ maxRetries: Infinity, backoff: { baseMs: 0.5, maxMs: 4 } })",
  );
  expect(constructionOf({}, untimed, { maxRetries: 0 })).toBe("new WorkQueue({ maxRetries: 0 })");
});

test("the check's time and shutDown follow the construction, each only when it was on", () => {
  const made = { maxRetries: 1, backoff };
  const base = "new WorkQueue({ maxRetries: 1, backoff: { baseMs: 0.5, maxMs: 4 } })";
  expect(constructionOf({}, { time: true, shutDown: false }, made)).toBe(`${base}   // time: true`);
  expect(constructionOf({}, { time: false, shutDown: true }, made)).toBe(`${base}   // shutDown: true`);
  expect(constructionOf({}, { time: true, shutDown: true }, made)).toBe(`${base}   // time: true, shutDown: true`);
});

test("a driver that says how its queues are made is shown in its own words", () => {
  const driver = { construction: (maxRetries: number) => `Queue(max_retries=${maxRetries})` };
  expect(constructionOf(driver, untimed, { maxRetries: 3 })).toBe("Queue(max_retries=3)");
  expect(constructionOf(driver, { time: true, shutDown: false }, { maxRetries: 3 })).toBe(
    "Queue(max_retries=3)   // time: true",
  );
});

test("a report's first line of the counterexample is the construction the check recorded", async () => {
  const factory = escapes.indexOfEverywhere as SubjectFactory<unknown>;
  const report = await checkConformance(factory, { seed: 1, shutDown: false });
  const made = report.counterexample;
  expect(made?.construction).toBe(inProcessConstruction(made?.maxRetries ?? -1, undefined));
  expect(formatReport(report, (t) => t).split("\n")[1]).toBe(`    ${made?.construction}`);
});
