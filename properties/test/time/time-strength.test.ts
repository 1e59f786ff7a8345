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
 * Each defect, the ids of the rules it may be blamed on, its shortest counterexample, in calls, known by
 * construction (properties/test/wrong/timed.ts says how each arises), and what the detail must say: the gate must
 * name one of those rules, with a detail true of the queue, and a counterexample no longer than 1.5 times the
 * shortest.
 */
const cases: [TimedDefect, InvariantId[], number, RegExp][] = [
  // addAfter(a, 1), add(a) (or a retry without backoff, which is an add): waiting 1, not 0.
  [
    "add keeps the wait",
    ["waiting-never-queued"],
    2,
    /^after (add|retry)\((.+)\), \2 is queued, but waiting is 1 \(expected 0\): the add ended its wait$/,
  ],
  // addAfter(a, 1), addAfter(a, 2), advance(1). The metrics see when the item fell due (its queue duration) one
  // call before the size does.
  [
    "latest due wins",
    ["earlier-due-wins", "metrics"],
    3,
    /was asked for twice while it waited, the earlier due time being|was asked for twice while it waited, and its earlier due time|the metric queueDuration/,
  ],
  // 32 retries of one item: the 32nd shifts 1 by 31 bits, a negative delay, and queues it at once.
  ["backoff overflows", ["backoff"], 32, /^retry\((.+)\) at failure 32 queued \1 at once, but it waits until/],
  // addAfter(a, 1), addAfter(b, 1), advance(1), get(): b, not a.
  [
    "ties LIFO",
    ["due-order"],
    4,
    /^get\(\) handed out (.+) before (.+), but both fell due at [\d.]+, and \2's due time was set first$/,
  ],
  // addAfter(a, 1), shutDown(): waiting 0, not 1.
  ["shutdown drops waits", ["waiting-survives-shutdown"], 2, /^after shutDown\(\), waiting is 0 \(expected 1\)/],
  // addAfter(a, 1), shutDown(), advance(1): size 0, not 1.
  [
    "falling due refused while shutting down",
    ["waiting-survives-shutdown"],
    3,
    /^advance\([\d.]+\) while shutting down passed the due times of .+, but size is 0 \(expected 1\)/,
  ],
  // retry(a) with a backoff: size 1, not 0.
  [
    "retry ignores backoff",
    ["backoff"],
    1,
    /^retry\((.+)\) at failure 1 queued \1 at once, but it waits until [\d.]+: it backs off for [\d.]+ ms$/,
  ],
  // retry(a), advance(baseMs): waiting 1, not 0; or, past the due time, only the queue duration shows it (as for
  // "late by one": the item falls due late).
  [
    "backoff from the second failure",
    ["backoff", "metrics"],
    2,
    /^(.+) backed off for [\d.]+ ms after failure 1, so it fell due at [\d.]+, but after advance|the metric queueDuration.sumMs is/,
  ],
  // retry(a), add(a), get(), forget(a), retry(a), advance(baseMs): waiting 1, not 0.
  [
    "forget keeps the backoff",
    ["backoff"],
    6,
    /^(.+) backed off for [\d.]+ ms after failure 1, so it fell due at [\d.]+, but after advance\([\d.]+\) to [\d.]+ waiting is 1 \(expected 0\)$/,
  ],
  // add(a), get(), add(a), retry(a) with a backoff: waiting 1, not 0.
  [
    "retry clears the dirty mark",
    ["queued-or-dirty-does-not-wait"],
    4,
    /^retry\((.+)\) made \1 wait \(waiting is 1 \(expected 0\)\), but it was in flight \+ dirty, so it does not wait/,
  ],
  // addAfter(a, 0): waiting 1, not 0.
  [
    "zero delay waits",
    ["not-positive-is-add"],
    1,
    /^addAfter\((.+), (0|-[\d.]+)\) must be add\(\1\), as its delay is not positive, but size is 0 \(expected 1\), waiting is 1 \(expected 0\)$/,
  ],
  // addAfter(a, 0.125) throws (or addAfter(a, -0.5), an add whose delay is not whole).
  [
    "whole delays only",
    ["add-after-errors"],
    1,
    /^addAfter\(.+, -?[\d.]+\) throws RangeError: .*, but only an item that is undefined or null, or a delay that is not a finite number, throws$/,
  ],
  // addAfter(a, 0.5), advance(0.5): size 0, not 1; or, past the due time, only the queue duration shows it.
  [
    "rounds due times up",
    ["falls-due-on-advance", "metrics"],
    2,
    /past the due times of .+ at [\d.]+, but size is 0 \(expected 1\)|the metric queueDuration.sumMs is/,
  ],
  // addAfter(a, 0.5), advance(0): size 1, not 0; or, past the due time, only the queue duration shows it.
  [
    "rounds due times down",
    ["nothing-before-due", "metrics"],
    2,
    /^after advance\([\d.]+\) to [\d.]+, size is 1 \(expected 0\), waiting is 0 \(expected 1\), but the items still waiting are not due: .+ until [\d.]+ first$|the metric queueDuration.sumMs is/,
  ],
  // An advance to the due time exactly leaves the item waiting (the size is short); one past it queues the item at
  // the end of the advance instead of at its due time, which only its queue duration shows.
  [
    "late by one",
    ["falls-due-on-advance", "metrics"],
    2,
    /past the due times of .+ at [\d.]+, but size is 0 \(expected 1\)|the metric queueDuration.sumMs is/,
  ],
  ["re-arms forever", ["falls-due-on-advance", "answers"], 2, /past the due times of|more than 100,000 timers/],
  ["depth counts dirty", ["metrics"], 3, /the metric /],
  ["latency from the first add", ["metrics"], 5, /the metric /],
  ["every add counts", ["metrics"], 2, /the metric /],
  ["give-ups count as retries", ["metrics"], 1, /the metric /],
  ["gauges on a ticker", ["metrics"], 3, /the metric /],
];

