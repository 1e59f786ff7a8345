/**
 * The lifecycle properties are sharp: each rejects an implementation with one of the defects they exist for
 * (docs/spec.md §16), naming the invariant it breaks. Each check stops at the first failing run.
 */
import * as fc from "fast-check";
import { expect, test } from "vitest";
import { lifecycle } from "./lifecycle/invariants.js";
import { LifecycleViolation } from "./lifecycle/run.js";
import { runTakers, takersScenario } from "./lifecycle/takers.js";
import { runWorkersScenario, workersScenario } from "./lifecycle/workers.js";
import { scheduledParams } from "./settings.js";
import { doneOnlyOnSuccess, EarlyDrain, NewestTakeFirst } from "./wrong-queues.js";

const cases = [
  [
    "a drain that resolves once nothing is in flight, though items are queued",
    fc.asyncProperty(fc.scheduler(), takersScenario, (s, scenario) =>
      runTakers(s, scenario, (options) => new EarlyDrain(options)),
    ),
    lifecycle.drainExact,
  ],
  [
    "waiting takes served newest first",
    fc.asyncProperty(fc.scheduler(), takersScenario, (s, scenario) =>
      runTakers(s, scenario, (options) => new NewestTakeFirst(options)),
    ),
    lifecycle.fifo,
  ],
  [
    "a loop that does not done an item after a failure",
    fc.asyncProperty(fc.scheduler(), workersScenario, (s, scenario) =>
      runWorkersScenario(s, scenario, undefined, doneOnlyOnSuccess),
    ),
    lifecycle.workersEnd,
  ],
] as const;

test.each(cases)("the lifecycle properties reject %s", async (_, property, invariant) => {
  const details = await fc.check(property, { ...scheduledParams(1000), endOnFailure: true });
  expect(details.failed, `not caught in ${details.numRuns} runs (seed ${details.seed})`).toBe(true);
  const error = details.errorInstance;
  expect(error instanceof LifecycleViolation ? error.invariant : error).toBe(invariant);
});
