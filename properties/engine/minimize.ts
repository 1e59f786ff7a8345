/**
 * The last step of shrinking. fast-check shrinks the generated commands, and stops where removing any one of them
 * changes what the others do (a `done` of "the 2nd item in flight" names another item once an earlier `get` is
 * gone). The failing plan itself is made of concrete calls, so removing calls from it has no such knock-on effect:
 * this removes chunks of calls, then single calls, as long as the plan still fails and the profile still allows it.
 */
import type { Plan, Profile } from "./commands.js";
import type { Driver } from "./driver.js";
import type { Backoff, Operation } from "./operation.js";
import { perform } from "./subject.js";
import { modelOf, type VerifyOptions, type Violation, verifyStarted } from "./verify.js";

/** Whether `plan` is a sequence `profile` may make: in the contract profile, `done` and `retry` only of items held. */
function allowed(plan: readonly Operation[], profile: Profile, maxRetries: number, backoff?: Backoff): boolean {
  if (profile === "robust") return true;
  const model = modelOf(maxRetries, backoff);
  return plan.every((operation) => {
    const held = operation.verb === "done" || operation.verb === "retry";
    if (held && !model.stateOf(operation.item).startsWith("in flight")) return false;
    perform(model, operation);
    return true;
  });
}

/** Where minimizing stops early. */
export interface MinimizeLimits {
  /** The `performance.now()` after which no more attempts are made: the shrinking budget. */
  readonly deadline?: number | undefined;
  /** The removals after which it stops: a replay repeats exactly the removals the original made. */
  readonly removals?: number | undefined;
}

/**
 * Removes calls from the plan of `violation` while the implementation still breaks an invariant on what is left:
 * halves, quarters, … of the plan, then single calls until no single call can go. Resolves with the shortest
 * violation found, how many removals it took, how many calls the attempts made, and whether the deadline stopped
 * it before no single call could go. Each attempt is one run on a
 * fresh queue; a removal is kept only if that run fails, so an implementation that answers differently from run to
 * run at worst keeps the plan as it was.
 */
export async function minimize(
  violation: Violation,
  driver: Driver,
  profile: Profile,
  options: VerifyOptions,
  limits: MinimizeLimits = {},
): Promise<{ violation: Violation; removals: number; runs: number; commands: number; stopped: boolean }> {
  let best = violation;
  let removals = 0;
  let runs = 0;
  let commands = 0;
  let stopped = false;
  /** Whether a limit says to stop now: the deadline passed, or the removals a replay must repeat are made. */
  const stop = () => {
    if (removals >= (limits.removals ?? Number.POSITIVE_INFINITY)) return true;
    stopped ||= limits.deadline !== undefined && performance.now() > limits.deadline;
    return stopped;
  };
  /** One pass removing chunks of `size` calls; whether it removed any. */
  const pass = async (size: number): Promise<boolean> => {
    const before = removals;
    for (let start = 0; start < best.steps.length && !stop(); ) {
      const plan: Plan = best.steps.map((step) => step.operation);
      plan.splice(start, size);
      if (plan.length === 0 || !allowed(plan, profile, best.maxRetries, best.backoff)) {
        start += size;
        continue;
      }
      runs++;
      commands += plan.length;
      const { maxRetries, backoff } = best;
      const shorter = await verifyStarted(driver.start(maxRetries, plan, backoff), maxRetries, plan, options, backoff);
      if (shorter === undefined) start += size;
      else {
        best = shorter;
        removals++;
      }
    }
    return removals > before;
  };
  /**
   * Lowers `maxRetries` to the smallest value, from 0 up, at which the plan still fails and the profile still
   * allows it: a bug that shows with a bound of 3 usually shows with 0, in fewer calls. Counts as one removal.
   */
  const lower = async (): Promise<boolean> => {
    const ceiling = Math.min(best.maxRetries, 7);
    for (let lowered = 0; lowered < ceiling && !stop(); lowered++) {
      const plan: Plan = best.steps.map((step) => step.operation);
      if (!allowed(plan, profile, lowered, best.backoff)) continue;
      runs++;
      commands += plan.length;
      const { backoff } = best;
      const failing = await verifyStarted(driver.start(lowered, plan, backoff), lowered, plan, options, backoff);
      if (failing === undefined) continue;
      best = failing;
      removals++;
      return true;
    }
    return false;
  };
  for (let size = best.steps.length >> 1; size > 1; size >>= 1) await pass(size);
  do while ((await pass(1)) && !stop());
  while (!stop() && (await lower()));
  return { violation: best, removals, runs, commands, stopped };
}
