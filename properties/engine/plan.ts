/**
 * Planning: a run's commands, applied to the model by `fc.modelRun`, give the plan — the operations that run, in
 * order — that is then replayed on the implementation.
 */
import * as fc from "fast-check";
import type { Scenario } from "./arbitraries.js";
import type { Plan } from "./commands.js";
import { modelOf } from "./verify.js";

/** Plans a run on the model: the operations that `fc.modelRun` lets through, in order. */
export function planOf(input: Scenario): Plan {
  const plan: Plan = [];
  const setup = () => ({ model: modelOf(input.maxRetries, input.backoff), real: plan });
  fc.modelRun(setup, input.commands);
  return plan;
}
