/**
 * When a promise answered: a queue's promise may be resolved already when the call returns it, before any
 * callback of the caller could run. A caller that does not await may make its next call at once, and the queue owes
 * it the change that promise stands for ([docs/spec.md §10.8](../../docs/spec.md#§10-invariants): a promise
 * resolves only once its change is made); a `then` callback comes too late to see the difference, since it runs
 * after every microtask the call queued.
 */
import { inspect } from "node:util";
import { isThenable } from "../core/subject.js";

/** How Node shows a promise that has not settled: `Promise { <pending> }`, or `Sub [Promise] { <pending> }`. */
const pending = /^[^{]*\{ <pending>/;

/**
 * Whether `returned` was an answer already when its call returned: a value, or a native promise that has settled.
 * Node alone can tell a promise's state synchronously, through `util.inspect` (no standard API does); any other
 * thenable counts as not settled, so that its call is taken to answer when its callback runs.
 */
export function settledAlready(returned: unknown): boolean {
  if (returned instanceof Promise) return !pending.test(inspect(returned, { depth: 0 }));
  return !isThenable(returned);
}
