/**
 * One run of overlapping calls: drawn as rounds of calls, made on a queue round by round without waiting within a
 * round, and explained — or not — by some order of its calls, keeping their real-time order, on the model.
 */
import * as fc from "fast-check";
import type { WorkQueueModel } from "../../model/index.js";
import { ProtocolBreach } from "../core/breach.js";
import type { Profile } from "../core/commands.js";
import { bounded } from "../core/driver.js";
import { type Answer, type Operation, sameAnswer } from "../core/operation.js";
import { showAnswer, showCall } from "../core/render.js";
import { capture, perform, readView, type Subject } from "../core/subject.js";
import { modelOf } from "../core/verify.js";
import { settledAlready } from "./settled.js";

/** What an overlapping call may be: a verb, or a view read as a call. */
export type OverlapVerb = "add" | "get" | "done" | "retry" | "forget" | "size" | "inFlight";

/** A call as drawn, before the run decides its item: `pick` chooses among the few items, or among those held. */
export interface Drawn {
  readonly verb: OverlapVerb;
  readonly pick: number;
  /** Made once the call before it in the round answered, rather than at once. */
  readonly afterPrevious: boolean;
}

/** One run as drawn. */
export interface Drawing {
  readonly maxRetries: number;
  readonly rounds: readonly (readonly Drawn[])[];
}

/**
 * One call of a run as it was made: what, in which round, what it answered, and when, on a counter that every
 * call's start and answer move, so that `answeredAt < invokedAt` of another call means it answered before that call
 * was made.
 *
 * @inline
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
export interface Made extends OverlapCall {
  readonly operation: RunCall;
}

/** The verbs that change the queue, and the views. */
const verbs: readonly OverlapVerb[] = ["add", "add", "get", "get", "done", "retry", "forget", "size", "inFlight"];

