/**
 * The named checks of the lifecycle properties (docs/spec.md §12–§15), each a sentence of the spec: the queue's
 * rules, which `checkLifecycle` checks on any queue, and the controller loop's. A failing run names the first one
 * it broke, with what went wrong and the interleaving that led there.
 */
import { type LifecycleRule, lifecycleRules, named } from "../../lifecycle/rules.js";

/** A named check: the sentence it checks and where docs/spec.md states it. */
export type LifecycleInvariant = LifecycleRule;

/** The checks, by key. */
export const lifecycle = {
  ...lifecycleRules,
  ...named({
    exclusive: ["a key is never inside two handlers at once", "§10.1, §15.1"],
    concurrency: ["no more handlers run at once than there are workers", "§15.1"],
    protocol: ["a success forgets the failures, a failure is counted once and reported", "§15.1, §15.2"],
    calls: ["after its handler, a worker forgets, or retries and reports, and dones last", "§15.1"],
    giveUp: ["onGiveUp is called exactly when retry gives up", "§15.1"],
    handled: ["every key added before the shutdown is handled, successfully or given up", "§15.6"],
    again: ["a key added while its handler runs is handled again after it", "§10.3, §15.6"],
    workersEnd: [
      "the workers stop once the queue is shut down and empty, or after an abort, when every handler has settled",
      "§15.3, §15.4",
    ],
  }),
};
