/**
 * How a `take` that the queue settled compares with the same take in the model of waiting (docs/spec.md §14): the
 * first difference, named by the rule it breaks.
 */
import type { Take } from "../../../model/index.js";
import { showValue } from "../../engine/render.js";
import type { Tracked } from "../turns.js";
import { type LifecycleInvariant, lifecycle } from "./invariants.js";

/** A take made on the queue and on the model at the same moment. */
export interface TakeRecord {
  /** The model's take. */
  readonly take: Take<string>;
  /** The queue's take. */
  readonly tracked: Tracked<string | undefined>;
  /** Its caller, for the log: `consumer 2`. */
  readonly who: string;
  /** Its signal. */
  readonly signal: AbortSignal;
}

/** The model's take in words. */
function expectedText(take: Take<string>): string {
  if (take.state === "waiting") return "in the model it still waits";
  if (take.state === "rejected") return "in the model its signal withdrew it";
  return `in the model it resolved with ${showValue(take.item)}`;
}

/** The queue's take in words. */
function actualText(tracked: Tracked<string | undefined>): string {
  if (tracked.state === "pending") return "still waits";
  if (tracked.state === "rejected") return `rejected with ${showValue(tracked.reason)}`;
  return `resolved with ${showValue(tracked.value)}`;
}

/** True when the queue's take stands where the model's does. */
function agrees(record: TakeRecord): boolean {
  const { take, tracked } = record;
  if (tracked.state === "pending") return take.state === "waiting";
  if (tracked.state === "rejected") return take.state === "rejected" && tracked.reason === record.signal.reason;
  return take.state === "resolved" && Object.is(tracked.value, take.item);
}

/** Which rule a disagreement breaks. */
function ruleOf(record: TakeRecord): LifecycleInvariant {
  const { take, tracked } = record;
  if (take.state === "rejected" || tracked.state === "rejected") return lifecycle.abort;
  if (take.state === "resolved" && take.item === undefined && tracked.state === "pending")
    return lifecycle.shutDownTakes;
  if (take.state === "waiting" && tracked.state === "resolved" && tracked.value === undefined) {
    return lifecycle.noMoreWork;
  }
  return lifecycle.fifo;
}

/**
 * The first rule that `record` breaks, with what went wrong, or `undefined` when the queue's take agrees with the
 * model's.
 */
export function compareTake(record: TakeRecord): [LifecycleInvariant, string] | undefined {
  if (agrees(record)) return undefined;
  const { take, tracked } = record;
  return [ruleOf(record), `${record.who}'s take #${take.id} ${actualText(tracked)}, but ${expectedText(take)}`];
}
