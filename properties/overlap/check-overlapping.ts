/**
 * Overlapping calls ([docs/spec.md §10.8](../../docs/spec.md#§10-invariants)): for a queue whose verbs answer promises, several calls are made
 * before any is awaited, and the answers must be those of some order of the calls that keeps their real-time
 * order — linearizability against the model. A run is a list of rounds; a round's calls are made one after the
 * other without waiting, except a call marked `afterPrevious`, which is made once the call before it answered; the next
 * round starts when every call of the round answered. A failure is shrunk by fast-check within a time budget.
 */
import * as fc from "fast-check";
import { ClockModel } from "../../model/index.js";
import { defaultProfile, type Profile } from "../core/commands.js";
import type { Rule } from "../core/invariants.js";
import { freshSeed, qualifyBase } from "../core/options.js";
import { defaultShrinkRuns, ShrinkBudget, type ShrinkStop } from "../core/shrink-budget.js";
import type { SubjectFactory } from "../core/subject.js";
import {
  type Drawing,
  drawing,
  firstUnexplainedRound,
  type Made,
  makeRun,
  type OverlapCall,
  OverlapTimeout,
  ordersTried,
  showRun,
  Unexplained,
} from "./runs.js";

/**
 * The rule overlapping calls keep ([docs/spec.md §10.8](../../docs/spec.md#§10-invariants)), which {@link checkOverlapping} checks over whole runs
 * rather than after each step.
 *
 * @internal
 */
export const linearizable: Rule = {
  id: "linearizable",
  name: "overlapping calls answer as some order of them that keeps their real-time order would",
  rule: "§10.8",
};

/**
 * Options of {@link checkOverlapping}.
 *
 * @example
 * ```ts
 * import { checkOverlapping, type OverlappingOptions } from "workqueue-spec/properties";
 *
 * const options: OverlappingOptions = { profile: "contract", runs: 200 };
 * const report = await checkOverlapping((queueOptions) => new MyAsyncQueue(queueOptions), options);
 * ```
 *
 * @public
 */
export interface OverlappingOptions {
  /** Which calls runs may make: under `contract`, `done` and `retry` only for an item held. @defaultValue `"robust"` */
  readonly profile?: Profile | undefined;
  /** How many runs. @defaultValue `100` */
  readonly runs?: number | undefined;
  /** The seed. @defaultValue a fresh one, printed in the report */
  readonly seed?: number | undefined;
  /** The items: the first three of this list. @defaultValue `["a", "b", "c"]` */
  readonly items?: readonly unknown[] | undefined;
  /** Draw only finite `maxRetries`. @defaultValue `false` */
  readonly finiteMaxRetries?: boolean | undefined;
  /**
   * How many runs shrinking may make: a budget of work, so that the same queue and seed give the same
   * counterexample on any machine. @defaultValue 2000
   */
  readonly shrinkRuns?: number | undefined;
  /** How long shrinking may take, in milliseconds, whatever is left of `shrinkRuns`: a safety net. @defaultValue 120000 */
  readonly shrinkTimeMs?: number | undefined;
  /** How long one round may take to answer before the run fails as "a call never answered". @defaultValue `5000` */
  readonly timeoutMs?: number | undefined;
  /**
   * Whether the queues have time ([docs/spec.md §17](../../docs/spec.md#§17-delayed-adds)): each is then made with a clock of its own that stays at 0, and
   * without backoff, so that its untimed verbs answer as the untimed model's. @defaultValue `false`
   */
  readonly time?: boolean | undefined;
  /** Replays exactly the run at this fast-check path of the seed, without shrinking. @internal */
  readonly path?: string | undefined;
  /** With `path`: how many calls the check removed from that run. @internal */
  readonly removals?: number | undefined;
  /**
   * With `path`: how many times the run may be made again until it fails. A race of real threads (protocol v1's
   * `concurrent` feature) may answer as some order would on one replay and not on the next; the counterexample says
   * at which replay it failed (`replays`). @defaultValue 1 @internal
   */
  readonly attempts?: number | undefined;
}

