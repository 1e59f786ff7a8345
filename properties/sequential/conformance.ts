/**
 * The conformance check: generate command sequences, plan them on the model, replay each plan against a fresh
 * implementation, shrink a failure to a short counterexample, and say how to replay it.
 */
import * as fc from "fast-check";
import { type Delays, replayPathOf, type Scenario, type Shape, scenario } from "../core/arbitraries.js";
import type { Plan, Profile } from "../core/commands.js";
import type { Coverage } from "../core/coverage.js";
import type { Driver, Observation, Observe } from "../core/driver.js";
import { OptionError } from "../core/errors.js";
import { type Invariant, invariants, type Rule } from "../core/invariants.js";
import type { Backoff } from "../core/operation.js";
import { assertSameOptions, decodeReplay, encodeReplay, type Replay, type ReplayOptions } from "../core/replay.js";
import { defaultShrinkCalls, defaultShrinkTimeMs, ShrinkBudget, type ShrinkStop } from "../core/shrink-budget.js";
import { isThenable } from "../core/subject.js";
import { anyItems, type ItemUniverse, stringItems } from "../core/universes.js";
import { type Step, type Violation, verifyStarted } from "../core/verify.js";
import { checkOverlapping, type OverlapCall } from "../overlap/check-overlapping.js";
import { diagnose } from "./diagnose.js";
import { probeIndependence } from "./independence.js";
import { minimize } from "./minimize.js";
import { planOf } from "./plan.js";
import { type SurveyResult, survey } from "./survey.js";

/**
 * Options of {@link checkConformance}.
 *
 * @public
 */
export interface ConformanceOptions {
  /** Which calls sequences may make (see {@link Profile}). @defaultValue `"robust"` */
  readonly profile?: Profile;
  /** How many random sequences to run. @defaultValue `100` */
  readonly runs?: number;
  /** The random seed. @defaultValue a fresh one, printed in the report */
  readonly seed?: number | undefined;
  /**
   * Replays exactly one counterexample and nothing else: the `replay` token of a failed report. Overrides `seed`.
   * The token carries the options that shape the runs (profile, shutDown, maxCommands, shape, items,
   * finiteMaxRetries); a check with other options refuses it with an `OptionError` naming the option.
   * @defaultValue the environment variable `WORKQUEUE_REPLAY`, if set, so that a printed replay works in any
   * project's test suite
   */
  readonly replay?: string | undefined;
  /**
   * How many calls shrinking a failure may make to the implementation, all its runs together. The budget is counted
   * in work, not time, so that the same implementation, seed and options give the same counterexample on an idle
   * laptop and on a loaded CI machine. When it runs out, the report gives the shortest counterexample found so far
   * and says that it may not be minimal; its token still replays exactly that one. The runs of the survey, before
   * shrinking starts, are not counted. @defaultValue 500000
   */
  readonly shrinkCalls?: number | undefined;
  /**
   * How long shrinking may take, in milliseconds, whatever is left of `shrinkCalls`: a safety net for an
   * implementation so slow that its calls would take minutes. The only limit that depends on the machine; the
   * report says when it is what stopped shrinking. @defaultValue 120000
   */
  readonly shrinkTimeMs?: number | undefined;
  /** The longest sequence. @defaultValue 100 calls with few items, 250 with many */
  readonly maxCommands?: number | undefined;
  /**
   * Which shapes of sequence to draw: `few` items hit hard, `many` items in a queue dozens deep, `deep` runs of
   * macro commands (bursts of up to ~6,000 items, holds, drains, cycles of up to ~46,000 items taken and queued
   * again, long failure streaks), `both` (few and many) or `all`. @defaultValue `"all"`
   */
  readonly shape?: Shape | "both" | "all" | undefined;
  /**
   * The items to draw from; pass {@link stringItems} for a queue of strings only.
   * @defaultValue {@link anyItems} in `checkConformance`, {@link stringItems} in `checkDriver`
   */
  readonly items?: ItemUniverse;
  /** Whether error messages must equal the model's; otherwise only the error's name must. @defaultValue `false` */
  readonly compareMessages?: boolean;
  /**
   * Draw only finite `maxRetries` (0 to 6), for implementations that cannot be made with `Infinity`, such as those
   * over protocol v1, whose `maxRetries` is a JSON integer. @defaultValue `false`
   */
  readonly finiteMaxRetries?: boolean;
  /** Where to count the transitions exercised. @defaultValue nowhere @internal */
  readonly coverage?: Coverage | undefined;
  /**
   * Whether the queues offer `shutDown` ([docs/spec.md §12](../../docs/spec.md#§12-shutdown)), so that sequences call it and check what follows;
   * `shuttingDown` is then checked too, if offered. Without it, a queue is checked exactly as one without shutdown.
   * @defaultValue `false`
   */
  readonly shutDown?: boolean | undefined;
  /**
   * Whether the queues have time ([docs/spec.md §17](../../docs/spec.md#§17-delayed-adds)): sequences then also call `addAfter` and move the clock,
   * and some runs make `retry` back off, so that every timed rule is checked after every step. Each queue is made
   * with `clock` (time starts at 0 and moves only when the check moves it) and, in some runs, `backoff`
   * (see {@link SubjectOptions}); `waiting` is checked too, if offered. @defaultValue `false`
   */
  readonly time?: boolean | undefined;
  /**
   * How long, in milliseconds, a call or a view of an in-process queue may take to settle before the check stops
   * with a `ProtocolBreach` of kind `timed out` (a promise that never settles would otherwise hang the check).
   * @defaultValue 5000
   */
  readonly timeoutMs?: number | undefined;
  /**
   * Whether `checkConformance` also makes overlapping calls ([docs/spec.md §10.8](../../docs/spec.md#§10-invariants), {@link checkOverlapping}): `runs`
   * runs of calls made before the earlier ones are awaited, whose answers must be those of some order of them.
   * Made once the other runs conform. @defaultValue `true` when the queue's `get` answers a promise
   */
  readonly overlapping?: boolean | undefined;
  /** Called after every run, shrinking runs included, with the totals so far. @defaultValue nothing is called */
  readonly onProgress?: ((progress: { readonly runs: number; readonly commands: number }) => void) | undefined;
}

