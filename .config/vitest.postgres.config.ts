import { defineConfig } from "vitest/config";
import { BaseSequencer, type TestSpecification } from "vitest/node";
import base from "./vitest.config.js";

// Mutation testing of the PostgreSQL queue (npm run mutate:postgres): its suites, on the machine's server, with a
// fixed seed and a quarter of their runs, as under .config/vitest.stryker.config.ts. Not part of `npm run mutate`:
// it reports a score, it does not gate.

/**
 * The suites of the batcher and the lease buffer first, in the order of `partsFirst`; then the other suites without
 * a database; then vitest's own order (the suites that failed last time first, then the slowest): a mutant they
 * kill fails within a second, before a suite on the server waits out what it broke, and under Stryker a suite that
 * killed the last mutant is tried first on the next. The parts' suites come first because a mutant of a part can
 * spin or wait without end under a queue, whose suites then fail only by Stryker's hit limit or a time limit:
 * a batcher that sends an empty batch after each answer spins on a pool that answers at once, which `batch.test.ts`,
 * whose statements the test answers by hand, sees at its first step.
 */
class WithoutDatabaseFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (file: TestSpecification) => {
      const part = partsFirst.findIndex((path) => file.moduleId.endsWith(path));
      if (part !== -1) return part;
      return withoutDatabase.some((path) => file.moduleId.endsWith(path)) ? partsFirst.length : partsFirst.length + 1;
    };
    return sorted.sort((a, b) => rank(a) - rank(b)); // a stable sort: vitest's order within each rank
  }
}

/** The suites of the parts under the queue, run first in this order (see {@link WithoutDatabaseFirst}). */
const partsFirst = [
  "properties/test/postgres/batch.test.ts",
  "properties/test/postgres/lease-buffer.test.ts",
  "properties/test/postgres/turns.test.ts",
  "properties/test/postgres/prefetched.test.ts",
];

const withoutDatabase = [
  "properties/test/postgres/lease-loop.test.ts",
  "properties/test/postgres/batch.test.ts",
  "properties/test/postgres/turns.test.ts",
  "properties/test/postgres/lease-buffer.test.ts",
  "properties/test/postgres/prefetched.test.ts",
  "properties/test/postgres/waking.test.ts",
  "properties/test/postgres/answers.test.ts",
  "properties/test/postgres/options.test.ts",
];

const include = [
  ...withoutDatabase,
  "properties/test/postgres/conformance.test.ts",
  "properties/test/postgres/leases.test.ts",
  "properties/test/postgres/concurrency.test.ts",
  "properties/test/postgres/database-faults.test.ts",
  "properties/test/postgres/input.test.ts",
  "properties/test/postgres/waiting.test.ts",
  "properties/test/postgres/errors.test.ts",
  "properties/test/postgres/outage.test.ts",
  "properties/test/postgres/sleeping.test.ts",
  "properties/test/postgres/connections.test.ts",
  "properties/test/postgres/setup.test.ts",
  "properties/test/postgres/lease-workers.test.ts",
  "properties/test/postgres/batching.test.ts",
  "properties/test/postgres/set-based.test.ts",
  "properties/test/postgres/done-due.test.ts",
  "properties/test/postgres/metrics.test.ts",
  "properties/test/postgres/notifications.test.ts",
  "properties/test/postgres/prefetch.test.ts",
  "properties/test/postgres/prefetch-conformance.test.ts",
];

export default defineConfig({
  ...base,
  test: {
    ...base.test,
    env: { WORKQUEUE_SEED: "20261202", WORKQUEUE_RUNS_SCALE: "0.25", WORKQUEUE_SHAPE: "both" },
    // A mutant that leaves a take waiting fails its test here, well before Stryker's timeout would call it one.
    testTimeout: 10_000,
    include,
    sequence: { sequencer: WithoutDatabaseFirst },
  },
});
