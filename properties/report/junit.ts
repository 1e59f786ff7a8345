/**
 * The gate's JUnit XML report, for CI dashboards: one test suite, with one test case for the profile that was checked,
 * in the structure of the Apache Ant JUnit schema, which CI dashboards read (checked by properties/test/reports/reports.test.ts).
 */

import { hostname } from "node:os";
import type { GateOutcome } from "./outcome.js";
import { formatSteps } from "./text.js";
import { element } from "./xml.js";

/** The outcome as a JUnit XML document: one test suite with one test case, failed or in error when it did not pass. */
export function toJunit(outcome: GateOutcome): string {
  const { report, breach, error } = outcome;
  const time = (outcome.durationMs / 1000).toFixed(3);
  const counterexample = report?.counterexample;
  const name =
    outcome.profile === undefined
      ? "the command line names a check to run"
      : `${outcome.profile} profile conforms to docs/spec.md`;
  const children: string[] = [];
  if (error !== undefined) {
    children.push(element("error", { type: error.kind, message: error.message }, error.message));
  } else if (breach !== undefined) {
    const text = [breach.message, breach.stderrTail === "" ? "" : `stderr:\n${breach.stderrTail}`].join("\n");
    children.push(element("error", { type: breach.kind, message: `broke the protocol: ${breach.message}` }, text));
  } else if (counterexample !== undefined) {
    const text = [...formatSteps(counterexample), `replay: ${counterexample.replay}`].join("\n");
    children.push(
      element("failure", { type: counterexample.invariant.rule, message: counterexample.invariant.name }, text),
    );
  }
  const testcase = element("testcase", { name, classname: "workqueue-conformance", time }, children);
  // Local time without a zone, to the second, as the Ant JUnit format has it.
  const started = new Date(Date.now() - outcome.durationMs);
  const local = new Date(started.getTime() - started.getTimezoneOffset() * 60_000).toISOString().slice(0, 19);
  const stderr = breach?.stderrTail ?? "";
  // The item universe the runs drew from, as the other reports name it; none when no check ran.
  const items = report === undefined ? [] : [element("property", { name: "items", value: report.items })];
  const properties = element("properties", {}, items);
  const suite = element(
    "testsuite",
    {
      package: "workqueue-conformance",
      id: 0,
      name: `workqueue-conformance: ${outcome.target}`,
      timestamp: local,
      hostname: hostname() || "localhost",
      tests: 1,
      failures: counterexample === undefined ? 0 : 1,
      errors: breach === undefined && error === undefined ? 0 : 1,
      time,
    },
    [properties, testcase, element("system-out", {}, ""), element("system-err", {}, stderr)],
  );
  return `<?xml version="1.0" encoding="UTF-8"?>\n${element("testsuites", {}, [suite])}\n`;
}
