/**
 * A queue's metrics (docs/spec.md §3.4, §19): what its sink is told, call by call, on a `VirtualClock`; the sink's
 * reading function against the model's `metrics()`; the shape errors of the option; and a queue without a sink,
 * which reads no clock for metrics. The gate compares the metrics with the model after every call of its timed runs
 * (properties/test/time/time-reference.test.ts); these are the worked cases.
 */
import { describe, expect, test } from "vitest";
import { WaitingModel, WorkQueueModel } from "../../../model/index.js";
import { type Clock, exponentialBackoff, type MetricsSink, VirtualClock, WorkQueue } from "../../../src/index.js";
import { noMetrics, recordingSink } from "../sinks.js";

/** A queue with a recording sink on a virtual clock, and the model of it. */
function metered(maxRetries = 5, backoff = false) {
  const clock = new VirtualClock();
  const recording = recordingSink();
  const rateLimiter = backoff ? exponentialBackoff(10, 1000) : undefined;
  const queue = new WorkQueue<string>({ maxRetries, clock, rateLimiter, metrics: recording.sink });
  return { clock, queue, ...recording };
}

describe("a queue with a metrics sink (§19)", () => {
  test("connects the sink once, in the constructor, and the reading starts at zero", () => {
    const { read, connects } = metered();
    expect(connects()).toBe(1);
    expect(read()).toEqual(noMetrics);
  });

  test("counts the adds that queue or mark dirty, and observes the time queued and the time in flight", () => {
    const { clock, queue, calls, read } = metered();
    queue.add("a");
    queue.add("a"); // §19.2: already queued, not counted
    clock.advance(10);
    expect(queue.get()).toBe("a"); // §19.3: queued for 10 ms
    queue.add("a"); // §4.3: marked dirty, counted
    queue.add("a"); // already dirty, not counted
    clock.advance(25);
    expect(read()).toMatchObject({ depth: 0, adds: 2, unfinishedWorkMs: 25, longestRunningMs: 25 });
    queue.done("a"); // §19.4: 25 ms in flight; requeued by its dirty mark, not counted again
    clock.advance(5);
    expect(read()).toMatchObject({ depth: 1, adds: 2, unfinishedWorkMs: 0, longestRunningMs: 0 });
    queue.done("b"); // §6.3: not in flight, observes nothing
    expect(calls).toEqual(["add", "queue 10", "add", "work 25"]);
  });

  test("a retry that requeues is counted before the add it makes, and one that gives up is not counted", () => {
    const { queue, calls, read } = metered(2);
    queue.add("a");
    queue.get();
    expect(queue.retry("a")).toBe(true); // marks the item in flight dirty
    expect(queue.retry("a")).toBe(false); // the second failure reaches maxRetries 2
    expect(calls).toEqual(["add", "queue 0", "retry", "add"]);
    expect(read()).toMatchObject({ adds: 2, retries: 1 });
  });

  test("a delayed requeue is counted as an add only when it falls due, and its queue duration starts then", () => {
    const { clock, queue, calls, read } = metered(5, true);
    queue.add("a");
    queue.get();
    queue.retry("a"); // waits 10 ms
    queue.done("a");
    expect(calls).toEqual(["add", "queue 0", "retry", "work 0"]);
    clock.advance(10);
    expect(calls.at(-1)).toBe("add");
    clock.advance(7);
    queue.get();
    expect(calls.at(-1)).toBe("queue 7");
    expect(read()).toMatchObject({ adds: 2, retries: 1, queueDuration: { count: 2, sumMs: 7 } });
  });

  test("an item handed to a waiting take is queued and handed out at once, and observes 0", async () => {
    const { clock, queue, calls, read } = metered();
    clock.advance(3);
    const next = queue.take();
    queue.add("a");
    expect(await next).toBe("a");
    clock.advance(4);
    queue.done("a");
    expect(calls).toEqual(["add", "queue 0", "work 4"]);
    expect(read()).toMatchObject({ depth: 0, adds: 1, queueDuration: { count: 1, sumMs: 0 } });
  });

  test("the gauges are read at the clock's time, and add the items in flight up in hand-out order", () => {
    const { clock, queue, read } = metered();
    queue.add("a");
    queue.add("b");
    queue.get();
    clock.advance(5);
    queue.get();
    clock.advance(2);
    expect(read()).toMatchObject({ unfinishedWorkMs: 7 + 2, longestRunningMs: 7 });
    queue.done("a");
    expect(read()).toMatchObject({ unfinishedWorkMs: 2, longestRunningMs: 2 });
  });

  test("the reading equals the model's after the same calls, the waiting takes' included", async () => {
    const { clock, queue, read } = metered(3, true);
    const model = new WaitingModel<string>({ maxRetries: 3, rateLimiter: exponentialBackoff(10, 1000) });
    const both = (
      act: (q: { add(i: string): void; get(): unknown; done(i: string): void; retry(i: string): boolean }) => unknown,
    ) => {
      act(queue);
      act(model.queue);
    };
    both((q) => q.add("a"));
    both((q) => q.add("b"));
    clock.advance(4);
    model.advance(4);
    both((q) => q.get());
    both((q) => q.retry("a"));
    both((q) => q.done("a"));
    const taken = queue.take();
    model.take();
    clock.advance(20);
    model.advance(20);
    expect(await taken).toBe("b");
    expect(read()).toEqual(model.queue.metrics());
  });

  test("shutting down changes no metric, and hand-outs and dones still observe", () => {
    const { clock, queue, read, calls } = metered();
    queue.add("a");
    queue.shutDown();
    queue.add("b");
    clock.advance(2);
    queue.get();
    clock.advance(3);
    queue.done("a");
    expect(calls).toEqual(["add", "queue 2", "work 3"]);
    expect(read()).toMatchObject({ depth: 0, adds: 1, retries: 0 });
  });
});

