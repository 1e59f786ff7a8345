/**
 * The reference queue with time against the model: `addAfter`, moves of the clock and backoff on `retry`
 * (docs/spec.md §17, §7.3), in both profiles, every invariant checked after every step (coverage.test.ts shows
 * that the sequences reach every timed transition).
 */
import { expect, test } from "vitest";
import type { Profile } from "../../core/commands.js";
import { anyItems } from "../../core/universes.js";
import { checkConformance } from "../../sequential/check-conformance.js";
import { expectConforms, replay, runs, seed } from "../settings.js";
import { timedReference } from "../subjects.js";

for (const profile of ["contract", "robust"] satisfies Profile[]) {
  const options = { profile, seed, replay, items: anyItems, compareMessages: true, shutDown: true, time: true };

  test(`${profile} profile: the reference queue with time answers as the model does after every call, with few items`, async (ctx) => {
    const report = await checkConformance(timedReference, { ...options, shape: "few", runs: runs(600) });
    expectConforms(report, ctx.task.name);
    expect(report.unchecked).toEqual([]);
  });

  test(`${profile} profile: the reference queue with time answers as the model does after every call, in a deep queue`, async (ctx) => {
    const report = await checkConformance(timedReference, { ...options, shape: "many", runs: runs(200) });
    expectConforms(report, ctx.task.name);
  });
}

test("asking to check time on a queue without addAfter stops with a breach that names the verb", async () => {
  const untimed = () => ({ add() {}, get() {}, done() {}, retry: () => true, forget() {}, size: 0 });
  await expect(checkConformance(untimed, { runs: 1, time: true })).rejects.toThrow(
    "the factory made a queue without an `addAfter` method, and time is checked",
  );
});
