/**
 * Test sinks for the metrics (docs/spec.md §19): one that writes down every call it gets and keeps the reading
 * function it was given, and the reading of metrics with nothing counted.
 */
import type { MetricsSink, WorkQueueMetrics } from "../../src/index.js";

/** A sink that writes down every call it gets, keeps the reading function it was given, and counts its connects. */
export function recordingSink() {
  const calls: string[] = [];
  let connects = 0;
  const sink: MetricsSink & { read?: () => WorkQueueMetrics } = {
    add: () => calls.push("add"),
    retry: () => calls.push("retry"),
    observeQueueDuration: (ms) => calls.push(`queue ${ms}`),
    observeWorkDuration: (ms) => calls.push(`work ${ms}`),
    connect(read) {
      connects++;
      sink.read = read;
    },
  };
  return { sink, calls, read: () => (sink.read as () => WorkQueueMetrics)(), connects: () => connects };
}

/** The metrics with nothing counted and nothing in flight. */
export const noMetrics: WorkQueueMetrics = {
  depth: 0,
  adds: 0,
  retries: 0,
  queueDuration: { count: 0, sumMs: 0 },
  workDuration: { count: 0, sumMs: 0 },
  unfinishedWorkMs: 0,
  longestRunningMs: 0,
};
