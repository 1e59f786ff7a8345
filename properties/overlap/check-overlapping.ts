/**
 * Overlapping calls ([docs/spec.md §10.8](../../docs/spec.md#§10-invariants)): for a queue whose verbs answer promises, several calls are made
 * before any is awaited, and the answers must be those of some order of the calls that keeps their real-time
 * order — linearizability against the model. A run is a list of rounds; a round's calls are made one after the
 * other without waiting, except a call marked `afterPrevious`, which is made once the call before it answered; the next
 * round starts when every call of the round answered. A failure is shrunk by fast-check within a time budget.
 */
import * as fc from "fast-check";
import { ClockModel, type WorkQueueModel } from "../../model/index.js";
import { ProtocolBreach } from "../core/breach.js";
import type { Profile } from "../core/commands.js";
import { bounded } from "../core/driver.js";
import type { Rule } from "../core/invariants.js";
import { type Answer, type Operation, sameAnswer } from "../core/operation.js";
import { freshSeed, qualifyBase } from "../core/options.js";
import { showAnswer, showCall } from "../core/render.js";
import { defaultShrinkRuns, ShrinkBudget, type ShrinkStop } from "../core/shrink-budget.js";
import { capture, perform, readView, type Subject, type SubjectFactory } from "../core/subject.js";
import { modelOf } from "../core/verify.js";

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

/** What an overlapping call may be: a verb, or a view read as a call. */
export type OverlapVerb = "add" | "get" | "done" | "retry" | "forget" | "size" | "inFlight";

/** A call as drawn, before the run decides its item: `pick` chooses among the few items, or among those held. */
interface Drawn {
  readonly verb: OverlapVerb;
  readonly pick: number;
  /** Made once the call before it in the round answered, rather than at once. */
  readonly afterPrevious: boolean;
}

/** One run as drawn. */
interface Drawing {
  readonly maxRetries: number;
  readonly rounds: readonly (readonly Drawn[])[];
}

/**
 * One call of a run as it was made: what, in which round, what it answered, and when, on a counter that every
 * call's start and answer move, so that `answeredAt < invokedAt` of another call means it answered before that call
 * was made.
 *
 * @public
 */
export interface OverlapCall {
  /** The round, from 1. */
  readonly round: number;
  /** The call: a verb, or `size()` / `inFlight()` for a view. */
  readonly call: string;
  /** Whether it was made once the call before it answered. */
  readonly afterPrevious: boolean;
  /** What it answered. */
  readonly answer: Answer;
  /** When it was made. */
  readonly invokedAt: number;
  /** When its answer was seen. */
  readonly answeredAt: number;
}

/** A view read as a call. */
interface ViewCall {
  readonly verb: "size" | "inFlight";
}

/** A call of a run: a verb's operation, or a view. */
type RunCall = Operation | ViewCall;

function isView(call: RunCall): call is ViewCall {
  return call.verb === "size" || call.verb === "inFlight";
}

/** A call as made, with the operation the model replays. */
interface Made extends OverlapCall {
  readonly operation: RunCall;
}

/** The verbs that change the queue, and the views. */
const verbs: readonly OverlapVerb[] = ["add", "add", "get", "get", "done", "retry", "forget", "size", "inFlight"];

/** The arbitrary of a run: 1 to 8 rounds of 1 to 4 calls over `items`. */
function drawing(items: number, finite: boolean): fc.Arbitrary<Drawing> {
  const call = fc.record({
    verb: fc.constantFrom(...verbs),
    pick: fc.nat({ max: Math.max(0, items - 1) }),
    afterPrevious: fc.boolean(),
  });
  const maxRetries = finite
    ? fc.integer({ min: 0, max: 3 })
    : fc.oneof(fc.integer({ min: 0, max: 3 }), fc.constant(Number.POSITIVE_INFINITY));
  return fc.record({
    maxRetries,
    rounds: fc.array(fc.array(call, { minLength: 1, maxLength: 4 }), { minLength: 1, maxLength: 8 }),
  });
}

/** What a run needs to make its calls. */
interface RunContext<T> {
  readonly subject: Subject<T>;
  readonly items: readonly unknown[];
  readonly profile: Profile;
  readonly timeoutMs: number;
}

/** Calls of a round that did not answer within the timeout. */
class OverlapTimeout extends Error {}

/**
 * Makes the run's calls on `subject`, round after round. Under the contract profile, `done` and `retry` are made
 * only for an item a `get` answered and no `done` or `retry` was made for yet (the call is left out when none is);
 * under the robust profile, for any of the items.
 */
