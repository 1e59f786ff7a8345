/**
 * The part overlapping calls play in a conformance check ([docs/spec.md §10.8](../../docs/spec.md#§10-invariants)): `checkOverlapping`'s runs made with
 * a check's options, and its report composed into the sequential one — for `checkConformance` in process, and for
 * `checkDriver` when the driver's queues can take concurrent calls (protocol v1's `concurrent` feature).
 */
import { invariants } from "../core/invariants.js";
import { encodeReplay, type Replay } from "../core/replay.js";
import type { SubjectFactory } from "../core/subject.js";
import { checkOverlapping, linearizable, type OverlappingReport } from "../overlap/check-overlapping.js";
import { type QualifiedOptions, tokenOptions } from "./options.js";
import type { ConformanceReport, Counterexample } from "./report.js";
import { overlapReplay } from "./report.js";

/** The overlapping runs of a check, or the one run at `path` of a replay. */
export function overlapping<T>(
  factory: SubjectFactory<T>,
  options: QualifiedOptions & { readonly attempts?: number },
  replay: Pick<Replay, "path" | "removals"> | undefined,
): Promise<OverlappingReport> {
  return checkOverlapping(factory, {
    profile: options.profile,
    runs: options.runs,
    seed: options.seed,
    items: options.items.few,
    finiteMaxRetries: options.finiteMaxRetries,
    shrinkTimeMs: options.shrinkTimeMs,
    timeoutMs: options.timeoutMs,
    time: options.time,
    path: replay?.path,
    removals: replay?.removals,
    attempts: options.attempts,
  });
}

/** The sequential report of a replay of overlapping calls, which runs no sequence. */
export function notRun(options: QualifiedOptions): ConformanceReport {
  return {
    verdict: "conforms",
    profile: options.profile,
    runs: 0,
    commands: 0,
    invariants,
    seed: options.seed,
    items: options.universe,
    unchecked: [],
  };
}

/**
 * The sequential report with the overlapping check's: its runs beside the sequences', and its counterexample, if
 * any, as the report's, named by the rule it broke (§10.8) and with a token that replays it.
 */
export function composed(
  sequential: ConformanceReport,
  overlap: OverlappingReport,
  options: QualifiedOptions,
): ConformanceReport {
  const report = { ...sequential, overlapping: { runs: overlap.runs, commands: overlap.commands } };
  const found = overlap.counterexample;
  if (found === undefined) return report;
  const counterexample: Counterexample = {
    invariant: linearizable,
    detail: found.detail,
    maxRetries: found.maxRetries,
    steps: [],
    shrinks: found.shrinks,
    minimal: found.minimal,
    ...(found.stoppedBy === undefined ? {} : { stoppedBy: found.stoppedBy }),
    shrinkMs: found.shrinkMs,
    shrinkCalls: options.shrinkCalls,
    shrinkTimeMs: options.shrinkTimeMs,
    shrinkRuns: overlap.runs,
    shrinkCommands: overlap.commands,
    replay: encodeReplay({
      ...tokenOptions(options),
      seed: options.seed,
      path: found.path,
      replayPath: overlapReplay,
      removals: found.removals,
      minimal: found.minimal,
    }),
    overlapping: found.calls,
    ...(found.round === undefined ? {} : { round: found.round }),
  };
  return { ...report, verdict: "does not conform", counterexample };
}
