/**
 * Every deliberately wrong synchronous queue, to prove that the gate rejects each, gathered from its family: the
 * in-flight state and its dirty mark (in-flight.mjs), item identity (identity.mjs), the failure count (retries.mjs),
 * the queue's order, capacity and size (fifo.mjs), state shared between queues (shared.mjs) and shutting down
 * (shutdown.mjs); with `naive`, the correct queue they are all made from (naive.mjs). Every export is a factory
 * `(options) => queue`, loadable by `--module` and by `serve-module.js <file> <export>`.
 */
export * from "./fifo.mjs";
export * from "./identity.mjs";
export * from "./in-flight.mjs";
export { naive } from "./naive.mjs";
export * from "./retries.mjs";
export * from "./shared.mjs";
export * from "./shutdown.mjs";