/**
 * The outcome of {@link checkConformance}.
 *
 * @public
 */
export interface ConformanceReport {
  /** Whether every sequence kept every invariant and every answer matched the model's. */
  readonly verdict: "conforms" | "does not conform";
  /** The profile that was checked. */
  readonly profile: Profile;
  /**
   * Sequences run, up to and including the first failure (1 for a replay); shrinking is counted apart, in the
   * counterexample.
   */
  readonly runs: number;
  /** Calls made on implementations by those sequences; shrinking is counted apart, in the counterexample. */
  readonly commands: number;
  /** The named checks run after every step. */
  readonly invariants: readonly Invariant[];
  /** The seed, to run the same sequences again. */
  readonly seed: number;
  /** The name of the item universe the runs drew from (see {@link ItemUniverse}). */
  readonly items: string;
  /**
   * The views the implementation never showed, so that the checks that compare them were skipped: `size`,
   * `inFlight`, `failures`, and `shuttingDown` when shutdown was checked. Empty when it showed them all.
   */
  readonly unchecked: readonly UncheckedView[];
  /** On failure: the shortest failing sequence found. */
  readonly counterexample?: Counterexample | undefined;
  /** The runs of overlapping calls (§10.8) and their calls, when they were made; they are not counted in `runs`. */
  readonly overlapping?:
    | {
        /** The runs of overlapping calls, shrinking runs included. */
        readonly runs: number;
        /** The calls they made. */
        readonly commands: number;
      }
    | undefined;
}

/**
 * A shrunk failing sequence: what broke, the numbered steps, and how to replay it.
 *
 * @public
 */
