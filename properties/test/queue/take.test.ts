/**
 * Worked examples of waiting for work (docs/spec.md §14) on the reference queue: who gets which item, when, and what
 * an abort or a shutdown does to a waiting take. Every wait is bounded by one turn of the event loop, never a timer.
 */
import { getEventListeners } from "node:events";
import { describe, expect, test } from "vitest";
import { WorkQueue } from "../../../src/index.js";
import { flush, track } from "../turns.js";

const queue = () => new WorkQueue<string>({ maxRetries: 3 });
const listeners = (signal: AbortSignal) => getEventListeners(signal, "abort").length;

describe("take", () => {
  test("hands out the oldest queued item at the call, marked in flight (§14.1)", async () => {
    const wq = queue();
    for (const x of ["a", "b"]) wq.add(x);
    const took = track(wq.take());
    expect([wq.size, wq.inFlight]).toEqual([1, 1]);
    await flush();
    expect(took).toEqual({ state: "resolved", value: "a" });
  });

  test("waits while nothing is queued, and gets the next item at once: in flight, never queued (§14.3)", async () => {
    const wq = queue();
    const took = track(wq.take());
    await flush();
    expect(took.state).toBe("pending");
    wq.add("a");
    expect([wq.size, wq.inFlight, wq.get()]).toEqual([0, 1, undefined]);
    await flush();
    expect(took).toEqual({ state: "resolved", value: "a" });
  });

  test("serves waiting takes in the order they were called, one item each, whoever queues it (§14.3)", async () => {
    const wq = queue();
    wq.add("x");
    wq.get();
    wq.add("x"); // dirty
    const takes = [track(wq.take()), track(wq.take()), track(wq.take()), track(wq.take())];
    wq.add("a");
    wq.retry("b"); // absent: queued by retry
    wq.done("x"); // requeued by done
    await flush();
    expect(takes.map((t) => t.value)).toEqual(["a", "b", "x", undefined]);
    expect([takes[3]?.state, wq.size, wq.inFlight]).toEqual(["pending", 0, 3]);
    wq.shutDown();
  });

  test("after shutDown, hands out what is still queued, then resolves with undefined (§14.2)", async () => {
    const wq = queue();
    wq.add("a");
    wq.shutDown();
    const takes = [track(wq.take()), track(wq.take())];
    await flush();
    expect(takes).toEqual([
      { state: "resolved", value: "a" },
      { state: "resolved", value: undefined },
    ]);
  });

  test("shutDown resolves every waiting take with undefined (§14.4)", async () => {
    const wq = queue();
    const takes = [track(wq.take()), track(wq.take())];
    wq.shutDown();
    await flush();
    expect(takes.map((t) => [t.state, t.value])).toEqual([
      ["resolved", undefined],
      ["resolved", undefined],
    ]);
  });

  test("with an already aborted signal, rejects with its reason and takes nothing, even when items are queued (§14.5)", async () => {
    const wq = queue();
    wq.add("a");
    const signal = AbortSignal.abort(new Error("too late"));
    const took = track(wq.take({ signal }));
    await flush();
    expect([took.state, took.reason, wq.size, wq.inFlight]).toEqual(["rejected", signal.reason, 1, 0]);
  });

  test.each([0, 1, 2])(
    "an abort withdraws waiting take %i of three; the others are served in order (§14.5)",
    async (i) => {
      const wq = queue();
      const controllers = [new AbortController(), new AbortController(), new AbortController()];
      const takes = controllers.map((c) => track(wq.take({ signal: c.signal })));
      controllers[i]?.abort("withdrawn");
      for (const x of ["a", "b", "c"]) wq.add(x);
      await flush();
      const expected = [0, 1, 2].map((j) => (j < i ? ["a", "b"][j] : j > i ? ["a", "b"][j - 1] : "withdrawn"));
      expect(takes.map((t) => (t.state === "rejected" ? t.reason : t.value))).toEqual(expected);
      expect([wq.size, wq.inFlight]).toEqual([1, 2]);
      expect(controllers.map((c) => listeners(c.signal))).toEqual([0, 0, 0]);
    },
  );

  test("a take that was handed an item resolves with it, even if its signal aborts right after (§14.5)", async () => {
    const wq = queue();
    const controller = new AbortController();
    const took = track(wq.take({ signal: controller.signal }));
    wq.add("a");
    controller.abort();
    await flush();
    expect([took.state, took.value, wq.inFlight]).toEqual(["resolved", "a", 1]);
  });

  test("a settled take leaves no listener on its signal, however it settled (§14.5)", async () => {
    const wq = queue();
    const [served, ended, aborted] = [new AbortController(), new AbortController(), new AbortController()];
    const takes = [served, ended, aborted].map((c) => track(wq.take({ signal: c.signal })));
    expect([served, ended, aborted].map((c) => listeners(c.signal))).toEqual([1, 1, 1]);
    aborted.abort();
    wq.add("a");
    wq.shutDown();
    await flush();
    expect(takes.map((t) => t.state)).toEqual(["resolved", "resolved", "rejected"]);
    expect([served, ended, aborted].map((c) => listeners(c.signal))).toEqual([0, 0, 0]);
  });

  test.each<[unknown, string]>([
    [5, "Expected `options` to be undefined or an object such as { signal }, got `5` (number)"],
    [null, "Expected `options` to be undefined or an object such as { signal }, got `null` (null)"],
    [{ signal: "stop" }, 'Expected `signal` to be undefined or an AbortSignal, got `"stop"` (string)'],
    [{ signal: {} }, "Expected `signal` to be undefined or an AbortSignal, got `[object Object]` (object)"],
  ])("with options %j, throws a TypeError that names them and takes nothing (§14.6)", (options, message) => {
    const wq = queue();
    wq.add("a");
    expect(() => wq.take(options as never)).toThrow(new TypeError(message));
    expect([wq.size, wq.inFlight]).toEqual([1, 0]);
  });
});

describe("for await", () => {
  /** Runs `loop` for at most ten turns of the event loop: a wrong iterator fails instead of hanging. */
  async function bounded(loop: () => Promise<void>): Promise<string> {
    const ran = track(loop());
    for (let turn = 0; turn < 10 && ran.state === "pending"; turn++) await flush();
    return ran.state;
  }

  test("iterates with take until the queue is shut down and nothing is queued (§14.7)", async () => {
    const wq = queue();
    for (const x of ["a", "b"]) wq.add(x);
    const seen: string[] = [];
    const state = await bounded(async () => {
      for await (const item of wq) {
        seen.push(item);
        if (item === "a") wq.add("c");
        if (item === "b") wq.shutDown();
        wq.done(item);
      }
    });
    expect([state, seen, wq.inFlight]).toEqual(["resolved", ["a", "b", "c"], 0]);
  });

  test("waits for the next item, and leaving the loop early takes nothing more (§14.7)", async () => {
    const wq = queue();
    const seen: string[] = [];
    const state = bounded(async () => {
      for await (const item of wq) {
        seen.push(item);
        wq.done(item);
        if (item === "b") break;
      }
    });
    for (const x of ["a", "b", "c"]) wq.add(x);
    expect([await state, seen, wq.size, wq.inFlight]).toEqual(["resolved", ["a", "b"], 1, 0]);
  });
});
