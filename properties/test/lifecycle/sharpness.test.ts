/**
 * The workers property is sharp: it rejects controller loops with the defects it exists for (docs/spec.md
 * §15), naming the invariant it breaks. The check stops at the first failing run. (The wrong queues of the lifecycle
 * are the zoo of `checkLifecycle`, in lifecycle-zoo.test.ts.)
 */
import * as fc from "fast-check";
import { expect, test } from "vitest";
import { LifecycleViolation } from "../../lifecycle/run.js";
import { scheduledParams } from "../settings.js";
import { doneOnlyOnSuccess, forgetsAfterAFailureToo } from "../wrong-queues.js";
import { lifecycle } from "./invariants.js";
import { runWorkersScenario, workersScenario } from "./workers.js";

const loops = [
  ["a loop that does not done an item after a failure", doneOnlyOnSuccess, lifecycle.workersEnd],
  ["a loop that forgets an item after a failure too", forgetsAfterAFailureToo, lifecycle.calls],
] as const;

test.each(loops)("the workers property rejects %s", async (_, loop, invariant) => {
  const property = fc.asyncProperty(fc.scheduler(), workersScenario, (s, scenario) =>
    runWorkersScenario(s, scenario, undefined, loop),
  );
  const details = await fc.check(property, { ...scheduledParams(1000), endOnFailure: true });
  expect(details.failed, `not caught in ${details.numRuns} runs (seed ${details.seed})`).toBe(true);
  const error = details.errorInstance;
  expect(error instanceof LifecycleViolation ? error.invariant : error).toBe(invariant);
});
