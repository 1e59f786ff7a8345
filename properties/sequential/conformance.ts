/**
 * The conformance check: generate command sequences, plan them on the model, replay each plan against a fresh
 * implementation, shrink a failure to a short counterexample, and say how to replay it.
 */
import * as fc from "fast-check";
import type { Driver, Observation, Observe } from "../core/driver.js";
import { OptionError } from "../core/errors.js";
import { invariants } from "../core/invariants.js";
import { isThenable } from "../core/subject.js";
import { constructionOf } from "./construction.js";
import { probeIndependence } from "./independence.js";
import { type ConformanceOptions, driverDefaults, type QualifiedOptions, qualify } from "./options.js";
import { composed, notRun, overlapping } from "./overlap-part.js";
import { type ConformanceReport, type Counterexample, overlapReplay, type UncheckedView } from "./report.js";
import { runsFrom } from "./runs.js";
import { limitsOf, shrink, tokenOf } from "./shrink.js";
import { type SurveyResult, survey } from "./survey.js";
import { Tally } from "./tally.js";

/**
 * The driver, watched: which views its observations ever showed. A queue without a view is checked without it,
 * and the report says so rather than conforming silently.
 */
function watched(driver: Driver, seen: Set<string>): Driver {
  const note = (observation: Observation) => {
    for (const [view, value] of Object.entries(observation.views)) if (value !== undefined) seen.add(view);
    return observation;
  };
  const watch =
    (observe: Observe): Observe =>
    (operation, index) => {
      const observed = observe(operation, index);
      return isThenable(observed) ? Promise.resolve(observed).then(note) : note(observed);
    };
  return {
    ...(driver.lookahead === undefined ? {} : { lookahead: driver.lookahead }),
    start(maxRetries, plan, backoff) {
      const started = driver.start(maxRetries, plan, backoff);
      return isThenable(started) ? Promise.resolve(started).then(watch) : watch(started);
    },
  };
}

/**
 * Checks a driver's implementation: the sequential check under {@link checkConformance}, also for implementations outside
 * this process (see `properties/protocol/`).
 *
 * It works in phases. The survey draws all `runs` sequences from the seed and runs them in order, with runs
 * started ahead when the driver allows (over a pipe, the implementation computes while the gate verifies). If a
 * run fails, fast-check runs that same sequence again, by its path, and shrinks it; then its macros' counts are cut
 * (see `compact.ts`) and calls are removed from the shrunk plan while it still fails (see `minimize.ts`). A replay
 * skips the survey.
 *
 * An error thrown by the driver itself, rather than an answer of the implementation, stops the check at once and
 * is rethrown, unshrunk.
 *
 * @param subject - How the implementation is reached: {@link connect}'s driver for a child process, or your own.
 * @param options - What to check and how (see {@link ConformanceOptions}).
 * @example
 * ```ts
 * import { checkDriver, connect } from "workqueue-spec/properties";
 *
 * const driver = await connect("python3", ["examples/python/workqueue.py"]);
 * try {
 *   const report = await checkDriver(driver, { items: { few: ["a", "b"], many: (i) => `k${i}`, invalid: [] }, finiteMaxRetries: true });
 *   console.log(report.verdict);
 * } finally {
 *   await driver.close();
 * }
 * ```
 *
 * @public
 */
export async function checkDriver(subject: Driver, options: ConformanceOptions = {}): Promise<ConformanceReport> {
  const qualified = qualify(options, driverDefaults);
  const { concurrent } = subject;
  if (qualified.replay?.replayPath === overlapReplay) {
    if (concurrent === undefined) {
      throw new OptionError(
        "The replay token replays overlapping calls (§10.8), which only checkConformance makes in process, or checkDriver on a driver with concurrent queues (protocol v1's `concurrent` feature): replay it there",
      );
    }
    return composed(
      notRun(qualified),
      await overlapping(concurrent, overOwnDeadline(qualified), qualified.replay),
      qualified,
    );
  }
  const report = await checkSequential(subject, qualified);
  if (report.verdict !== "conforms" || qualified.replay !== undefined || concurrent === undefined) return report;
  return composed(report, await overlapping(concurrent, overOwnDeadline(qualified), undefined), qualified);
}

/**
 * How many times a replay of a driver's concurrent run is made until it fails: a race of real threads need not
 * happen on every replay (docs/protocol.md, "Concurrent rounds").
 */
export const concurrentReplays = 10;

/**
 * The options of the overlapping runs of a driver's concurrent queues: their `maxRetries` finite (no transport
 * carries `Infinity`), a round given twice the timeout, so that a silent implementation is found by the driver's
 * own deadline on each reply, a breach, before the round's, and a replay made up to {@link concurrentReplays} times.
 */
function overOwnDeadline(options: QualifiedOptions): QualifiedOptions & { readonly attempts: number } {
  return { ...options, finiteMaxRetries: true, timeoutMs: 2 * options.timeoutMs, attempts: concurrentReplays };
}

/**
 * The sequential check, in its phases: the independence probe, the survey of every run (skipped by a replay),
 * then the shrinking of a failure (see `shrink.ts`).
 *
 * @internal
 */
export async function checkSequential(subject: Driver, options: QualifiedOptions): Promise<ConformanceReport> {
  const seen = new Set<string>();
  const driver = watched(subject, seen);
  const tally = new Tally(options.onProgress);
  const views = offeredViews(subject, options);
  const report = (counterexample: Counterexample | undefined): ConformanceReport => ({
    profile: options.profile,
    invariants,
    seed: options.seed,
    items: options.universe,
    unchecked: views.filter((view) => !seen.has(view)),
    runs: tally.runs,
    commands: tally.commands,
    ...(counterexample === undefined
      ? { verdict: "conforms" }
      : {
          verdict: "does not conform",
          counterexample: { ...counterexample, construction: constructionOf(subject, options, counterexample) },
        }),
  });
  // Before the survey, and before a replay too, so that a replay of its counterexample reports it again.
  const compare = { compareMessages: options.compareMessages };
  const shared = await probeIndependence(driver, options.items.few, compare);
  if (shared !== undefined) {
    tally.probe(shared.plan);
    const unshrunk = {
      shrinks: 0,
      minimal: false,
      shrinkMs: 0,
      ...limitsOf(options),
      shrinkRuns: 0,
      shrinkCommands: 0,
    };
    const again = tokenOf(options, { path: "0", replayPath: "", removals: 0, minimal: false });
    return report({ ...shared.violation, ...unshrunk, replay: again });
  }
  let surveyed: SurveyResult | undefined;
  if (options.replay === undefined) {
    const inputs = fc.sample(runsFrom(options, undefined), { numRuns: options.runs, seed: options.seed });
    const verifyOptions = { ...compare, coverage: options.coverage };
    surveyed = await survey(inputs, driver, verifyOptions, (plan) => tally.run(plan));
    if (surveyed.failing < 0) return report(undefined);
  }
  return report(await shrink(driver, options, surveyed, tally));
}

/** The views a check compares when the driver shows them: those it offers of the options' views. */
function offeredViews(subject: Driver, options: QualifiedOptions): UncheckedView[] {
  const views: readonly UncheckedView[] = [
    "size",
    "inFlight",
    "failures",
    ...(options.shutDown ? (["shuttingDown"] as const) : []),
    ...(options.time ? (["waiting", "metrics"] as const) : []),
  ];
  return views.filter((view) => subject.offers === undefined || subject.offers.includes(view));
}
