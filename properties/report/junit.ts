/**
 * The gate's JUnit XML report, for CI dashboards: one test suite, with one test case for the check that ran.
 */

import type { GateOutcome } from "./outcome.js";
import { formatSteps } from "./text.js";
import { element } from "./xml.js";

/** The outcome as a JUnit XML document: one test suite with one test case, failed or in error when it did not pass. */
export function toJunit(outcome: GateOutcome): string {
  const { report, breach } = outcome;
  const time = (outcome.durationMs / 1000).toFixed(3);
  const counterexample = report?.counterexample;
  const name = `${report?.profile ?? "protocol"} profile conforms to docs/spec.md`;
  const children: string[] = [];
  if (breach !== undefined) {
    const text = [breach.message, breach.stderrTail === "" ? "" : `stderr:\n${breach.stderrTail}`].join("\n");
    children.push(element("error", { type: breach.kind, message: `broke the protocol: ${breach.message}` }, text));
  } else if (counterexample !== undefined) {
    const text = [...formatSteps(counterexample), `replay: ${counterexample.replay}`].join("\n");
    children.push(
      element("failure", { type: counterexample.invariant.rule, message: counterexample.invariant.name }, text),
    );
  }
  const testcase = element("testcase", { name, classname: "workqueue-conformance", time }, children);
  const suite = element(
    "testsuite",
    {
      name: `workqueue-conformance: ${outcome.target}`,
      tests: 1,
      failures: counterexample === undefined || breach !== undefined ? 0 : 1,
      errors: breach === undefined ? 0 : 1,
      time,
    },
    [testcase],
  );
  return `<?xml version="1.0" encoding="UTF-8"?>\n${element("testsuites", {}, [suite])}\n`;
}
