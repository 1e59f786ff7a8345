/**
 * How readily the default run finds a timed defect: a short one must be found by every seed, not by most. Each
 * wrong timed queue below is checked with the default options and `time: true` (as a new user would), and with
 * the options a check over the protocol runs with (strings, finite `maxRetries`, shutdown), over 10 fixed seeds;
 * each seed's run must reject it. The runs and calls it took to find are printed, to follow the distribution.
 */
import { expect, test } from "vitest";
import type { Profile } from "../../core/commands.js";
import { stringItems } from "../../core/universes.js";
import { checkConformance } from "../../sequential/check-conformance.js";
import type { ConformanceOptions } from "../../sequential/options.js";
import { type TimedDefect, TimedQueue } from "../wrong/timed.js";

/** The fixed seeds. */
const seeds = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10];

/** The option sets: the default, and those of a check over the protocol. */
const settings: Record<string, ConformanceOptions> = {
  default: { time: true },
  "as over the protocol": {
    time: true,
    items: stringItems,
    finiteMaxRetries: true,
    shutDown: true,
  },
};

/**
 * Each defect, with its shortest counterexample: `retry clears the dirty mark` takes 4 calls (`add(a)`, `get()`,
 * `add(a)`, `retry(a)` with a backoff: waiting 1, not 0); `rounds due times up` takes 2, but only with a fractional
 * delay or step (`addAfter(a, 0.5)`, `advance(0.5)`); `forget keeps the backoff` takes 6, and only with a backoff whose
 * base is below its maximum (`retry(a)`, `advance` to its due time, `get()`, `forget(a)`, `retry(a)`, `advance` to
 * its due time: still waiting), which the flaky items of timed runs reach (properties/core/flaky.ts).
 */
const cases: [TimedDefect, string, Profile][] = [
  ["retry clears the dirty mark", "default", "robust"],
  ["retry clears the dirty mark", "default", "contract"],
  ["retry clears the dirty mark", "as over the protocol", "robust"],
  ["retry clears the dirty mark", "as over the protocol", "contract"],
  ["rounds due times up", "default", "robust"],
  ["rounds due times up", "as over the protocol", "contract"],
  ["forget keeps the backoff", "default", "robust"],
];

test.each(cases)(
  "the run finds a timed queue whose defect is: %s, in every one of 10 seeds (%s options, %s profile)",
  async (defect, setting, profile) => {
    const found: string[] = [];
    const missed: number[] = [];
    for (const seed of seeds) {
      const options = { ...settings[setting], profile, seed };
      const report = await checkConformance((o) => new TimedQueue(o, defect), options);
      if (report.verdict === "conforms") missed.push(seed);
      else found.push(`seed ${seed}: run ${report.runs}, ${report.commands} calls`);
    }
    console.log(`${defect} (${setting}, ${profile}): ${found.join("; ")}`);
    expect(missed, `seeds whose default run passes the queue: ${missed.join(", ")}`).toEqual([]);
  },
);
