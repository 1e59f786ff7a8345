/**
 * Planning: a run's commands, applied to the model by `fc.modelRun`, give the plan — the operations that run, in
 * order — that is then replayed on the implementation, and what the model answered and showed after each.
 */
import * as fc from "fast-check";
import type { Scenario } from "../core/arbitraries.js";
import type { Planning } from "../core/commands.js";
import { modelOf } from "../core/verify.js";

/** Plans a run on the model: the operations that `fc.modelRun` lets through, in order, and the model's answers. */
export function planOf(input: Scenario): Planning {
  const planning: Planning = { plan: [], expected: [] };
  const setup = () => ({ model: modelOf(input.maxRetries, input.backoff), real: planning });
  fc.modelRun(setup, input.commands);
  return planning;
}