async function makeRun<T>(drawn: Drawing, context: RunContext<T>): Promise<Made[]> {
  const made: Made[] = [];
  let clock = 0;
  const held: unknown[] = [];
  const { subject, items, profile } = context;
  for (const [r, round] of drawn.rounds.entries()) {
    const answers: Promise<void>[] = [];
    let previous: Promise<void> | undefined;
    for (const drawnCall of round) {
      const afterPrevious = drawnCall.afterPrevious && previous !== undefined;
      const make = () => {
        const operation = operationOf(drawnCall, items, held, profile, subject);
        if (operation === undefined) return Promise.resolve();
        const invokedAt = clock++;
        const answer = isView(operation)
          ? capture(() => readView(subject, operation.verb))
          : perform(subject, operation);
        return Promise.resolve(answer).then((answered) => {
          if (operation.verb === "get" && answered.kind === "value" && answered.value !== undefined) {
            held.push(answered.value);
          }
          const call = isView(operation) ? `${operation.verb}()` : showCall(operation);
          made.push({ round: r + 1, call, afterPrevious, answer: answered, invokedAt, answeredAt: clock++, operation });
        });
      };
      const next: Promise<void> = afterPrevious && previous !== undefined ? previous.then(make) : make();
      previous = next;
      answers.push(next);
    }
    // A round that does not answer in time is a finding about the queue here, not a breach of the driver.
    await bounded(Promise.all(answers), context.timeoutMs, `round ${r + 1}`).catch((error: unknown) => {
      throw error instanceof ProtocolBreach && error.kind === "timed out"
        ? new OverlapTimeout(`round ${r + 1}`)
        : error;
    });
  }
  return made.sort((a, b) => a.invokedAt - b.invokedAt);
}

/** The call `drawn` stands for, now; `undefined` when the contract profile has no item for it. */
function operationOf<T>(
  drawn: Drawn,
  items: readonly unknown[],
  held: unknown[],
  profile: Profile,
  subject: Subject<T>,
): RunCall | undefined {
  if (drawn.verb === "get") return { verb: "get" };
  if (drawn.verb === "size") return { verb: "size" };
  if (drawn.verb === "inFlight") return subject.inFlight === undefined ? undefined : { verb: "inFlight" };
  if (profile === "contract" && (drawn.verb === "done" || drawn.verb === "retry")) {
    if (held.length === 0) return undefined;
    const [item] = held.splice(drawn.pick % held.length, 1);
    return { verb: drawn.verb, item };
  }
  return { verb: drawn.verb, item: items[drawn.pick % items.length] };
}

/** What the model answers to `operation`, changing it. */
function modelAnswer(model: WorkQueueModel<unknown>, operation: RunCall): Answer {
  if (isView(operation)) return { kind: "value", value: model[operation.verb] };
  return perform(model, operation) as Answer;
}

/**
 * Whether some order of `calls` that keeps their real-time order gives every answer the model would: a search over
 * the orders, round by round (a round starts after the previous one answered), keeping the distinct model states
 * each round can end in. Answers the round at which no order is left.
 */
export function firstUnexplainedRound(calls: readonly Made[], maxRetries: number): number | undefined {
  /** A model state reached: the calls that led to it, in order; the model is made again from them. */
  let states: Made[][] = [[]];
  const rounds = [...new Set(calls.map((c) => c.round))].sort((a, b) => a - b);
  for (const round of rounds) {
    const mine = calls.filter((c) => c.round === round);
    const next = new Map<string, Made[]>();
    for (const prefix of states) {
      const visit = (order: Made[], left: Made[]) => {
        if (left.length === 0) {
          const model = replayed([...prefix, ...order], maxRetries);
          if (model !== undefined) next.set(JSON.stringify(model.snapshot()), [...prefix, ...order]);
          return;
        }
        for (const candidate of left) {
          // A call made after another answered goes after it.
          if (left.some((other) => other !== candidate && other.answeredAt < candidate.invokedAt)) continue;
          const attempt = [...order, candidate];
          if (replayed([...prefix, ...attempt], maxRetries) === undefined) continue;
          visit(
            attempt,
            left.filter((c) => c !== candidate),
          );
        }
      };
      visit([], mine);
    }
    if (next.size === 0) return round;
    states = [...next.values()];
  }
  return undefined;
}

/** The model after `order`, or `undefined` when some call of it answered otherwise than the model. */
function replayed(order: readonly Made[], maxRetries: number): WorkQueueModel<unknown> | undefined {
  const model = modelOf(maxRetries, undefined);
  for (const made of order) {
    if (!sameAnswer(modelAnswer(model, made.operation), made.answer, false)) return undefined;
  }
  return model;
}

/**
 * Options of {@link checkOverlapping}.
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
}

/**
 * The outcome of {@link checkOverlapping}.
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
 * @public
 */
export interface OverlapCounterexample {
  /** What went wrong, with every call of the run. */
  readonly detail: string;
  /** The `maxRetries` of the queue. */
  readonly maxRetries: number;
  /** The calls, in the order they were made. */
  readonly calls: readonly OverlapCall[];
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
}

/** Renders a run's calls, a round per line: overlapping calls side by side, a call made after an answer with `then`. */
export function showRun(calls: readonly OverlapCall[]): string {
  const rounds = [...new Set(calls.map((c) => c.round))].sort((a, b) => a - b);
  return rounds
    .map((round) => {
      const line = calls
        .filter((c) => c.round === round)
        .map((c, i) => `${i === 0 ? "" : c.afterPrevious ? " then " : "  ‖  "}${c.call} → ${showAnswer(c.answer)}`)
        .join("");
      return `  round ${round}: ${line}`;
    })
    .join("\n");
}

