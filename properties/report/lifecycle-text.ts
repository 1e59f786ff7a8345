/**
 * The lifecycle report as text: the verdict, and on failure the rule, the interleaving, the scheduler's report, the
 * run's input, the seed and how to replay it.
 */

import { plural } from "../core/render.js";
import type { LifecycleReport } from "../lifecycle/check-lifecycle.js";

/**
 * Renders a lifecycle report for a person (`formatReport` of a lifecycle report): one line when the queue conforms;
 * otherwise the broken rule, the calls and the scheduled resolutions in the order they happened, the seed, and the
 * replay, as `replay(token)` words it.
 *
 * @internal
 */
export function formatLifecycleReport(report: LifecycleReport, replay: (token: string) => string): string {
  const checked = `${plural(report.rules.length, "rule")}${report.time ? ", with time" : ""}`;
  const unchecked =
    report.unchecked.length === 0 ? "" : `; not offered, so not checked: ${report.unchecked.join(", ")}`;
  const example = report.counterexample;
  if (example === undefined) {
    return `the queue keeps the lifecycle rules: ${plural(report.runs, "run")}, ${checked} (seed ${report.seed})${unchecked}`;
  }
  return [
    `the queue breaks a lifecycle rule: ${example.rule.name} (docs/spec.md ${example.rule.rule})`,
    `  ✗ ${example.detail}`,
    "  interleaving (▸ a task released by the scheduler, in its order; indented, the calls and resolutions that followed):",
    ...example.log.map((line, i) => `    ${String(i + 1).padStart(3)} ${line}`),
    "  the scheduler's report (tasks in the order it released them):",
    ...example.schedule.map((line) => `    ${line}`),
    `  scenario: ${example.scenario}`,
    `  found after ${plural(report.runs, "run")}, shrunk ${plural(example.shrinks, "time")}${example.minimal ? "" : ` (${example.stoppedBy === "time" ? "shrinking stopped at its safety net of time, --shrink-time-ms" : "the shrinking budget ran out"}: it may not be minimal)`} (seed ${report.seed}); ${checked}${unchecked}`,
    `  replay: ${replay(example.replay)}`,
  ].join("\n");
}
