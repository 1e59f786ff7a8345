/**
 * The reference keyed work queue: dedup, one worker per item at a time, bounded retries.
 * See docs/spec.md for the rules it implements.
 *
 * @packageDocumentation
 */
export { WorkQueue, type WorkQueueOptions } from "./queue.js";
