/**
 * The named checks of the lifecycle properties (docs/spec.md §12–§15), each a sentence of the spec. A failing run
 * names the first one it broke, with what went wrong and the interleaving that led there.
 */

/** A named check: the sentence it checks and where docs/spec.md states it. */
export interface LifecycleInvariant {
  /** The sentence. */
  readonly name: string;
  /** The rule. */
  readonly rule: string;
}

/** Builds the record of invariants with their rules. */
function named<K extends string>(rules: Record<K, [string, string]>): Record<K, LifecycleInvariant> {
  const entries = Object.entries(rules) as [K, [string, string]][];
  return Object.fromEntries(entries.map(([key, [name, rule]]) => [key, { name, rule }])) as Record<
    K,
    LifecycleInvariant
  >;
}

/** The checks, by key. */
export const lifecycle = named({
  answers: ["every answer and view equals the model's", "§4–§9, §12"],
  fifo: ["waiting takes are served in the order they were called, one item each", "§14.3"],
  shutDownTakes: ["shutDown resolves every waiting take with undefined", "§14.4"],
  noMoreWork: ["a take resolves with undefined only once the queue is shut down and empty", "§14.2"],
  abort: ["an aborted take rejects with its signal's reason and never swallows an item", "§14.5"],
  drainExact: ["a drain resolves exactly when nothing is queued or in flight", "§13.1"],
  drainAll: ["every drain resolves", "§13.2"],
  drainAbort: ["an aborted drain rejects with its signal's reason", "§13.3"],
  exclusive: ["a key is never inside two handlers at once", "§10.1, §15.1"],
  concurrency: ["no more handlers run at once than there are workers", "§15.1"],
  protocol: ["a success forgets the failures, a failure is counted once and reported", "§15.1, §15.2"],
  giveUp: ["onGiveUp is called exactly when retry gives up", "§15.1"],
  handled: ["every key added before the shutdown is handled, successfully or given up", "§15.6"],
  again: ["a key added while its handler runs is handled again after it", "§10.3, §15.6"],
  workersEnd: [
    "the workers stop once the queue is shut down and empty, or after an abort, when every handler has settled",
    "§15.3, §15.4",
  ],
  unhandled: ["nothing becomes an unhandled rejection", "§15.2, §15.6"],
  pending: ["nothing is left pending once the run settles: no waiting promise, no listener on a signal", "§15.6"],
});
