/**
 * `checkConformance`: the sequential check of a factory's queues, in process, and then, for a queue whose calls can
 * overlap, the check of overlapping calls (overlap/); one report composed of the two checks' reports.
 */
import { ClockModel } from "../../model/index.js";
import { inProcess } from "../core/driver.js";
import { invariants } from "../core/invariants.js";
import { encodeReplay, type Replay } from "../core/replay.js";
import { isThenable, type SubjectFactory } from "../core/subject.js";
import { checkOverlapping, linearizable, type OverlappingReport } from "../overlap/check-overlapping.js";
import { checkSequential } from "./conformance.js";
import { type ConformanceOptions, inProcessDefaults, type QualifiedOptions, qualify, tokenOptions } from "./options.js";
import { type ConformanceReport, type Counterexample, overlapReplay } from "./report.js";

/**
 * Checks that the queues `factory` makes answer as the model does and keep every invariant of [docs/spec.md §10](../../docs/spec.md#§10-invariants),
 * over `runs` random command sequences, each on a fresh queue. A failure is shrunk to a short counterexample.
 *
 * The factory's queues may answer plain values or promises. The check never throws for a queue that breaks the
 * rules; it reports. It throws when the factory itself or an option is broken.
 *
 * @param factory - Makes a fresh, empty queue from `{ maxRetries }`, once per run.
 * @param options - What to check and how (see {@link ConformanceOptions}).
 * @example
 * ```ts
 * import { checkConformance } from "workqueue-spec/properties";
 *
 * const report = await checkConformance((options) => new MyQueue(options), { profile: "contract", runs: 500 });
 * if (report.verdict !== "conforms") console.log(report.counterexample);
 * ```
 *
 * @public
 */
export async function checkConformance<T>(
  factory: SubjectFactory<T>,
  options: ConformanceOptions = {},
): Promise<ConformanceReport> {
  const qualified = qualify(options, inProcessDefaults);
  if (qualified.replay?.replayPath === overlapReplay) {
    const overlap = await overlapping(factory, qualified, qualified.replay);
    return composed(notRun(qualified), overlap, qualified);
  }
  const { shutDown, timeoutMs, time } = qualified;
  const report = await checkSequential(inProcess(factory, { shutDown, timeoutMs, time }), qualified);
  if (report.verdict !== "conforms" || qualified.replay !== undefined) return report;
  if (!(qualified.overlapping ?? (await answersPromises(factory, time)))) return report;
  return composed(report, await overlapping(factory, qualified, undefined), qualified);
}

/**
 * Whether a fresh queue's `get` answers a promise: a queue that does is asynchronous, and its calls may overlap;
 * `checkConformance` then makes overlapping calls, unless its `overlapping` option says otherwise.
 *
 * @internal
 */
export async function answersPromises<T>(factory: SubjectFactory<T>, time: boolean): Promise<boolean> {
  const subject = await factory({ maxRetries: 1, ...(time ? { clock: new ClockModel() } : {}) });
  const answer = subject.get();
  if (!isThenable(answer)) return false;
  await Promise.resolve(answer).then(undefined, () => undefined);
  return true;
}

/** The overlapping runs of a check, or the one run at `path` of a replay. */
function overlapping<T>(
  factory: SubjectFactory<T>,
  options: QualifiedOptions,
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
  });
}

/** The sequential report of a replay of overlapping calls, which runs no sequence. */
function notRun(options: QualifiedOptions): ConformanceReport {
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
function composed(
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
