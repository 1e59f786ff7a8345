/**
 * The gate's JSON report, for programs.
 */
import { showCall } from "../core/render.js";
import { type GateOutcome, verdictOf } from "./outcome.js";

/** The version of the JSON report's format, `formatVersion` (see report.schema.json). */
export const jsonFormatVersion = 3;

/**
 * The outcome as a JSON value, in the format of `report.schema.json`: an `undefined` answer has no `value` key (nor
 * an unknown profile, after a usage error that left the command line unread), and
 * `Infinity` (a `maxRetries`) is the string `"Infinity"`, never JSON's `null`. `lines` are the counterexample as
 * protocol v1 requests and expected replies, over the protocol.
 */
export function toJson(outcome: GateOutcome, lines?: readonly string[]): object {
  const { report, breach, error } = outcome;
  const counterexample = report?.counterexample;
  const json = {
    formatVersion: jsonFormatVersion,
    target: outcome.target,
    profile: outcome.profile,
    verdict: verdictOf(outcome),
    exitCode: outcome.exitCode,
    durationMs: Math.round(outcome.durationMs),
    ...(error === undefined ? {} : { error }),
    ...(report === undefined
      ? {}
      : {
          items: report.items,
          unchecked: report.unchecked,
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
            ...(counterexample.backoff === undefined ? {} : { backoff: counterexample.backoff }),
            shrinks: counterexample.shrinks,
            minimal: counterexample.minimal,
            ...(counterexample.stoppedBy === undefined ? {} : { stoppedBy: counterexample.stoppedBy }),
            shrinkMs: Math.round(counterexample.shrinkMs),
            shrinkCalls: counterexample.shrinkCalls,
            shrinkTimeMs: counterexample.shrinkTimeMs,
            shrinkRuns: counterexample.shrinkRuns,
            shrinkCommands: counterexample.shrinkCommands,
            replay: counterexample.replay,
            ...(lines === undefined ? {} : { protocolLines: lines }),
            ...(counterexample.round === undefined ? {} : { round: counterexample.round }),
            ...(counterexample.overlapping === undefined ? {} : { overlapping: counterexample.overlapping }),
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
  // JSON has no Infinity: spell it out rather than let JSON.stringify write null.
  return JSON.parse(JSON.stringify(json, (_, value) => (value === Number.POSITIVE_INFINITY ? "Infinity" : value)));
}
