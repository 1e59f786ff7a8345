/**
 * The flaky item of timed runs (properties/core/flaky.ts), expanded on the model: a failure, a success and a failure
 * again of one item, the clock moved to each due time its backoff sets, so that the second backoff starts from the
 * base again after the `forget` (docs/spec.md §8.1, §18.2).
 */
import { expect, test } from "vitest";
import type { Planning } from "../../core/commands.js";
import { FlakyCommand } from "../../core/flaky.js";
import { showCall } from "../../core/render.js";
import { modelOf } from "../../core/verify.js";

/** The calls a flaky item of `failures` makes on a fresh model with a backoff of base 1 and cap 8. */
function callsOf(failures: boolean[], landing: "on" | "before" | "past"): string[] {
  const model = modelOf(5, { baseMs: 1, maxMs: 8 });
  const planning: Planning = { plan: [], expected: [] };
  new FlakyCommand("a", failures, landing).run(model, planning);
  return planning.plan.map(showCall);
}

test("a flaky item fails, succeeds and fails again, the clock landing on each backoff's due time", () => {
  expect(callsOf([true, false, true], "on")).toEqual([
    'add("a")',
    "get()",
    'retry("a")',
    'done("a")',
    "advance(1)",
    "get()",
    'forget("a")',
    'done("a")',
    'add("a")',
    "get()",
    'retry("a")',
    'done("a")',
    "advance(1)",
  ]);
});

test("landing before a due time moves the clock halfway first; landing past it, half a millisecond past", () => {
  expect(callsOf([true, true], "before").filter((call) => call.startsWith("advance"))).toEqual([
    "advance(0.5)",
    "advance(0.5)",
    "advance(1)",
    "advance(1)",
  ]);
  expect(callsOf([true], "past").filter((call) => call.startsWith("advance"))).toEqual(["advance(1.5)"]);
});
