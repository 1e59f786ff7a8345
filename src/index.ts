/**
 * The reference keyed work queue: dedup, one worker per item at a time, bounded retries, shutdown and draining,
 * waiting for work, and the controller loop. See docs/spec.md for the rules it implements.
 *
 * @packageDocumentation
 * @module workqueue-spec
 */
export { WorkQueue, type WorkQueueOptions } from "./queue.js";
export type { WaitOptions } from "./waiters.js";
export { type HandlerContext, runWorkers, type WorkerOptions } from "./workers.js";