export interface Counterexample {
  /** The rule that broke: the invariant the last step breaks, or the rule of a check over whole runs. */
  readonly invariant: Rule;
  /** What went wrong at the last step, in one sentence. */
  readonly detail: string;
  /** The `maxRetries` the queue was made with. */
  readonly maxRetries: number;
  /** The backoff its `retry` requeued with, when time was checked and the run drew one ([docs/spec.md §7.3](../../docs/spec.md#§7)). */
  readonly backoff?: Backoff | undefined;
  /** The steps, the failing one last: each call with the model's and the implementation's answers and views. */
  readonly steps: readonly Step[];
  /** How many shrinking steps led from the first failing sequence to this one. */
  readonly shrinks: number;
  /**
   * Whether shrinking ran to its end within its budget; `false` when the budget ran out first (see `stoppedBy`), so
   * that a shorter counterexample may exist.
   */
  readonly minimal: boolean;
  /**
   * What stopped shrinking before its end: `calls`, the `shrinkCalls` budget (the same on any machine), or `time`,
   * the `shrinkTimeMs` safety net. Absent when it ran to its end, or was not made (a replay, a shared-state probe).
   */
  readonly stoppedBy?: ShrinkStop | undefined;
  /** How long shrinking took, in milliseconds. */
  readonly shrinkMs: number;
  /** The budget of calls it had: the `shrinkCalls` option. */
  readonly shrinkCalls: number;
  /** The safety net of time it had, in milliseconds: the `shrinkTimeMs` option. */
  readonly shrinkTimeMs: number;
  /** How many runs shrinking made, each on a fresh queue. */
  readonly shrinkRuns: number;
  /** How many calls those runs made. */
  readonly shrinkCommands: number;
  /** The token that replays exactly this counterexample: pass it back as the `replay` option. */
  readonly replay: string;
  /**
   * When overlapping calls broke the rules (§10.8): every call, in the order they were made, with its round and
   * answer; `steps` is then empty and `detail` shows the calls round by round.
   */
  readonly overlapping?: readonly OverlapCall[] | undefined;
}

/**
 * The `replayPath` of a token that replays a run of overlapping calls rather than a sequence.
 *
 * @internal
 */
export const overlapReplay = "overlapping";

/** What a report adds to a counterexample whose calls did not fail when they were made again on a fresh queue. */
const onceMore =
  " (but these calls kept every invariant when made once more on another fresh queue: the queue's answers depend on more than the calls shown, such as state shared between queues, the time or chance)";

/** Thrown inside the property so that fast-check shrinks the sequence and hands the violation back. */
class ViolationError extends Error {
  constructor(readonly counterexample: Violation) {
    super(`${counterexample.invariant.name}: ${counterexample.detail}`);
  }
}

/**
 * A view that a check may have had to do without.
 *
 * @public
 */
export type UncheckedView = "size" | "inFlight" | "failures" | "shuttingDown" | "waiting" | "metrics";

/** What each view's absence skips, as reports say it. @internal */
export const skippedChecks: Readonly<Record<UncheckedView, string>> = {
  size: "the size after every call (§9.1), and what only the size shows of §10.2, §10.3 and §12.3",
  inFlight: "the number of items in flight after every call (§9.2)",
  failures: "the failure count after every call on an item (§7.1, §8.1, §9.3)",
  shuttingDown: "the flag after shutDown (§12.2)",
  waiting: "the number of waiting items after every call (§17.6), and what only it shows of §17.4",
  metrics: "the metrics after every call (§19)",
};

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
 * The options of `options` that a replay token carries, with their defaults: what a command-line entry point checks
 * a `--replay` token against before it starts anything.
 *
 * @internal
 */
export function replayOptionsOf(options: ConformanceOptions): ReplayOptions {
  return {
    profile: options.profile ?? "robust",
    shutDown: options.shutDown === true,
    maxCommands: options.maxCommands ?? null,
    shape: options.shape ?? "all",
    items: universeName(options),
    finiteMaxRetries: options.finiteMaxRetries === true,
    time: options.time === true,
  };
}

/**
 * The name of the universe a check draws from.
 *
 * @internal
 */
export function universeName(options: ConformanceOptions): string {
  return (options.items ?? stringItems).name ?? "custom";
}

/**
 * The runs a check draws, as fast-check arbitraries: `fc.sample` of it with the check's `runs` and seed gives the
 * very runs its survey makes (the benchmarks plan them alone, to weigh the gate against its model). `delays` are
 * those the check's queues can be given: `any` in process, where `NaN` can be passed; `finite` otherwise.
 *
 * @internal
 */
export function runsOf(
  options: ConformanceOptions,
  replayPath: string | undefined,
  delays: Delays = "finite",
): fc.Arbitrary<Scenario> {
  const spec = {
    profile: options.profile ?? "robust",
    items: options.items ?? stringItems,
    maxCommands: options.maxCommands,
    replayPath,
    finite: options.finiteMaxRetries ?? false,
    shutDown: options.shutDown,
    time: options.time === true ? delays : undefined,
  };
  const shape = options.shape ?? "all";
  if (shape === "both") return fc.oneof(scenario({ ...spec, shape: "few" }), scenario({ ...spec, shape: "many" }));
  if (shape !== "all") return scenario({ ...spec, shape });
  return fc.oneof(
    { weight: 2, arbitrary: scenario({ ...spec, shape: "few" }) },
    { weight: 2, arbitrary: scenario({ ...spec, shape: "many" }) },
    { weight: 1, arbitrary: scenario({ ...spec, shape: "deep" }) },
  );
}

