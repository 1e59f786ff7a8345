/**
 * Compaction (properties/sequential/compact.ts): a failure whose calls are mostly one long macro is cut to the
 * macros' smallest counts that still fail, before any single call is removed, with the budget charged for it.
 */
import { expect, test } from "vitest";
import type { Scenario } from "../../core/arbitraries.js";
import { inProcess } from "../../core/driver.js";
import { MacroCommand } from "../../core/macros.js";
import { ShrinkBudget } from "../../core/shrink-budget.js";
import { stringItems } from "../../core/universes.js";
import { verifyStarted } from "../../core/verify.js";
import { compact } from "../../sequential/compact.js";
import { planOf } from "../../sequential/plan.js";
import { sweepDropsLongHeld } from "../wrong/escapes.mjs";

test("compaction cuts a 60,000-call cycle and a long straggle to the counts that still fail, and a replay makes the same cuts", async () => {
  // 10 items queued, 20,000 cycles over them, then one item held while 40 others finish: the queue drops the held
  // item after 33 of them, and its next add queues it while it is in flight.
  const macro = (kind: "burst" | "cycle" | "straggle", count: number) =>
    new MacroCommand(kind, count, 0, stringItems.many, stringItems.few);
  const input: Scenario = {
    maxRetries: 3,
    commands: [macro("burst", 10), macro("cycle", 20_000), macro("straggle", 40)],
  };
  const driver = inProcess(sweepDropsLongHeld);
  const compare = { compareMessages: false };
  const { plan, expected } = planOf(input);
  const run = { maxRetries: input.maxRetries, plan, expected };
  const violation = await verifyStarted(driver.start(input.maxRetries, plan), run, compare);
  expect(violation?.steps.length).toBeGreaterThan(60_000);
  if (violation === undefined) return;
  const budget = new ShrinkBudget(500_000, "calls", 600_000);
  const compacted = await compact(input, violation, driver, compare, { budget });
  // add(held) after 33 others finished: burst ×1 and cycle ×1 (4 calls), the straggle's get and 33 to 40 rounds of
  // 3 calls, and the add that breaks the rule.
  expect(compacted.violation.steps.length).toBeLessThanOrEqual(4 + 1 + 40 * 3 + 1);
  expect(compacted.violation.invariant.id).toBe("no-duplicate");
  expect(budget.spent).toBe(compacted.commands);
  expect(budget.spent).toBeLessThan(100_000);
  const replayed = await compact(input, violation, driver, compare, { removals: compacted.removals });
  expect(replayed.violation.steps.map((step) => step.operation)).toEqual(
    compacted.violation.steps.map((step) => step.operation),
  );
});
