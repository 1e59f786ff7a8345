/**
 * The gate's JSON report, for programs.
 */
import { showCall } from "../engine/render.js";
import { type GateOutcome, verdictOf } from "./outcome.js";

/** The outcome as a JSON value; an `undefined` answer has no `value` key. */
export function toJson(outcome: GateOutcome): object {
  const { report, breach } = outcome;
  const counterexample = report?.counterexample;
  return {
    target: outcome.target,
    verdict: verdictOf(outcome),
    exitCode: outcome.exitCode,
    durationMs: Math.round(outcome.durationMs),
    ...(report === undefined
      ? {}
      : {
          profile: report.profile,
          runs: report.runs,
          commands: report.commands,
          seed: report.seed,
          invariants: report.invariants.map(({ name, rule }) => ({ name, rule })),
        }),
    ...(counterexample === undefined
      ? {}
      : {
          counterexample: {
            invariant: { name: counterexample.invariant.name, rule: counterexample.invariant.rule },
            detail: counterexample.detail,
            maxRetries: counterexample.maxRetries,
            shrinks: counterexample.shrinks,
            replay: counterexample.replay,
            steps: counterexample.steps.map((step, i) => ({
              step: i + 1,
              call: showCall(step.operation),
              ...step,
            })),
          },
        }),
    ...(breach === undefined
      ? {}
      : { breach: { kind: breach.kind, message: breach.message, stderrTail: breach.stderrTail } }),
  };
}
