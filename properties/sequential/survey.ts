/**
 * The survey: every run of a check, in order, with runs started ahead of the one being verified when the driver
 * allows it. Over a pipe this keeps the implementation busy while the gate plans and verifies, instead of each
 * side waiting for the other once per run. A failure found here is then shrunk by fast-check (see conformance.ts).
 */
import type { Scenario } from "../core/arbitraries.js";
import type { Plan, Planning } from "../core/commands.js";
import type { Driver, Observe } from "../core/driver.js";
import { isThenable, type MaybePromise } from "../core/subject.js";
import { type VerifyOptions, type Violation, verifyStarted } from "../core/verify.js";
import { planOf } from "./plan.js";

/** The first failing run of a survey, if any. */
export interface SurveyResult {
  /** The index of the first run that broke an invariant, or `-1` when none did. */
  readonly failing: number;
  /** That run's violation, unshrunk. */
  readonly violation?: Violation | undefined;
}

/**
 * Runs `inputs` in order on `driver` and verifies each, stopping at the first violation, once the runs started
 * ahead of it have answered. Up to `driver.lookahead` runs are planned and started before the run being verified
 * is checked; `onRun` is told of each verified run.
 */
export async function survey(
  inputs: readonly Scenario[],
  driver: Driver,
  options: VerifyOptions,
  onRun: (plan: Plan) => void,
): Promise<SurveyResult> {
  const plans: Planning[] = [];
  const started: MaybePromise<Observe>[] = [];
  const startUpTo = (last: number) => {
    for (let k = started.length; k <= last && k < inputs.length; k++) {
      const input = inputs[k] as Scenario;
      const planning = planOf(input);
      const run = driver.start(input.maxRetries, planning.plan, input.backoff);
      // A run started ahead may fail after the survey stopped; its error is the survey's only if it is awaited.
      if (isThenable(run)) Promise.resolve(run).catch(() => {});
      plans.push(planning);
      started.push(run);
    }
  };
  for (const [k, input] of inputs.entries()) {
    startUpTo(k + (driver.lookahead ?? 0));
    const { plan, expected } = plans[k] as Planning;
    const run = started[k] as MaybePromise<Observe>;
    const violation = await verifyStarted(
      run,
      { maxRetries: input.maxRetries, backoff: input.backoff, plan, expected },
      options,
    );
    onRun(plan);
    if (violation !== undefined) {
      // The runs started ahead are read to their end now, so that shrinking, next, starts on an idle
      // implementation and is not charged with reading them.
      await Promise.allSettled(started.slice(k + 1));
      return { failing: k, violation };
    }
  }
  return { failing: -1 };
}
