/**
 * The gate finds the untimed defects that once escaped it (issue #30; the wrong queues of
 * properties/test/wrong/escapes.mjs): a failure table that keeps only the last 64 items' counts, a sweep that drops
 * an item held while 33 others finished, an `add` that resolves before its change is made, and `NaN` deduplicated by
 * `indexOf` in either profile. Each is rejected by a default check (100 runs), naming the rule it breaks, with a
 * counterexample no longer than 1.5 times the shortest, known by construction. One fixed seed, as in
 * strength.test.ts; the safety net of time out of reach, so that only the budget of calls bounds shrinking.
 */
import { expect, test } from "vitest";
import type { Profile } from "../../core/commands.js";
import { type InvariantId, invariant } from "../../core/invariants.js";
import type { SubjectFactory } from "../../core/subject.js";
import { linearizable } from "../../overlap/check-overlapping.js";
import { checkConformance } from "../../sequential/check-conformance.js";
import { runs, seed } from "../settings.js";
import * as escapes from "../wrong/escapes.mjs";

const wrong: Record<string, SubjectFactory<unknown>> = { ...escapes };
/** The sentence of the invariant with id `id`, as a report names it. */
const named = (id: InvariantId) => invariant(id).name;

/**
 * Each wrong queue, the profile, the rule it is caught breaking, and its shortest counterexample in calls (for
 * overlapping calls, the calls of the run shown).
 */
const cases: [string, Profile, string, number, string][] = [
  ["failureTableOf64", "robust", named("failure-count"), 66, "65 distinct items retried, then the first again"],
  ["failureTableOf64", "contract", named("failure-count"), 196, "65 adds, 65 gets and retries, a retry of the first"],
  ["sweepDropsLongHeld", "robust", named("no-duplicate"), 102, "add, get, 33 items added, got and done, add"],
  ["sweepDropsLongHeld", "contract", named("no-duplicate"), 102, "add, get, 33 items added, got and done, add"],
  ["addResolvesBeforeItsChange", "robust", linearizable.name, 2, "add(a) then get(), in one round"],
  ["addResolvesBeforeItsChange", "contract", linearizable.name, 2, "add(a) then get(), in one round"],
  ["indexOfEverywhere", "robust", named("no-duplicate"), 2, "add(NaN) twice"],
  ["indexOfEverywhere", "contract", named("no-duplicate"), 2, "add(NaN) twice"],
];

test.each(cases)(
  "the gate rejects %s (%s profile) in its default runs, naming its rule, within 1.5 times its shortest counterexample",
  async (name, profile, rule, shortest) => {
    const options = { profile, seed: seed ?? 20261202, runs: runs(100), shrinkTimeMs: 600_000 };
    const report = await checkConformance(wrong[name] as SubjectFactory<unknown>, options);
    const found = report.counterexample;
    const length = found?.overlapping?.length ?? found?.steps.length;
    const seen = `seed ${report.seed}: ${length} calls, ${found?.invariant.name}`;
    expect(report.verdict, seen).toBe("does not conform");
    expect(found?.invariant.name, seen).toBe(rule);
    expect(length, seen).toBeLessThanOrEqual(Math.floor(shortest * 1.5));
  },
  60_000,
);

test("the plain queue the escapes are built on conforms, in both profiles", async () => {
  for (const profile of ["robust", "contract"] as const) {
    const report = await checkConformance(escapes.plain, { profile, seed: seed ?? 20261202, runs: runs(100) });
    expect(report.verdict, `seed ${report.seed}`).toBe("conforms");
  }
});