/**
 * The runs within which each defect must be found, of the 2,000 allowed (the independence probe's 2 included): a
 * tenth, where the issue asked for "under 10 s" on a loaded 2-core machine. Speed itself is not asserted (it is
 * measured in docs/performance.md); the runs are the same on every machine. At the fixed seed every row is found
 * within 12 runs; over seeds 1 to 10 the slowest was `backoff overflows`, at run 188 (it needs a deep run whose
 * `maxRetries` passes 32).
 */
const foundWithin = 200;

for (const [defect, rules, shortest, detail] of cases) {
  test(`the gate rejects a timed queue whose defect is: ${defect}, naming ${rules.join(" or ")}, within ${foundWithin} runs and 1.5 times its shortest counterexample`, async () => {
    const started = performance.now();
    const report = await checkConformance((o) => new TimedQueue(o, defect), { ...options, shrinkTimeMs: 600_000 });
    const found = formatReport(report, (token) => `WORKQUEUE_REPLAY=${token}`);
    const seconds = ((performance.now() - started) / 1000).toFixed(1);
    console.log(
      `${defect}: run ${report.runs}, ${report.counterexample?.steps.length} calls, ${report.counterexample?.invariant.id}, ${seconds} s: ${report.counterexample?.detail}`,
    );
    expect(report.verdict, found).toBe("does not conform");
    expect(rules, found).toContain(report.counterexample?.invariant.id);
    expect(report.counterexample?.steps.length, found).toBeLessThanOrEqual(Math.floor(shortest * 1.5));
    expect(report.counterexample?.detail, found).toMatch(detail);
    expect(report.runs, found).toBeLessThanOrEqual(foundWithin);
  }, 180_000); // up to 2,000 runs and 500,000 calls of shrinking ("backoff overflows": 24 s loaded, once over 60 s)
}