/**
 * Checks a driver's implementation: the sequential check under {@link checkConformance}, also for implementations outside
 * this process (see `properties/protocol/`).
 *
 * It works in phases. The survey draws all `runs` sequences from the seed and runs them in order, with runs
 * started ahead when the driver allows (over a pipe, the implementation computes while the gate verifies). If a
 * run fails, fast-check runs that same sequence again, by its path, and shrinks it; then calls are removed from
 * the shrunk plan while it still fails (see `minimize.ts`). A replay skips the survey.
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
export function checkDriver(subject: Driver, options: ConformanceOptions = {}): Promise<ConformanceReport> {
  return checkSequential(subject, options, "finite");
}

/**
 * {@link checkDriver} for queues that can be given the delays `delays` allows (see {@link runsOf}).
 *
 * @internal
 */
export async function checkSequential(
  subject: Driver,
  options: ConformanceOptions,
  delays: Delays,
): Promise<ConformanceReport> {
  const profile = options.profile ?? "robust";
  const seen = new Set<string>();
  const driver = watched(subject, seen);
  const offered = (view: UncheckedView) => subject.offers === undefined || subject.offers.includes(view);
  const views: UncheckedView[] = (
    [
      "size",
      "inFlight",
      "failures",
      ...(options.shutDown === true ? (["shuttingDown"] as const) : []),
      ...(options.time === true ? (["waiting", "metrics"] as const) : []),
    ] as const
  ).filter(offered);
  const token = options.replay ?? process.env.WORKQUEUE_REPLAY;
  const replay = token === undefined || token === "" ? undefined : decodeReplay(token);
  if (replay !== undefined) assertSameOptions(replay, replayOptionsOf(options));
  if (replay?.replayPath === overlapReplay) {
    throw new OptionError(
      "The replay token replays overlapping calls (§10.8), which only checkConformance makes, in process: replay it there",
    );
  }
  const seed = replay?.seed ?? options.seed ?? Date.now() ^ (Math.random() * 0x100000000);
  const verifyOptions = { compareMessages: options.compareMessages ?? false, coverage: options.coverage };
  let runs = 0;
  let commands = 0;
  let shrinkRuns = 0;
  let shrinkCommands = 0;
  const counted = (plan: Plan) => {
    runs++;
    commands += plan.length;
    options.onProgress?.({ runs, commands });
  };
  /** The runs after the survey (or the first of a replay) are shrinking. */
  const shrinking = (plan: Plan) => {
    shrinkRuns++;
    shrinkCommands += plan.length;
    options.onProgress?.({ runs: runs + shrinkRuns, commands: commands + shrinkCommands });
  };
  const base = { profile, invariants, seed, items: universeName(options) };
  const report = () => ({ ...base, unchecked: views.filter((view) => !seen.has(view)) });
  const tokenOf = (fields: Pick<Replay, "path" | "replayPath" | "removals" | "minimal">) =>
    encodeReplay({ ...replayOptionsOf(options), seed, ...fields });
  const compare = { compareMessages: verifyOptions.compareMessages };
  const limits = {
    shrinkCalls: options.shrinkCalls ?? defaultShrinkCalls,
    shrinkTimeMs: options.shrinkTimeMs ?? defaultShrinkTimeMs,
  };
  // Before the survey, and before a replay too, so that a replay of its counterexample reports it again.
  const shared = await probeIndependence(driver, (options.items ?? stringItems).few, compare);
  if (shared !== undefined) {
    runs += 2;
    commands += 2 * shared.plan.length;
    const unshrunk = { shrinks: 0, minimal: false, shrinkMs: 0, ...limits, shrinkRuns: 0, shrinkCommands: 0 };
    const again = tokenOf({ path: "0", replayPath: "", removals: 0, minimal: false });
    const counterexample = { ...shared.violation, ...unshrunk, replay: again };
    return { ...report(), runs, commands, verdict: "does not conform", counterexample };
  }
  let surveyed: SurveyResult | undefined;
  if (replay === undefined) {
    const inputs = fc.sample(runsOf(options, undefined, delays), { numRuns: options.runs ?? 100, seed });
    surveyed = await survey(inputs, driver, verifyOptions, counted);
    if (surveyed.failing < 0) return { ...report(), runs, commands, verdict: "conforms" };
  }
  const failed = () => ({ ...report(), runs, commands, verdict: "does not conform" }) as const;
  let broken: { error: unknown } | undefined;
  // Made once the survey is over, its look-ahead runs read: only the work of shrinking is charged to it.
  const budget = new ShrinkBudget(limits.shrinkCalls, "calls", limits.shrinkTimeMs);
  const property = fc.asyncProperty(runsOf(options, replay?.replayPath, delays), async (input) => {
    if (broken !== undefined) return; // the driver broke: pass at once, so fast-check neither shrinks nor goes on
    if (replay === undefined) budget.guard(); // the budget is spent: fast-check stops with the shortest so far
    const { plan, expected } = planOf(input);
    let violation: Violation | undefined;
    try {
      const { maxRetries, backoff } = input;
      violation = await verifyStarted(
        driver.start(maxRetries, plan, backoff),
        maxRetries,
        plan,
        verifyOptions,
        backoff,
        expected,
      );
    } catch (error) {
      broken = { error };
      throw error;
    }
    if (replay !== undefined && runs === 0) counted(plan);
    else shrinking(plan);
    budget.charge(plan.length);
    if (violation !== undefined) throw new ViolationError(violation);
  });
  const path = replay?.path ?? String(surveyed?.failing);
  const shrinkStart = performance.now();
  // fast-check's shrinking has no bound of its own: the budget interrupts it (see `guard`) with the best
  // counterexample so far, whose path replays it exactly (a replay follows the path and does not shrink again).
  const details = await fc.check(property, { seed, path, endOnFailure: replay !== undefined });
  if (broken !== undefined) throw broken.error;
  if (!details.failed || details.counterexample === null) {
    // The implementation answered differently the second time, or the budget ran out before fast-check ran the
    // failing run again: report the survey's run as it failed, unshrunk.
    const violation = surveyed?.violation;
    if (violation === undefined) return { ...report(), runs, commands, verdict: "conforms" };
    const unshrunk = {
      shrinks: 0,
      minimal: false,
      stoppedBy: budget.stoppedBy,
      shrinkMs: performance.now() - shrinkStart,
      ...limits,
      shrinkRuns,
      shrinkCommands,
    };
    const again = tokenOf({ path, replayPath: "", removals: 0, minimal: false });
    const detail = details.interrupted ? violation.detail : `${violation.detail}${onceMore}`;
    return { ...failed(), counterexample: { ...violation, detail, ...unshrunk, replay: again } };
  }
  if (!(details.errorInstance instanceof ViolationError)) throw details.errorInstance;
  const [input] = details.counterexample ?? [];
  // fast-check's shrinking ends where removing a command changes what the others do; removing calls from the
  // concrete plan goes further, within what is left of the budget. A replay makes exactly the removals the
  // original made, so it prints the same counterexample however long either took.
  const minimized = await minimize(
    details.errorInstance.counterexample,
    driver,
    profile,
    compare,
    replay === undefined ? { budget } : { removals: replay.removals },
  );
  const diagnosed = await diagnose(minimized.violation, driver);
  // Run once more on another fresh queue: a counterexample that passes there depends on more than its calls.
  const shrunk = diagnosed.violation;
  const plan = shrunk.steps.map((step) => step.operation);
  const started = driver.start(shrunk.maxRetries, plan, shrunk.backoff);
  const repeated = await verifyStarted(started, shrunk.maxRetries, plan, compare, shrunk.backoff);
  shrinking(plan);
  const detail = repeated === undefined ? `${shrunk.detail}${onceMore}` : shrunk.detail;
  const minimal = replay?.minimal ?? budget.stoppedBy === undefined;
  const again = tokenOf({
    path: details.counterexamplePath ?? path,
    replayPath: input === undefined ? "" : replayPathOf(input),
    removals: minimized.removals,
    minimal,
  });
  const counterexample = {
    ...shrunk,
    detail,
    shrinks: details.numShrinks + minimized.removals,
    minimal,
    ...(replay === undefined && budget.stoppedBy !== undefined ? { stoppedBy: budget.stoppedBy } : {}),
    shrinkMs: performance.now() - shrinkStart,
    ...limits,
    shrinkRuns: shrinkRuns + minimized.runs + diagnosed.runs,
    shrinkCommands: shrinkCommands + minimized.commands + diagnosed.commands,
    replay: again,
  };
  return { ...failed(), counterexample };
}
