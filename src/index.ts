/**
 * The reference keyed work queue: dedup, one worker per item at a time, bounded retries, shutdown and draining,
 * waiting for work, and the controller loop; and the clocks, rate limiters and metrics that time will use. See
 * docs/spec.md for the rules it implements.
 *
 * @packageDocumentation
 * @module workqueue-spec
 */
export { type Clock, realClock, VirtualClock } from "./clock.js";
export {
  type DurationTotals,
  MetricsRecorder,
  type MetricsRecorderOptions,
  type MetricsSink,
  type SharedQueueGauges,
  type WorkQueueMetrics,
} from "./metrics.js";
export { WorkQueue, type WorkQueueOptions } from "./queue.js";
export {
  defaultControllerRateLimiter,
  exponentialBackoff,
  fastSlowBackoff,
  maxOf,
  type RateLimiter,
  tokenBucket,
  withMaxWait,
} from "./rate-limiters.js";
export type { WaitOptions } from "./waiters.js";
export { type HandlerContext, runWorkers, type WorkerOptions } from "./workers.js";