/**
 * The outcome of {@link checkOverlapping}.
 *
 * @example
 * ```ts
 * import { checkOverlapping, type OverlappingReport } from "workqueue-spec/properties";
 *
 * const report: OverlappingReport = await checkOverlapping((options) => new MyAsyncQueue(options));
 * if (report.verdict !== "conforms") console.log(report.counterexample);
 * ```
 *
 * @public
 */
export interface OverlappingReport {
  /** Whether every run's answers were those of some order of its calls. */
  readonly verdict: "conforms" | "does not conform";
  /** Runs made, shrinking included. */
  readonly runs: number;
  /** Calls made by those runs. */
  readonly commands: number;
  /** The seed. */
  readonly seed: number;
  /** On failure: the shortest failing run found. */
  readonly counterexample?: OverlapCounterexample | undefined;
}

/**
 * A failing run of overlapping calls.
 *
 * @inline
 */
export interface OverlapCounterexample {
  /** What went wrong, with every call of the run. */
  readonly detail: string;
  /** The `maxRetries` of the queue. */
  readonly maxRetries: number;
  /** The calls, in the order they were made. */
  readonly calls: readonly OverlapCall[];
  /** The round that no order of its calls explains; absent when a call never answered. */
  readonly round?: number | undefined;
  /** fast-check's path of the run, which replays it with the seed. */
  readonly path: string;
  /** How many shrinking steps led from the first failing run to this one. */
  readonly shrinks: number;
  /** How many calls were removed from fast-check's shrunk run; a replay removes as many. */
  readonly removals: number;
  /** Whether shrinking ran to its end within its budget. */
  readonly minimal: boolean;
  /** What stopped shrinking before its end: `runs`, the `shrinkRuns` budget, or `time`, the safety net. */
  readonly stoppedBy?: ShrinkStop | undefined;
  /** How long shrinking took, in milliseconds. */
  readonly shrinkMs: number;
  /** Of a replay that may be made several times (`attempts`): the replay that failed, from 1. */
  readonly replays?: number | undefined;
}

/** {@link OverlappingOptions} with every default filled: what the check reads. */
function qualify(options: OverlappingOptions) {
  return {
    ...qualifyBase(options),
    items: (options.items ?? ["a", "b", "c"]).slice(0, 3),
    seed: options.seed ?? freshSeed(),
    profile: options.profile ?? defaultProfile,
    finiteMaxRetries: options.finiteMaxRetries === true,
    shrinkRuns: options.shrinkRuns ?? defaultShrinkRuns,
    path: options.path,
    removals: options.removals,
    attempts: options.attempts ?? 1,
  };
}

/**
 * Checks that the queues `factory` makes answer overlapping calls as some order of them would
 * ([docs/spec.md §10.8](../../docs/spec.md#§10-invariants)): each run makes up to 8 rounds of up to 4 calls on a fresh queue, the calls of a round
 * made before any of them is awaited, and looks for an order of the calls, keeping their real-time order, in
 * which the model answers what the queue answered. A queue whose promise resolves before its change is made, or
 * whose concurrent calls race, has none. `checkConformance` runs this for a queue whose verbs answer promises.
 *
 * @param factory - Makes a fresh, empty queue, once per run.
 * @param options - What to check and how.
 * @example
 * ```ts
 * import { checkOverlapping } from "workqueue-spec/properties";
 *
 * const report = await checkOverlapping((options) => new MyAsyncQueue(options), { runs: 200 });
 * if (report.verdict !== "conforms") console.log(report.counterexample?.detail);
 * ```
 * @public
 */
