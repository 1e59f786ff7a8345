/**
 * Test helpers that wait without a clock: a turn of the event loop, and a promise's settlement read synchronously
 * (the core's, which the lifecycle check uses too). Tests bound their waits in turns, never in milliseconds.
 */
export { flush, type Tracked, track } from "../core/turns.js";