/** The arbitrary of a run: 1 to 8 rounds of 1 to 4 calls over `items`. */
export function drawing(items: number, finite: boolean): fc.Arbitrary<Drawing> {
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
export interface RunContext<T> {
  readonly subject: Subject<T>;
  readonly items: readonly unknown[];
  readonly profile: Profile;
  readonly timeoutMs: number;
}

/** Calls of a round that did not answer within the timeout. */
export class OverlapTimeout extends Error {}

/**
 * Makes the run's calls on `subject`, round after round. Under the contract profile, `done` and `retry` are made
 * only for an item a `get` answered and no `done` or `retry` was made for yet (the call is left out when none is);
 * under the robust profile, for any of the items.
 */
export async function makeRun<T>(drawn: Drawing, context: RunContext<T>): Promise<Made[]> {
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
        // A value, or a promise settled when its call returned, answered then, before any later call was made.
        let settledAt: number | undefined;
        const watch = (returned: unknown) => {
          if (settledAlready(returned)) settledAt = clock++;
        };
        const answer = isView(operation)
          ? capture(() => {
              const returned = readView(subject, operation.verb);
              watch(returned);
              return returned;
            })
          : perform(subject, operation, watch);
        return Promise.resolve(answer).then((answered) => {
          if (operation.verb === "get" && answered.kind === "value" && answered.value !== undefined) {
            held.push(answered.value);
          }
          const call = isView(operation) ? `${operation.verb}()` : showCall(operation);
          const answeredAt = settledAt ?? clock++;
          made.push({ round: r + 1, call, afterPrevious, answer: answered, invokedAt, answeredAt, operation });
        });
      };
      const next: Promise<void> = afterPrevious && previous !== undefined ? previous.then(make) : make();
      previous = next;
      answers.push(next);
    }
    // A round that does not answer in time is a finding about the queue here, not a breach of the driver; a call
    // that failed otherwise (a transport's breach) fails the run with its own error.
    let failed: unknown;
    const all = Promise.all(answers).catch((error: unknown) => {
      failed = error;
      throw error;
    });
    await bounded(all, context.timeoutMs, `round ${r + 1}`).catch((error: unknown) => {
      throw error !== failed && error instanceof ProtocolBreach && error.kind === "timed out"
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
  if (drawn.verb === "size") return subject.size === undefined ? undefined : { verb: "size" };
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
 *
 * The search is exhaustive and bounded by the runs' shape: a round has at most 4 calls, so at most 4! = 24 orders
 * are tried from each state a round can start in, and those states are the distinct end states of the round before.
 */
export function firstUnexplainedRound(calls: readonly Made[], maxRetries: number): number | undefined {
  return search(calls, maxRetries).round;
}

/**
 * The orders of round `round` of `calls` that the search tried and the model refused, each as its calls up to the
 * first whose answer differs from the model's, and what the model answers there: the evidence of a failure. Orders
 * that read the same (two `get()`s that answered alike, swapped) are listed once.
 * The caller's obligation: `round` is {@link firstUnexplainedRound}'s answer for `calls`.
 */
export function ordersTried(calls: readonly Made[], maxRetries: number, round: number): string[] {
  const { starts } = search(calls, maxRetries, round);
  const tried = new Set<string>();
  const mine = calls.filter((c) => c.round === round);
  for (const prefix of starts) {
    const visit = (order: Made[], left: Made[]) => {
      for (const candidate of left) {
        if (left.some((other) => other !== candidate && other.answeredAt < candidate.invokedAt)) continue;
        const attempt = [...order, candidate];
        const model = modelOf(maxRetries, undefined);
        for (const made of prefix) modelAnswer(model, made.operation);
        for (const made of order) modelAnswer(model, made.operation);
        const expected = modelAnswer(model, candidate.operation);
        if (sameAnswer(expected, candidate.answer, false)) {
          visit(
            attempt,
            left.filter((c) => c !== candidate),
          );
          continue;
        }
        const shown = attempt.map((c) => `${c.call} → ${showAnswer(c.answer)}`).join(", ");
        tried.add(`${shown}, but the model answers ${showAnswer(expected)}`);
      }
    };
    visit([], mine);
  }
  return [...tried];
}

/**
 * The search of {@link firstUnexplainedRound}: the first round no order explains, if any, and the states (as the
 * calls that lead to them) that round could start in — or, with `stop`, those round `stop` could start in.
 */
function search(
  calls: readonly Made[],
  maxRetries: number,
  stop?: number,
): { round: number | undefined; starts: Made[][] } {
  /** A model state reached: the calls that led to it, in order; the model is made again from them. */
  let states: Made[][] = [[]];
  const rounds = [...new Set(calls.map((c) => c.round))].sort((a, b) => a - b);
  for (const round of rounds) {
    if (round === stop) return { round, starts: states };
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
    if (next.size === 0) return { round, starts: states };
    states = [...next.values()];
  }
  return { round: undefined, starts: states };
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
 * Renders a run's calls, a round per line, in the order they were made: a call made after the call printed before it
 * answered (awaited, or answered before the call returned) with `then`, other calls side by side (`‖`). Only the
 * times decide: a call drawn to wait for an earlier call may follow a call made meanwhile that had not answered, and
 * then overlaps it.
 */
export function showRun(calls: readonly OverlapCall[]): string {
  const rounds = [...new Set(calls.map((c) => c.round))].sort((a, b) => a - b);
  return rounds
    .map((round) => {
      const line = calls
        .filter((c) => c.round === round)
        .map((c, i, all) => {
          const before = all[i - 1];
          const separator = before === undefined ? "" : before.answeredAt < c.invokedAt ? " then " : "  ‖  ";
          return `${separator}${c.call} → ${showAnswer(c.answer)}`;
        })
        .join("");
      return `  round ${round}: ${line}`;
    })
    .join("\n");
}

/** What a failing run reports. */
export class Unexplained extends Error {
  constructor(
    readonly calls: readonly Made[],
    readonly maxRetries: number,
    readonly why: string,
    /** The round no order explains; absent when a call never answered. */
    readonly round?: number,
  ) {
    super(why);
  }
}