/** What a failing run reports. */
class Unexplained extends Error {
  constructor(
    readonly calls: readonly Made[],
    readonly maxRetries: number,
    readonly why: string,
  ) {
    super(why);
  }
}

/** {@link OverlappingOptions} with every default filled: what the check reads. */
function qualify(options: OverlappingOptions) {
  return {
    ...qualifyBase(options),
    items: (options.items ?? ["a", "b", "c"]).slice(0, 3),
    seed: options.seed ?? freshSeed(),
    profile: options.profile ?? "robust",
    finiteMaxRetries: options.finiteMaxRetries === true,
    shrinkRuns: options.shrinkRuns ?? defaultShrinkRuns,
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
  const { items, seed, profile, timeoutMs } = qualified;
  let runs = 0;
  let commands = 0;
  const runsOf = drawing(items.length, qualified.finiteMaxRetries);
  /** Makes one run on a fresh queue; throws `Unexplained` when it fails. */
  const run = async (drawn: Drawing) => {
    const clock = qualified.time ? { clock: new ClockModel() } : {};
    const subject = await factory({ maxRetries: drawn.maxRetries, ...clock });
    runs++;
    let made: Made[];
    try {
      made = await makeRun(drawn, { subject, items, profile, timeoutMs });
    } catch (error) {
      if (!(error instanceof OverlapTimeout)) throw error;
      throw new Unexplained([], drawn.maxRetries, `a call of ${error.message} never answered within ${timeoutMs} ms`);
    }
    commands += made.length;
    const round = firstUnexplainedRound(made, drawn.maxRetries);
    if (round !== undefined) {
      const why = `no order of the calls of round ${round} that keeps their real-time order gives their answers`;
      throw new Unexplained(made, drawn.maxRetries, why);
    }
  };
  // The survey: every run in order, unshrunk; then fast-check runs the first failing one again, by its path, and
  // shrinks it within the budget (its shrinking has no bound of its own).
  let path = options.path;
  let surveyed: { readonly failure: Unexplained; readonly drawn: Drawing } | undefined;
  if (path === undefined) {
    const drawings = fc.sample(runsOf, { numRuns: qualified.runs, seed });
    for (const [index, drawn] of drawings.entries()) {
      try {
        await run(drawn);
      } catch (error) {
        if (!(error instanceof Unexplained)) throw error;
        path = String(index);
        surveyed = { failure: error, drawn };
        break;
      }
    }
    if (path === undefined) return { verdict: "conforms", runs, commands, seed };
  }
  const budget = new ShrinkBudget(qualified.shrinkRuns, "runs", qualified.shrinkTimeMs);
  const start = performance.now();
  const shrinking = async (drawn: Drawing) => {
    budget.guard(); // the budget is spent: fast-check stops with the shortest failure so far
    budget.charge(1);
    await run(drawn);
  };
  const details = await fc.check(fc.asyncProperty(runsOf, options.path === undefined ? shrinking : run), {
    seed,
    path,
    ...(options.path === undefined ? {} : { endOnFailure: true }),
  });
  // An error of the queue's factory or of the gate itself is rethrown; fast-check interrupted by the budget before
  // the failing run fails without one.
  if (details.failed && !details.interrupted && !(details.errorInstance instanceof Unexplained)) {
    throw details.errorInstance;
  }
  // When the budget ran out before fast-check ran the failing run again, or the run passed this time, the survey's
  // failure is reported as it was, unshrunk.
  const shrunk =
    details.failed && details.errorInstance instanceof Unexplained
      ? { failure: details.errorInstance, drawn: details.counterexample?.[0] as Drawing }
      : surveyed;
  if (shrunk === undefined) return { verdict: "conforms", runs, commands, seed };
  // fast-check's shrinking can stop where removing one call of a round would still fail: remove calls while the
  // run fails, first call first, within the budget; a replay makes exactly as many removals as the check did.
  let failure = shrunk.failure;
  let current = shrunk.drawn;
  let removals = 0;
  scan: for (;;) {
    for (const [r, round] of current.rounds.entries()) {
      for (const i of round.keys()) {
        if (options.removals !== undefined ? removals >= options.removals : budget.exhausted) break scan;
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
  const { calls, maxRetries, why } = failure;
  const shown: OverlapCall[] = calls.map(({ round, call, afterPrevious, answer, invokedAt, answeredAt }) => ({
    round,
    call,
    afterPrevious,
    answer,
    invokedAt,
    answeredAt,
  }));
  const counterexample: OverlapCounterexample = {
    detail: `overlapping calls (maxRetries ${maxRetries}): ${why}:\n${showRun(shown)}`,
    maxRetries,
    calls: shown,
    path: (shrunk === surveyed ? undefined : details.counterexamplePath) ?? path,
    shrinks: details.numShrinks + removals,
    removals,
    minimal: shrunk !== surveyed && budget.stoppedBy === undefined,
    ...(budget.stoppedBy === undefined ? {} : { stoppedBy: budget.stoppedBy }),
    shrinkMs: performance.now() - start,
  };
  return { verdict: "does not conform", runs, commands, seed, counterexample };
}