export async function checkOverlapping<T>(
  factory: SubjectFactory<T>,
  options: OverlappingOptions = {},
): Promise<OverlappingReport> {
  const qualified = qualify(options);
  const { seed } = qualified;
  const tally = { runs: 0, commands: 0 };
  const run = runner(factory, qualified, tally);
  const runsOf = drawing(qualified.items.length, qualified.finiteMaxRetries);
  // The survey: every run in order, unshrunk; then fast-check runs the first failing one again, by its path, and
  // shrinks it within the budget (its shrinking has no bound of its own).
  let path = qualified.path;
  let surveyed: Failing | undefined;
  if (path === undefined) {
    surveyed = await firstFailing(fc.sample(runsOf, { numRuns: qualified.runs, seed }), run);
    if (surveyed === undefined) return { verdict: "conforms", ...tally, seed };
    path = String(surveyed.index);
  }
  const budget = new ShrinkBudget(qualified.shrinkRuns, "runs", qualified.shrinkTimeMs);
  const start = performance.now();
  const replaying = qualified.path !== undefined;
  const again = () => runAtPath(runsOf, replaying ? run : charged(run, budget), { seed, path, replaying });
  let atPath = await again();
  // A replay that passes is made again, up to its attempts: a race need not happen every time.
  let replays = 1;
  for (; replaying && atPath.failing === undefined && replays < qualified.attempts; replays++) atPath = await again();
  // When the budget ran out before fast-check ran the failing run again, or the run passed this time, the survey's
  // failure is reported as it was, unshrunk.
  const failing = atPath.failing ?? surveyed;
  if (failing === undefined) return { verdict: "conforms", ...tally, seed };
  const { failure, removals } = await removeCalls(failing, run, budget, qualified.removals);
  const counterexample = counterexampleOf(failure, {
    path: atPath.path ?? path,
    shrinks: atPath.shrinks + removals,
    removals,
    minimal: atPath.failing !== undefined && budget.stoppedBy === undefined,
    stoppedBy: budget.stoppedBy,
    shrinkMs: performance.now() - start,
    ...(replaying && qualified.attempts > 1 ? { replays: { replays, attempts: qualified.attempts } } : {}),
  });
  return { verdict: "does not conform", ...tally, seed, counterexample };
}

/** `run`, charged to `budget`: once the budget is spent, fast-check stops with the shortest failure so far. */
function charged(run: (drawn: Drawing) => Promise<void>, budget: ShrinkBudget): (drawn: Drawing) => Promise<void> {
  return async (drawn) => {
    budget.guard();
    budget.charge(1);
    await run(drawn);
  };
}

/** What fast-check found running the run at a path again: the failure it shrank to, if the run failed again. */
interface AtPath {
  readonly failing?: Failing | undefined;
  /** fast-check's path of that failure. */
  readonly path?: string | undefined;
  /** fast-check's shrinking steps. */
  readonly shrinks: number;
}

/**
 * Runs the run at `path` of the seed with fast-check, which shrinks it when it fails (unless `replaying`: a replay
 * ends at the failure).
 *
 * @throws An error of the queue's factory or of the gate itself; fast-check interrupted by the budget before the
 * failing run fails without one.
 */
async function runAtPath(
  runsOf: fc.Arbitrary<Drawing>,
  run: (drawn: Drawing) => Promise<void>,
  { seed, path, replaying }: { seed: number; path: string; replaying: boolean },
): Promise<AtPath> {
  const details = await fc.check(fc.asyncProperty(runsOf, run), {
    seed,
    path,
    ...(replaying ? { endOnFailure: true } : {}),
  });
  const failure = details.errorInstance;
  if (details.failed && !details.interrupted && !(failure instanceof Unexplained)) throw failure;
  if (!details.failed || !(failure instanceof Unexplained)) return { shrinks: details.numShrinks };
  const failing = { failure, drawn: details.counterexample?.[0] as Drawing };
  return { failing, path: details.counterexamplePath ?? undefined, shrinks: details.numShrinks };
}

/** The counterexample of `failure`, with how it was shrunk. */
function counterexampleOf(
  failure: Unexplained,
  shrinking: Pick<OverlapCounterexample, "path" | "shrinks" | "removals" | "minimal" | "stoppedBy" | "shrinkMs"> & {
    readonly replays?: { readonly replays: number; readonly attempts: number };
  },
): OverlapCounterexample {
  const { calls, maxRetries, why, round } = failure;
  const tried = round === undefined ? [] : ordersTried(calls, maxRetries, round);
  const shown: OverlapCall[] = calls.map(({ round, call, afterPrevious, answer, invokedAt, answeredAt }) => ({
    round,
    call,
    afterPrevious,
    answer,
    invokedAt,
    answeredAt,
  }));
  const { stoppedBy, replays, ...shrunk } = shrinking;
  const attempt = replays === undefined ? "" : `\n  failed at replay ${replays.replays} of up to ${replays.attempts}`;
  return {
    detail: `overlapping calls (maxRetries ${maxRetries}): ${why}:\n${showRun(shown)}${showTried(tried, round)}${attempt}`,
    maxRetries,
    calls: shown,
    ...(round === undefined ? {} : { round }),
    path: shrunk.path,
    shrinks: shrunk.shrinks,
    removals: shrunk.removals,
    minimal: shrunk.minimal,
    ...(stoppedBy === undefined ? {} : { stoppedBy }),
    shrinkMs: shrunk.shrinkMs,
    ...(replays === undefined ? {} : { replays: replays.replays }),
  };
}

