/**
 * The gate's machine-readable reports: JSON for programs, JUnit XML for CI dashboards.
 */
import { XMLBuilder } from "fast-xml-parser";
import type { ConformanceReport } from "./conformance.js";
import { showOperation } from "./operation.js";
import type { ProtocolBreach } from "./protocol/session.js";
import { formatSteps } from "./report.js";

/** The outcome of one gate run: a report, or the breach that stopped it. */
export interface GateOutcome {
  /** What was checked, in words: the command line or the module. */
  readonly target: string;
  /** The report, when the check ran to its end. */
  readonly report?: ConformanceReport | undefined;
  /** The breach, when the implementation broke the protocol. */
  readonly breach?: ProtocolBreach | undefined;
  /** How long the check took, in milliseconds. */
  readonly durationMs: number;
  /** The exit code the gate ends with. */
  readonly exitCode: number;
}

/** The verdict of an outcome in words. */
function verdictOf(outcome: GateOutcome): string {
  return outcome.breach === undefined ? (outcome.report?.verdict ?? "not checked") : "broke the protocol";
}

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
              call: showOperation(step.operation),
              ...step,
            })),
          },
        }),
    ...(breach === undefined
      ? {}
      : { breach: { kind: breach.kind, message: breach.message, stderrTail: breach.stderrTail } }),
  };
}

/** The outcome as a JUnit XML document: one test suite with one test case, failed or in error when it did not pass. */
export function toJunit(outcome: GateOutcome): string {
  const { report, breach } = outcome;
  const name = `${report?.profile ?? "protocol"} profile conforms to docs/spec.md`;
  const testcase: Record<string, unknown> = {
    "@_name": name,
    "@_classname": "workqueue-conformance",
    "@_time": (outcome.durationMs / 1000).toFixed(3),
  };
  const counterexample = report?.counterexample;
  if (breach !== undefined) {
    const text = [breach.message, breach.stderrTail === "" ? "" : `stderr:\n${breach.stderrTail}`].join("\n");
    testcase.error = { "@_type": breach.kind, "@_message": `broke the protocol: ${breach.message}`, "#text": text };
  } else if (counterexample !== undefined) {
    testcase.failure = {
      "@_type": counterexample.invariant.rule,
      "@_message": counterexample.invariant.name,
      "#text": [...formatSteps(counterexample), `replay: ${counterexample.replay}`].join("\n"),
    };
  }
  const suite = {
    "@_name": `workqueue-conformance: ${outcome.target}`,
    "@_tests": 1,
    "@_failures": counterexample === undefined || breach !== undefined ? 0 : 1,
    "@_errors": breach === undefined ? 0 : 1,
    "@_time": (outcome.durationMs / 1000).toFixed(3),
    testcase,
  };
  const builder = new XMLBuilder({ ignoreAttributes: false, format: true, suppressEmptyNode: true });
  return `<?xml version="1.0" encoding="UTF-8"?>\n${builder.build({ testsuites: { testsuite: suite } })}`;
}
