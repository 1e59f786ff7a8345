/**
 * The gate against wrong timed queues (properties/test/wrong/timed.ts): the correct one conforms, and each defect
 * is rejected, blamed on the rule it breaks, with a short counterexample.
 */
import { expect, test } from "vitest";
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

/** Each defect, the rules it may be blamed on, and the longest counterexample accepted. */
const cases: [TimedDefect, string[], number][] = [
  ["add keeps the wait", ["a waiting item is never also queued, and an add ends its wait"], 6],
  // The metrics see when the item fell due (its queue duration) one call before the size does.
  ["latest due wins", ["of two due times asked for one item, the earlier wins", "the metrics equal the model's"], 5],
  ["backoff overflows", ["nothing is handed out or queued before it is due"], 40],
  ["ties LIFO", ["items are handed out in the order they were queued"], 6],
  ["shutdown drops waits", ["items that wait when the queue shuts down still fall due"], 3],
  ["retry ignores backoff", ["nothing is handed out or queued before it is due"], 5],
  // An advance to the due time exactly leaves the item waiting (the size is short); one past it queues the item at
  // the end of the advance instead of at its due time, which only its queue duration shows: addAfter("a", 1),
  // advance(2), get() is three calls (seed 20261202 finds that one).
  ["late by one", ["an item falls due in the advance that passes its due time", "the metrics equal the model's"], 4],
  [
    "re-arms forever",
    ["an item falls due in the advance that passes its due time", "every answer equals the model's"],
    3,
  ],
  ["depth counts dirty", ["the metrics equal the model's"], 4],
  ["latency from the first add", ["the metrics equal the model's"], 7],
  ["every add counts", ["the metrics equal the model's"], 3],
  ["give-ups count as retries", ["the metrics equal the model's"], 4],
  ["gauges on a ticker", ["the metrics equal the model's"], 4],
];

for (const [defect, rules, longest] of cases) {
  test(`the gate rejects a timed queue whose defect is: ${defect}`, async () => {
    const report = await checkConformance((o) => new TimedQueue(o, defect), { ...options, shrinkTimeMs: 600_000 });
    const found = formatReport(report, (token) => `WORKQUEUE_REPLAY=${token}`);
    console.log(`${defect}: ${report.counterexample?.steps.length} calls, ${report.counterexample?.invariant.name}`);
    expect(report.verdict, found).toBe("does not conform");
    expect(rules, found).toContain(report.counterexample?.invariant.name);
    expect(report.counterexample?.steps.length, found).toBeLessThanOrEqual(longest);
  }, 180_000); // up to 2,000 runs and 500,000 calls of shrinking ("backoff overflows": 24 s loaded, once over 60 s)
}
