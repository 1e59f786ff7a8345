/**
 * Worked examples of shutdown (docs/spec.md §12), run on the reference queue and on the model alike: what a shutdown
 * stops, and what it lets finish.
 */
import { describe, expect, test } from "vitest";
import { WorkQueueModel } from "../../../model/index.js";
import { WorkQueue } from "../../../src/index.js";

describe.each([
  ["the reference queue", (options: { maxRetries: number }) => new WorkQueue<unknown>(options)],
  ["the model", (options: { maxRetries: number }) => new WorkQueueModel<unknown>(options)],
])("%s", (_, make) => {
  test("shutDown sets shuttingDown and changes nothing else; a second shutDown changes nothing (§12.1, §12.2)", () => {
    const wq = make({ maxRetries: 3 });
    for (const x of ["a", "b", "c"]) wq.add(x);
    wq.get();
    wq.retry("c");
    expect(wq.shuttingDown).toBe(false);
    wq.shutDown();
    wq.shutDown();
    expect([wq.shuttingDown, wq.size, wq.inFlight, wq.failures("c")]).toEqual([true, 2, 1, 1]);
    expect([wq.get(), wq.get(), wq.get()]).toEqual(["b", "c", undefined]);
  });

  test("while shutting down, add queues nothing and marks nothing dirty (§12.3)", () => {
    const wq = make({ maxRetries: 3 });
    wq.add("a");
    wq.get();
    wq.shutDown();
    wq.add("a");
    wq.add("b");
    expect([wq.size, wq.inFlight]).toEqual([0, 1]);
    wq.done("a");
    expect([wq.size, wq.inFlight, wq.get()]).toEqual([0, 0, undefined]);
  });

  test("while shutting down, add of a value that is not an item still throws (§12.3)", () => {
    const wq = make({ maxRetries: 3 });
    wq.shutDown();
    expect(() => wq.add(undefined)).toThrow(TypeError);
    expect(() => wq.retry(null)).toThrow(TypeError);
  });

  test("while shutting down, retry counts the failure and gives up, even with maxRetries Infinity (§12.4)", () => {
    const wq = make({ maxRetries: Number.POSITIVE_INFINITY });
    wq.add("a");
    wq.get();
    wq.shutDown();
    expect([wq.retry("a"), wq.retry("b"), wq.failures("a"), wq.failures("b")]).toEqual([false, false, 1, 1]);
    wq.done("a");
    expect([wq.size, wq.inFlight]).toEqual([0, 0]);
  });

  test("a dirty mark set before shutDown survives it: done requeues the item and get hands it out (§12.5)", () => {
    const wq = make({ maxRetries: 3 });
    wq.add("a");
    wq.get();
    wq.retry("a");
    wq.shutDown();
    wq.done("a");
    expect([wq.size, wq.get(), wq.inFlight]).toEqual([1, "a", 1]);
  });

  test("forget and failures are unchanged by shutDown (§12.5)", () => {
    const wq = make({ maxRetries: 3 });
    wq.retry("a");
    wq.shutDown();
    wq.forget("a");
    expect([wq.failures("a"), wq.size]).toEqual([0, 1]);
  });
});
