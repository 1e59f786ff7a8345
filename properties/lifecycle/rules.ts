/**
 * The named rules of the lifecycle check (docs/spec.md §12–§14), each a sentence of the spec. A failing run names
 * the first one it broke, with what went wrong and the interleaving that led there.
 */
import type { Rule } from "../core/invariants.js";

/**
 * A rule of the lifecycle: the sentence it checks and where docs/spec.md states it; its id is its key in the
 * check's record of rules (`fifo`, `drainExact`, …).
 *
 * @inline
 */
export interface LifecycleRule extends Rule {
  /** The sentence, such as `waiting takes are served in the order they were called, one item each`. */
  readonly name: string;
  /** The rule's number in docs/spec.md, such as `§14.3`. */
  readonly rule: string;
}

/** Builds a record of rules from `[name, rule]` pairs, each with its key as its id. */
export function named<K extends string>(rules: Record<K, [string, string]>): Record<K, LifecycleRule> {
  const entries = Object.entries(rules) as [K, [string, string]][];
  const built = entries.map(([id, [name, rule]]): [K, LifecycleRule] => [id, { id, name, rule }]);
  return Object.fromEntries(built) as Record<K, LifecycleRule>;
}

/** The rules that {@link checkLifecycle} checks on a queue, by key. */
export const lifecycleRules = named({
  answers: ["every answer and view equals the model's", "§4–§9, §12"],
  fifo: ["waiting takes are served in the order they were called, one item each", "§14.1, §14.3"],
  shutDownTakes: ["shutDown resolves every waiting take with undefined", "§14.4"],
  noMoreWork: ["a take resolves with undefined only once the queue is shut down and empty", "§14.2"],
  abort: ["an aborted take rejects with its signal's reason and never swallows an item", "§14.5"],
  iteration: ["for await takes one item a step and ends only when take answers undefined", "§14.7"],
  drainExact: ["a drain resolves exactly when nothing is queued, in flight or waiting", "§13.1, §17.7"],
  drainAll: ["every drain resolves", "§13.2"],
  drainAbort: ["an aborted drain rejects with its signal's reason", "§13.3"],
  unhandled: ["nothing becomes an unhandled rejection", "§15.6"],
  pending: [
    "nothing is left pending once the run settles: no waiting promise, no listener on a signal",
    "§13.3, §14.5",
  ],
});
