/**
 * How the randomised suites run. By default with a fresh seed, printed on failure; `WORKQUEUE_SEED` fixes it,
 * `WORKQUEUE_REPLAY` replays one counterexample, and `WORKQUEUE_RUNS_SCALE` scales every run count (mutation
 * testing runs with a fixed seed and a quarter of the runs, see .config/vitest.stryker.config.ts).
 */
import * as fc from "fast-check";
import { assert } from "vitest";
import { plural } from "../core/render.js";
import { LifecycleViolation } from "../lifecycle/run.js";
import { formatReport } from "../report/text.js";
import type { ConformanceReport } from "../sequential/report.js";

const env = process.env;

/** The fixed seed, if any. */
export const seed = env.WORKQUEUE_SEED === undefined ? undefined : Number(env.WORKQUEUE_SEED);

/**
 * The shapes of sequence to draw, if fixed: mutation testing draws `both` (few and many items), leaving out the deep
 * runs, whose thousands of items cost minutes under Stryker's instrumentation and reach no code the others do not.
 */
export const shape = env.WORKQUEUE_SHAPE as "both" | undefined;

/** The counterexample to replay, if any. */
export const replay = env.WORKQUEUE_REPLAY;

/** `count` runs, scaled by `WORKQUEUE_RUNS_SCALE`. */
export function runs(count: number): number {
  return Math.max(1, Math.round(count * Number(env.WORKQUEUE_RUNS_SCALE ?? 1)));
}

/** fast-check parameters for a plain property: the fixed seed, if any, and the scaled run count. */
export function params(count = 200): fc.Parameters<unknown> {
  return { numRuns: runs(count), ...(seed === undefined ? {} : { seed }) };
}

/** Fails with the counterexample, its seed and the command that replays it, unless the report conforms. */
export function expectConforms(report: ConformanceReport, title: string): void {
  const text = formatReport(report, (token) => `WORKQUEUE_REPLAY=${token} npm test -- -t "${title}"`);
  if (report.verdict !== "conforms") assert.fail(text);
}

/**
 * fast-check parameters for a scheduled property: those of {@link params}, or, with `WORKQUEUE_REPLAY=seed,path`,
 * exactly the one counterexample it names.
 */
export function scheduledParams(count: number): fc.Parameters<unknown> {
  if (replay === undefined) return params(count);
  const [replaySeed = "", path = ""] = replay.split(",");
  return { seed: Number(replaySeed), path, endOnFailure: true };
}

/**
 * Fails with the broken invariant, the interleaving that led there, the scenario, the seed and the command that
 * replays it, unless the scheduled property held.
 */
export function expectHolds(details: fc.RunDetails<unknown>, title: string): void {
  if (!details.failed) return;
  const error = details.errorInstance;
  const [scheduler, scenario] = (details.counterexample ?? []) as [fc.Scheduler?, unknown?];
  assert.fail(
    [
      error instanceof LifecycleViolation ? error.message : String((error as Error | undefined)?.stack ?? error),
      `  scenario: ${fc.stringify(scenario)}`,
      "  the scheduler's report (tasks in the order it released them):",
      ...(scheduler?.report() ?? []).map((task) => `    [task ${task.taskId}] ${task.label} ${task.status}`),
      `  found after ${plural(details.numRuns, "run")}, shrunk ${plural(details.numShrinks, "time")} (seed ${details.seed})`,
      `  replay: WORKQUEUE_REPLAY=${details.seed},${details.counterexamplePath} npm test -- -t "${title}"`,
    ].join("\n"),
  );
}
