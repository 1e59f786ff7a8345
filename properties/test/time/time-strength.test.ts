/**
 * The gate against wrong timed queues (properties/test/wrong/timed.ts): the correct one conforms, and each defect
 * is rejected, blamed on the rule it breaks, with a short counterexample.
 */
import { expect, test } from "vitest";
import type { InvariantId } from "../../core/invariants.js";
import { stringItems } from "../../core/universes.js";
import { formatReport } from "../../report/text.js";
import { checkConformance } from "../../sequential/check-conformance.js";
import { seed } from "../settings.js";
import { type TimedDefect, TimedQueue } from "../wrong/timed.js";

const options = { items: stringItems, shutDown: true, time: true, seed: seed ?? 20261203, runs: 2000 } as const;

test("the plain timed queue that the wrong ones are made from conforms", async () => {
  const report = await checkConformance((o) => new TimedQueue(o), { ...options, runs: 300 });
  expect(
    report.verdict,
    formatReport(report, (token) => token),
  ).toBe("conforms");
}, 180_000); // 300 timed runs: 22 s on the 2-core machine while another job ran, three times that under a CPU hog

/**
 * Each defect, the ids of the rules it may be blamed on, and its shortest counterexample, in calls, known by
 * construction (properties/test/wrong/timed.ts says how each arises): the gate must name one of those rules, with
 * a counterexample no longer than 1.5 times the shortest.
 */
const cases: [TimedDefect, InvariantId[], number][] = [
  // addAfter(a, 1), add(a): waiting 1, not 0.
  ["add keeps the wait", ["waiting-never-queued"], 2],
  // addAfter(a, 1), addAfter(a, 2), advance(1). The metrics see when the item fell due (its queue duration) one
  // call before the size does.
  ["latest due wins", ["earlier-due-wins", "metrics"], 3],
  // 32 retries of one item: the 32nd shifts 1 by 31 bits, a negative delay, and queues it at once.
  ["backoff overflows", ["backoff"], 32],
  // addAfter(a, 1), addAfter(b, 1), advance(1), get(): b, not a.
  ["ties LIFO", ["due-order"], 4],
  // addAfter(a, 1), shutDown(): waiting 0, not 1.
  ["shutdown drops waits", ["waiting-survives-shutdown"], 2],
  // addAfter(a, 1), shutDown(), advance(1): size 0, not 1.
  ["falling due refused while shutting down", ["waiting-survives-shutdown"], 3],
  // retry(a) with a backoff: size 1, not 0.
  ["retry ignores backoff", ["backoff"], 1],
  // retry(a), advance(baseMs): waiting 1, not 0.
  ["backoff from the second failure", ["backoff"], 2],
  // retry(a), add(a), get(), forget(a), retry(a), advance(baseMs): waiting 1, not 0.
  ["forget keeps the backoff", ["backoff"], 6],
  // add(a), get(), add(a), retry(a) with a backoff: waiting 1, not 0.
  ["retry clears the dirty mark", ["queued-or-dirty-does-not-wait"], 4],
  // addAfter(a, 0): waiting 1, not 0.
  ["zero delay waits", ["not-positive-is-add"], 1],
  // addAfter(a, 0.125) throws.
  ["whole delays only", ["add-after-errors"], 1],
  // addAfter(a, 0.5), advance(0.5): size 0, not 1; or, past the due time, only the queue duration shows it.
  ["rounds due times up", ["falls-due-on-advance", "metrics"], 2],
  // An advance to the due time exactly leaves the item waiting (the size is short); one past it queues the item at
  // the end of the advance instead of at its due time, which only its queue duration shows.
  ["late by one", ["falls-due-on-advance", "metrics"], 2],
  ["re-arms forever", ["falls-due-on-advance", "answers"], 2],
  ["depth counts dirty", ["metrics"], 3],
  ["latency from the first add", ["metrics"], 5],
  ["every add counts", ["metrics"], 2],
  ["give-ups count as retries", ["metrics"], 1],
  ["gauges on a ticker", ["metrics"], 3],
];

for (const [defect, rules, shortest] of cases) {
  test(`the gate rejects a timed queue whose defect is: ${defect}, naming ${rules.join(" or ")}, within 1.5 times its shortest counterexample`, async () => {
    const started = performance.now();
    const report = await checkConformance((o) => new TimedQueue(o, defect), { ...options, shrinkTimeMs: 600_000 });
    const found = formatReport(report, (token) => `WORKQUEUE_REPLAY=${token}`);
    const seconds = ((performance.now() - started) / 1000).toFixed(1);
    console.log(
      `${defect}: ${report.counterexample?.steps.length} calls, ${report.counterexample?.invariant.id}, ${seconds} s`,
    );
    expect(report.verdict, found).toBe("does not conform");
    expect(rules, found).toContain(report.counterexample?.invariant.id);
    expect(report.counterexample?.steps.length, found).toBeLessThanOrEqual(Math.floor(shortest * 1.5));
  }, 180_000); // up to 2,000 runs and 500,000 calls of shrinking ("backoff overflows": 24 s loaded, once over 60 s)
}
