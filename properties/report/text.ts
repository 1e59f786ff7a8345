/**
 * Reports in words: a counterexample as numbered calls in the spec's verbs, the broken invariant and how to replay
 * it; a passing check as one line of figures.
 */

import type { Views } from "../core/invariants.js";
import { wrongViews } from "../core/invariants.js";
import { sameAnswer } from "../core/operation.js";
import { answersNothing, plural, showAnswer, showCall } from "../core/render.js";
import type { Step } from "../core/verify.js";
import type { LifecycleReport } from "../lifecycle/check-lifecycle.js";
import { inProcessConstruction } from "../sequential/construction.js";
import { type ConformanceReport, type Counterexample, skippedChecks } from "../sequential/report.js";
import { formatLifecycleReport } from "./lifecycle-text.js";

/** The views a step showed: `size 1, inFlight 0`. */
function showViews(views: Views): string {
  const parts: string[] = [];
  if (views.size !== undefined) parts.push(`size ${views.size}`);
  if (views.inFlight !== undefined) parts.push(`inFlight ${views.inFlight}`);
  if (views.shuttingDown === true) parts.push("shutting down");
  return parts.join(", ");
}

/** What a step's call answered, as a numbered line shows it: nothing, `→ value`, or `throws TypeError: …`. */
function showStepAnswer(step: Step): string {
  if (answersNothing(step.operation.verb, step.actual)) return "";
  return step.actual.kind === "error" ? showAnswer(step.actual) : `→ ${showAnswer(step.actual)}`;
}

/** What the model expected at a step, where the implementation showed something else. */
function showExpected(step: Step): string {
  const parts: string[] = [];
  if (!sameAnswer(step.expected, step.actual, true)) parts.push(showAnswer(step.expected));
  for (const view of wrongViews(step.expectedViews, step.actualViews))
    parts.push(`${view} ${step.expectedViews[view]}`);
  return parts.length === 0 ? "" : `   expected ${parts.join(", ")}`;
}

/** How the counterexample's queue was made, with every option that decided it (see `construction.ts`). */
function construction(counterexample: Counterexample): string {
  return counterexample.construction ?? inProcessConstruction(counterexample.maxRetries, counterexample.backoff);
}

/**
 * A counterexample as lines: the construction, then each call numbered with the implementation's answer and
 * views, the model's expectation beside the failing call, and what went wrong:
 * ```
 * new WorkQueue({ maxRetries: 0 })
 * 1. add("b")      size 1
 * 2. get() → "b"   size 0
 * 3. add("b")      size 0
 * 4. done("b")     size 0   expected size 1
 * ✗ done("b") did not requeue "b", which was marked dirty while in flight
 * ```
 */
export function formatSteps(counterexample: Counterexample): string[] {
  const digits = String(counterexample.steps.length).length;
  const rows = counterexample.steps.map((step, i) => ({
    call: `${`${i + 1}.`.padStart(digits + 1)} ${showCall(step.operation)} ${showStepAnswer(step)}`.trimEnd(),
    views: showViews(step.actualViews),
  }));
  const width = Math.max(...rows.map((row) => row.call.length)) + 3;
  const last = counterexample.steps.at(-1);
  return [
    construction(counterexample),
    ...rows.map((row, i) => {
      const expected = i === rows.length - 1 && last !== undefined ? showExpected(last) : "";
      return (row.views === "" ? row.call : row.call.padEnd(width) + row.views) + expected;
    }),
    ...`✗ ${counterexample.detail}`.split("\n"),
  ];
}

