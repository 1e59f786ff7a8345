/**
 * The workers property is sharp: it rejects a controller loop with one of the defects it exists for (docs/spec.md
 * §15), naming the invariant it breaks. The check stops at the first failing run. (The wrong queues of the lifecycle
 * are the zoo of `checkLifecycle`, in lifecycle-zoo.test.ts.)
 */
import * as fc from "fast-check";
import { expect, test } from "vitest";
import { LifecycleViolation } from "../engine/lifecycle-run.js";
import { lifecycle } from "./lifecycle/invariants.js";
import { runWorkersScenario, workersScenario } from "./lifecycle/workers.js";
import { scheduledParams } from "./settings.js";
import { doneOnlyOnSuccess } from "./wrong-queues.js";

test("the workers property rejects a loop that does not done an item after a failure", async () => {
  const property = fc.asyncProperty(fc.scheduler(), workersScenario, (s, scenario) =>
    runWorkersScenario(s, scenario, undefined, doneOnlyOnSuccess),
  );
  const details = await fc.check(property, { ...scheduledParams(1000), endOnFailure: true });
  expect(details.failed, `not caught in ${details.numRuns} runs (seed ${details.seed})`).toBe(true);
  const error = details.errorInstance;
  expect(error instanceof LifecycleViolation ? error.invariant : error).toBe(lifecycle.workersEnd);
});
