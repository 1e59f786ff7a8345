/**
 * Test subjects made from the reference queue: its five verbs and `size`, and nothing else, so that a test can
 * replace one member or leave one out and see what the gate makes of it.
 */
import { exponentialBackoff, type MetricsSink, WorkQueue, type WorkQueueMetrics } from "../../src/index.js";
import type { Subject, SubjectFactory, SubjectOptions } from "../core/subject.js";

/**
 * A factory of reference queues seen only through `add`, `get`, `done`, `retry`, `forget` and `size` (no
 * `shutDown`, no other view), with the members `patch` returns in their place; a member patched to `undefined`
 * is missing. The patch is spread, so a getter in it runs once, when the queue is made.
 */
export function verbsOf(
  patch: (queue: WorkQueue<unknown>) => Record<string, unknown> = () => ({}),
): SubjectFactory<unknown> {
  return (options) => {
    const queue = new WorkQueue<unknown>(options);
    const subject = {
      add: (item: unknown) => queue.add(item),
      get: () => queue.get(),
      done: (item: unknown) => queue.done(item),
      retry: (item: unknown) => queue.retry(item),
      forget: (item: unknown) => queue.forget(item),
      get size() {
        return queue.size;
      },
      ...patch(queue),
    };
    return subject as Subject<unknown>;
  };
}

/**
 * The reference queue on the gate's clock, with the run's backoff as client-go's exponential limiter and its metrics
 * (docs/spec.md §19) read through a sink.
 */
export const timedReference = ({ maxRetries, clock, backoff }: SubjectOptions) => {
  let read: () => WorkQueueMetrics = () => {
    throw new Error("the queue never connected its metrics sink");
  };
  const sink: MetricsSink = {
    add() {},
    retry() {},
    observeQueueDuration() {},
    observeWorkDuration() {},
    connect(reader) {
      read = reader;
    },
  };
  const queue = new WorkQueue<unknown>({
    maxRetries,
    clock,
    rateLimiter: backoff === undefined ? undefined : exponentialBackoff(backoff.baseMs, backoff.maxMs),
    metrics: sink,
  });
  return Object.assign(queue, { metrics: () => read() });
};