/**
 * A report in words. A conforming check is one line of figures; a failing one names the broken invariant or
 * lifecycle rule and its section of docs/spec.md, prints the steps (for a lifecycle report, the calls and the
 * scheduled resolutions in the order they happened), and ends with how to replay them, as `replay(token)` words it.
 *
 * @param report - What `checkConformance`, `checkDriver` or `checkLifecycle` resolved with.
 * @param replay - Words the command that replays a token, for the last line of a failing report.
 * @defaultValue `checkConformance(factory, { replay: "…" })`, or `checkLifecycle(…)` for a lifecycle report
 * @example
 * ```ts
 * import { checkConformance, checkLifecycle, formatReport } from "workqueue-spec/properties";
 *
 * const report = await checkConformance((options) => new MyQueue(options));
 * console.log(formatReport(report, (token) => `checkConformance(factory, { replay: "${token}" })`));
 * console.log(formatReport(await checkLifecycle((options) => new MyQueue(options))));
 * ```
 *
 * @public
 */
export function formatReport(report: ConformanceReport | LifecycleReport, replay?: (token: string) => string): string {
  const check = "rules" in report ? "checkLifecycle" : "checkConformance";
  const words = replay ?? ((token: string) => `${check}(factory, { replay: ${JSON.stringify(token)} })`);
  return "rules" in report ? formatLifecycleReport(report, words) : formatConformance(report, words);
}

/** {@link formatReport} of a report of `checkConformance` or `checkDriver`. */
function formatConformance(report: ConformanceReport, replay: (token: string) => string): string {
  const overlapping =
    report.overlapping === undefined ? "" : `, and ${plural(report.overlapping.runs, "run")} of overlapping calls`;
  const figures = `${plural(report.runs, "run")}, ${plural(report.commands, "command")}, ${plural(report.invariants.length, "invariant")} checked after every step${overlapping}`;
  const { counterexample } = report;
  const drawn = `items: ${report.items}`;
  const without = report.unchecked
    .map((view) => `\n  checked without ${view}: skipped ${skippedChecks[view]}`)
    .join("");
  if (counterexample === undefined) {
    return `✓ ${report.profile} profile conforms: ${figures} (seed ${report.seed}, ${drawn})${without}`;
  }
  const shrunk = `shrunk ${plural(counterexample.shrinks, "time")} in ${(counterexample.shrinkMs / 1000).toFixed(1)} s`;
  const minimal = counterexample.minimal ? "" : `; ${stopped(counterexample)}, so a shorter one may exist`;
  return [
    `✗ ${report.profile} profile does not conform: ${counterexample.invariant.name} (docs/spec.md ${counterexample.invariant.rule})`,
    ...formatSteps(counterexample).map((line) => `    ${line}`),
    `  found after ${plural(report.runs, "run")}, ${shrunk}${minimal} (seed ${report.seed}, ${drawn})`,
    `  replay: ${replay(counterexample.replay)}${without}`,
  ].join("\n");
}

/** Why shrinking stopped before its end, as the report says it. */
function stopped(counterexample: Counterexample): string {
  if (counterexample.stoppedBy === "time") {
    return `shrinking stopped at its safety net of ${(counterexample.shrinkTimeMs / 1000).toFixed(1)} s (--shrink-time-ms), not at its budget of calls`;
  }
  if (counterexample.stoppedBy === "calls") {
    return `the shrinking budget of ${counterexample.shrinkCalls} calls ran out (--shrink-calls)`;
  }
  return "the shrinking budget ran out";
}

/**
 * `text` without terminal escape sequences (colours, cursor moves, titles) or other control characters but tab and
 * newline, for a reader who asked for plain text (`TERM=dumb`, `NO_COLOR`): what an implementation printed to its
 * stderr is shown as its words alone.
 */
export function withoutEscapes(text: string): string {
  return (
    text
      // biome-ignore lint/suspicious/noControlCharactersInRegex: matching the escape sequences is the point
      .replace(/\u001b\[[0-?]*[ -/]*[@-~]|\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)|\u001b[@-Z\\-_]/g, "")
      // biome-ignore lint/suspicious/noControlCharactersInRegex: so is matching the control characters left
      .replace(/[\u0000-\u0008\u000b-\u001f\u007f]/g, "")
  );
}