/** How many of the orders tried a report lists; the rest are counted. */
const ordersShown = 12;

/** The orders tried of the round that no order explains, under the run's calls: each up to its first wrong answer. */
function showTried(tried: readonly string[], round: number | undefined): string {
  if (tried.length === 0) return "";
  const more = tried.length > ordersShown ? `\n    … and ${tried.length - ordersShown} more` : "";
  const lines = tried.slice(0, ordersShown).map((order) => `\n    ${order}`);
  return `\n  orders of round ${round} tried (${tried.length}), each up to its first answer the model does not give:${lines.join("")}${more}`;
}

/** A run that failed: its failure, as drawn, and its index in the survey. */
interface Failing {
  readonly failure: Unexplained;
  readonly drawn: Drawing;
  readonly index?: number;
}

/** Makes one run on a fresh queue, counted in `tally`; throws `Unexplained` when it fails. */
function runner<T>(
  factory: SubjectFactory<T>,
  options: ReturnType<typeof qualify>,
  tally: { runs: number; commands: number },
): (drawn: Drawing) => Promise<void> {
  const { items, profile, timeoutMs } = options;
  return async (drawn) => {
    const clock = options.time ? { clock: new ClockModel() } : {};
    const subject = await factory({ maxRetries: drawn.maxRetries, ...clock });
    tally.runs++;
    let made: Made[];
    try {
      made = await makeRun(drawn, { subject, items, profile, timeoutMs });
    } catch (error) {
      if (!(error instanceof OverlapTimeout)) throw error;
      throw new Unexplained([], drawn.maxRetries, `a call of ${error.message} never answered within ${timeoutMs} ms`);
    }
    tally.commands += made.length;
    const round = firstUnexplainedRound(made, drawn.maxRetries);
    if (round !== undefined) {
      const why = `no order of the calls of round ${round} that keeps their real-time order gives their answers`;
      throw new Unexplained(made, drawn.maxRetries, why, round);
    }
  };
}

/** Makes `drawings` in order: the first that fails, or `undefined` when none does. */
async function firstFailing(
  drawings: readonly Drawing[],
  run: (drawn: Drawing) => Promise<void>,
): Promise<Failing | undefined> {
  for (const [index, drawn] of drawings.entries()) {
    try {
      await run(drawn);
    } catch (error) {
      if (!(error instanceof Unexplained)) throw error;
      return { failure: error, drawn, index };
    }
  }
  return undefined;
}

/**
 * fast-check's shrinking can stop where removing one call of a round would still fail: removes calls while the run
 * fails, first call first, within the budget; a replay makes exactly `removals`, as many as the check did.
 */
async function removeCalls(
  shrunk: Failing,
  run: (drawn: Drawing) => Promise<void>,
  budget: ShrinkBudget,
  limit: number | undefined,
): Promise<{ failure: Unexplained; removals: number }> {
  let failure = shrunk.failure;
  let current = shrunk.drawn;
  let removals = 0;
  scan: for (;;) {
    for (const [r, round] of current.rounds.entries()) {
      for (const i of round.keys()) {
        if (limit !== undefined ? removals >= limit : budget.exhausted) break scan;
        const rounds = current.rounds
          .map((calls, k) => (k === r ? calls.filter((_, j) => j !== i) : calls))
          .filter((calls) => calls.length > 0);
        if (rounds.length === 0) continue;
        const candidate = { maxRetries: current.maxRetries, rounds };
        try {
          budget.charge(1);
          await run(candidate);
        } catch (error) {
          if (!(error instanceof Unexplained)) throw error;
          failure = error;
          current = candidate;
          removals++;
          continue scan;
        }
      }
    }
    break;
  }
  return { failure, removals };
}
