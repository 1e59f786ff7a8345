import { defineConfig } from "vitest/config";
import { BaseSequencer, type TestSpecification } from "vitest/node";
import base from "./vitest.config.js";

// Mutation testing of the PostgreSQL queue (npm run mutate:postgres): its suites, on the machine's server, with a
// fixed seed and a quarter of their runs, as under .config/vitest.stryker.config.ts. Not part of `npm run mutate`:
// it reports a score, it does not gate.

/**
 * The suites without a database first, then vitest's own order (the suites that failed last time first, then the
 * slowest): a mutant they kill fails within a second, before a suite on the server waits out what it broke, and
 * under Stryker a suite that killed the last mutant is tried first on the next.
 */
class WithoutDatabaseFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const fast = (file: TestSpecification) => withoutDatabase.some((path) => file.moduleId.endsWith(path));
    return [...sorted.filter(fast), ...sorted.filter((file) => !fast(file))];
  }
}

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
