/**
 * How a `take`, a step of `for await` or a drain that the queue settled compares with the same call in the model of
 * the lifecycle (docs/spec.md §13, §14): the first difference, named by the rule it breaks.
 */
import type { Drain, Take } from "../../model/index.js";
import { showValue } from "../core/render.js";
import type { Tracked } from "../core/turns.js";
import { type LifecycleRule, lifecycleRules as rules } from "./rules.js";

/** A take (or a step of `for await`, which is one, §14.7) made on the queue and on the model at the same moment. */
export interface TakeRecord {
  /** The model's take. */
  readonly take: Take<string>;
  /** The queue's take; for a step of `for await`, what `next()` gave: `undefined` for the end of the loop. */
  readonly tracked: Tracked<string | undefined>;
  /** Its caller, for the log: `consumer 2`. */
  readonly who: string;
  /** Its signal; a step of `for await` has none. */
  readonly signal?: AbortSignal | undefined;
  /** Whether it is a step of `for await`. */
  readonly step?: boolean;
}

/** A drain made on the queue and on the model at the same moment. */
export interface DrainRecord {
  /** The model's drain. */
  readonly drain: Drain;
  /** The queue's drain. */
  readonly tracked: Tracked<void>;
  /** Its name, for the log: `shutDownWithDrain() #2`. */
  readonly name: string;
  /** Its signal. */
  readonly signal: AbortSignal;
}

/** The model's take in words. */
function expectedTake(take: Take<string>): string {
  if (take.state === "waiting") return "in the model it still waits";
  if (take.state === "rejected") return "in the model its signal withdrew it";
  return `in the model it resolved with ${showValue(take.item)}`;
}

/** A settlement in words. */
function actualText<V>(tracked: Tracked<V>): string {
  if (tracked.state === "pending") return "still waits";
  if (tracked.state === "rejected") return `rejected with ${showValue(tracked.reason)}`;
  return `resolved with ${showValue(tracked.value)}`;
}

/** True when the queue's take stands where the model's does. */
function takeAgrees(record: TakeRecord): boolean {
  const { take, tracked } = record;
  if (tracked.state === "pending") return take.state === "waiting";
  if (tracked.state === "rejected") return take.state === "rejected" && tracked.reason === record.signal?.reason;
  return take.state === "resolved" && Object.is(tracked.value, take.item);
}

/** Which rule a disagreement of takes breaks. */
function takeRule(record: TakeRecord): LifecycleRule {
  const { take, tracked } = record;
  if (record.step === true) return rules.iteration;
  if (take.state === "rejected" || tracked.state === "rejected") return rules.abort;
  if (take.state === "resolved" && take.item === undefined && tracked.state === "pending") return rules.shutDownTakes;
  if (tracked.state === "resolved" && tracked.value === undefined) return rules.noMoreWork;
  return rules.fifo;
}

/**
 * The first rule that `record` breaks, with what went wrong, or `undefined` when the queue's take agrees with the
 * model's.
 */
export function compareTake(record: TakeRecord): [LifecycleRule, string] | undefined {
  if (takeAgrees(record)) return undefined;
  const { take, tracked } = record;
  const call = record.step === true ? `step #${take.id} of for await` : `take #${take.id}`;
  return [takeRule(record), `${record.who}'s ${call} ${actualText(tracked)}, but ${expectedTake(take)}`];
}

/** The model's drain in words. */
function expectedDrain(drain: Drain): string {
  if (drain.state === "waiting") return "in the model it still waits: the queue is not drained";
  if (drain.state === "rejected") return "in the model its signal withdrew it";
  return "in the model it resolved: nothing is queued, in flight or waiting";
}

/**
 * The first rule that `record` breaks, with what went wrong, or `undefined` when the queue's drain agrees with the
 * model's: resolved exactly when the model's is (§13.1, §13.2), rejected only by its own signal (§13.3).
 */
export function compareDrain(record: DrainRecord): [LifecycleRule, string] | undefined {
  const { drain, tracked } = record;
  const agrees =
    tracked.state === "pending"
      ? drain.state === "waiting"
      : tracked.state === "resolved"
        ? drain.state === "resolved"
        : drain.state === "rejected" && tracked.reason === record.signal.reason;
  if (agrees) return undefined;
  const rule =
    drain.state === "rejected" || tracked.state === "rejected"
      ? rules.drainAbort
      : tracked.state === "resolved"
        ? rules.drainExact
        : rules.drainAll;
  return [rule, `${record.name} ${actualText(tracked)}, but ${expectedDrain(drain)}`];
}