describe("the metrics option (§3.4)", () => {
  test.each([
    ["a number", 5],
    ["an object without observeWorkDuration", { add() {}, retry() {}, observeQueueDuration() {} }],
    [
      "a connect that is not a function",
      { add() {}, retry() {}, observeQueueDuration() {}, observeWorkDuration() {}, connect: 1 },
    ],
  ])("%s is a TypeError that names the value, thrown before the queue exists", (_, metrics) => {
    expect(() => new WorkQueue({ maxRetries: 1, metrics: metrics as unknown as MetricsSink })).toThrow(
      new TypeError(
        `Expected \`metrics\` to be undefined or a MetricsSink such as prometheusMetrics({ name: "pods" }), got ${typeof metrics === "number" ? "`5` (number)" : "`[object Object]` (object)"}`,
      ),
    );
  });

  test("what the sink's connect throws, the constructor throws", () => {
    const sink: MetricsSink = {
      add() {},
      retry() {},
      observeQueueDuration() {},
      observeWorkDuration() {},
      connect() {
        throw new Error("this sink serves another queue");
      },
    };
    expect(() => new WorkQueue({ maxRetries: 1, metrics: sink })).toThrow("this sink serves another queue");
  });

  test("without a sink, the queue reads no clock for metrics", () => {
    let reads = 0;
    const clock: Clock = {
      now: () => {
        reads++;
        return 0;
      },
      schedule: () => () => {},
    };
    const queue = new WorkQueue<string>({ maxRetries: 1, clock });
    queue.add("a");
    queue.done(queue.get() as string);
    queue.add("a");
    queue.get();
    queue.retry("a");
    expect(reads).toBe(0);
  });
});

test("the model's metrics (§19) count as the rules say: a worked case", () => {
  const model = new WorkQueueModel<string>({ maxRetries: 2 });
  model.add("a");
  model.add("a");
  model.advance(5);
  model.get();
  model.add("a");
  model.retry("a");
  model.advance(3);
  model.done("a");
  model.done("z");
  expect(model.metrics()).toEqual({
    depth: 1,
    adds: 2,
    retries: 1,
    queueDuration: { count: 1, sumMs: 5 },
    workDuration: { count: 1, sumMs: 3 },
    unfinishedWorkMs: 0,
    longestRunningMs: 0,
  });
});
