/**
 * The options of the controller loop (docs/spec.md §15): how its signal stops it, and the errors a bad argument
 * throws before any worker starts. Handlers settle when the test says, never on a timer.
 */
import { getEventListeners } from "node:events";
import { expect, test } from "vitest";
import { runWorkers, WorkQueue } from "../../../src/index.js";
import { flush, track } from "../turns.js";

test("an aborted signal stops waiting workers at once and lets running handlers finish their items (§15.3)", async () => {
  const wq = new WorkQueue<string>({ maxRetries: 3 });
  const controller = new AbortController();
  const gates = new Map<string, () => void>();
  const handler = (key: string) => new Promise<void>((resolve) => void gates.set(key, resolve));
  const workers = track(runWorkers(wq, handler, { concurrency: 3, signal: controller.signal }));
  for (const key of ["a", "b"]) wq.add(key);
  await flush();
  wq.retry("a"); // in flight: marked dirty, requeued by its done
  controller.abort();
  await flush();
  wq.add("c"); // the third worker stopped: nobody takes it
  expect([workers.state, wq.size, wq.inFlight]).toEqual(["pending", 1, 2]);
  gates.get("b")?.();
  await flush();
  expect([workers.state, wq.size, wq.inFlight]).toEqual(["pending", 1, 1]);
  gates.get("a")?.();
  await flush();
  expect([workers.state, wq.size, wq.inFlight, wq.shuttingDown]).toEqual(["resolved", 2, 0, false]);
  expect(getEventListeners(controller.signal, "abort").length).toBe(0);
});

test("with an already aborted signal, resolves at once, takes nothing and does not shut the queue down (§15.3)", async () => {
  const wq = new WorkQueue<string>({ maxRetries: 3 });
  wq.add("a");
  const seen: string[] = [];
  const workers = track(runWorkers(wq, (key) => void seen.push(key), { signal: AbortSignal.abort() }));
  await flush();
  expect([workers.state, seen, wq.size, wq.inFlight, wq.shuttingDown]).toEqual(["resolved", [], 1, 0, false]);
});

test("an abort lets the handlers in flight settle, then resolves; their items are done (§15.3, §15.4)", async () => {
  const wq = new WorkQueue<string>({ maxRetries: 3 });
  const controller = new AbortController();
  const gates: (() => void)[] = [];
  const handler = () => new Promise<void>((resolve) => void gates.push(resolve));
  const workers = track(runWorkers(wq, handler, { concurrency: 2, signal: controller.signal }));
  for (const key of ["a", "b", "c"]) wq.add(key);
  await flush();
  controller.abort();
  for (const gate of gates) gate();
  await flush();
  expect([workers.state, wq.size, wq.inFlight, wq.shuttingDown]).toEqual(["resolved", 1, 0, false]);
});

const queue = new WorkQueue<string>({ maxRetries: 1 });

test.each<[string, unknown, unknown, Error]>([
  [
    "a handler that is not a function",
    "reconcile",
    undefined,
    new TypeError('Expected `handler` to be a function, got `"reconcile"` (string)'),
  ],
  [
    "options that are not an object",
    () => {},
    4,
    new TypeError("Expected `options` to be undefined or an object such as { concurrency: 4 }, got `4` (number)"),
  ],
  [
    "a concurrency of 0",
    () => {},
    { concurrency: 0 },
    new RangeError("Expected `concurrency` to be a positive integer, got `0` (number)"),
  ],
  [
    "a concurrency of 1.5",
    () => {},
    { concurrency: 1.5 },
    new RangeError("Expected `concurrency` to be a positive integer, got `1.5` (number)"),
  ],
  [
    "a concurrency of Infinity",
    () => {},
    { concurrency: Number.POSITIVE_INFINITY },
    new RangeError("Expected `concurrency` to be a positive integer, got `Infinity` (number)"),
  ],
  [
    'a concurrency of "2"',
    () => {},
    { concurrency: "2" },
    new RangeError('Expected `concurrency` to be a positive integer, got `"2"` (string)'),
  ],
  [
    "a signal that is not an AbortSignal",
    () => {},
    { signal: true },
    new TypeError("Expected `signal` to be undefined or an AbortSignal, got `true` (boolean)"),
  ],
  [
    "an onError that is not a function",
    () => {},
    { onError: "log" },
    new TypeError('Expected `onError` to be undefined or a function, got `"log"` (string)'),
  ],
  [
    "an onGiveUp that is not a function",
    () => {},
    { onGiveUp: null },
    new TypeError("Expected `onGiveUp` to be undefined or a function, got `null` (null)"),
  ],
])("throws at once for %s, naming the value, and takes nothing (§15.5)", (_, handler, options, error) => {
  queue.add("a");
  expect(() => runWorkers(queue, handler as never, options as never)).toThrow(error);
  expect([queue.size, queue.inFlight]).toEqual([1, 0]);
});
