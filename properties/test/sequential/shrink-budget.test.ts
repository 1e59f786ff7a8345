/**
 * The shrinking budget (properties/core/shrink-budget.ts): work, counted, stops shrinking the same way on any
 * machine; time is only a safety net; the first attempt always runs; fast-check is interrupted, not failed.
 */
import * as fc from "fast-check";
import { expect, test } from "vitest";
import { ShrinkBudget } from "../../core/shrink-budget.js";

test("the budget is exhausted once the work charged reaches it, and says so", () => {
  const budget = new ShrinkBudget(10, "calls", 60_000);
  budget.charge(9);
  expect([budget.exhausted, budget.stoppedBy, budget.spent]).toEqual([false, undefined, 9]);
  budget.charge(1);
  expect([budget.exhausted, budget.stoppedBy, budget.spent]).toEqual([true, "calls", 10]);
  expect(new ShrinkBudget(1, "runs", 60_000)).toMatchObject({ stoppedBy: undefined });
  const runs = new ShrinkBudget(1, "runs", 60_000);
  runs.charge(1);
  expect([runs.exhausted, runs.stoppedBy]).toEqual([true, "runs"]);
});

test("the first attempt always runs: nothing charged, nothing exhausted, even with no time at all", () => {
  const budget = new ShrinkBudget(0, "calls", 0);
  expect([budget.exhausted, budget.stoppedBy]).toEqual([false, undefined]);
  budget.charge(1);
  expect([budget.exhausted, budget.stoppedBy]).toEqual([true, "calls"]);
});

test("the safety net of time stops it when the work is not spent, and says so; once stopped, it stays stopped", () => {
  const budget = new ShrinkBudget(1_000, "calls", 0);
  budget.charge(1);
  const before = performance.now();
  while (performance.now() === before) {
    // let the clock move past the deadline
  }
  expect([budget.exhausted, budget.stoppedBy]).toEqual([true, "time"]);
  budget.charge(1_000);
  expect([budget.exhausted, budget.stoppedBy]).toEqual([true, "time"]);
});

test("guard interrupts fast-check, which reports the failure found so far as interrupted, not as a new failure", async () => {
  const budget = new ShrinkBudget(3, "runs", 60_000);
  const property = fc.asyncProperty(fc.array(fc.nat()), async (values) => {
    budget.guard();
    budget.charge(1);
    if (values.length >= 2) throw new Error("too long");
  });
  const details = await fc.check(property, { seed: 1, numRuns: 1000 });
  expect(details.failed).toBe(true);
  expect(details.interrupted).toBe(true);
  expect(budget.stoppedBy).toBe("runs");
  expect(String(details.errorInstance)).toContain("too long");
  expect(() => new ShrinkBudget(1, "runs", 60_000).guard()).not.toThrow();
  const spent = new ShrinkBudget(1, "runs", 60_000);
  spent.charge(1);
  expect(() => spent.guard()).toThrow(fc.PreconditionFailure);
});

test("guard with a share interrupts once that part of the budget is spent, without exhausting the budget", () => {
  const budget = new ShrinkBudget(10, "calls", 60_000);
  budget.charge(1);
  expect(() => budget.guard(0.2)).not.toThrow();
  budget.charge(1);
  expect(() => budget.guard(0.2)).toThrow(fc.PreconditionFailure);
  expect(() => budget.guard()).not.toThrow();
  expect([budget.exhausted, budget.stoppedBy]).toEqual([false, undefined]);
});
