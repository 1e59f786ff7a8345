/**
 * Worked examples of the controller loop (docs/spec.md §15) on the reference queue: the protocol it keeps for each
 * item, its callbacks, how it stops, and its errors. Handlers settle when the test says, never on a timer.
 */
import { expect, test } from "vitest";
import { runWorkers, WorkQueue } from "../../../src/index.js";
import { flush, track } from "../turns.js";

/** A promise and the functions that settle it. */
function deferred(): { promise: Promise<void>; resolve: () => void; reject: (error: unknown) => void } {
  let resolve = () => {};
  let reject: (error: unknown) => void = () => {};
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

test("handles every key added before the shutdown, in queue order, then resolves with undefined (§15.1, §15.4)", async () => {
  const wq = new WorkQueue<string>({ maxRetries: 3 });
  const seen: string[] = [];
  const workers = track(runWorkers(wq, (key) => void seen.push(key), { concurrency: 2 }));
  for (const key of ["a", "b", "a", "c"]) wq.add(key);
  await flush();
  expect(workers.state).toBe("pending");
  wq.shutDown();
  await flush();
  // "a" was in flight when added again: it comes back after "c", requeued by its done.
  expect([seen, workers.state, workers.value, wq.inFlight]).toEqual([["a", "b", "c", "a"], "resolved", undefined, 0]);
});

test("runs at most `concurrency` handlers at once, and handles a key added meanwhile again after it (§15.1)", async () => {
  const wq = new WorkQueue<string>({ maxRetries: 3 });
  const running: string[] = [];
  const gates = new Map<string, () => void>();
  const handler = (key: string) => {
    running.push(key);
    const gate = deferred();
    gates.set(key, gate.resolve);
    return gate.promise.then(() => running.splice(running.indexOf(key), 1));
  };
  runWorkers(wq, handler, { concurrency: 2 });
  for (const key of ["a", "b", "c", "a"]) wq.add(key);
  await flush();
  expect(running).toEqual(["a", "b"]);
  gates.get("a")?.();
  await flush();
  expect(running).toEqual(["b", "c"]);
  gates.get("c")?.();
  await flush();
  expect(running).toEqual(["b", "a"]);
  wq.shutDown();
  for (const key of ["a", "b"]) gates.get(key)?.();
});

test("a success forgets the failures; a throw and a rejection are each counted once, then retried (§15.1)", async () => {
  const wq = new WorkQueue<string>({ maxRetries: 2 });
  const script = ["throws", "succeeds", "rejects", "succeeds"];
  const counts: number[] = [];
  const onError = (key: string) => void counts.push(wq.failures(key));
  const handler = async (key: string) => {
    const step = script.shift();
    if (step === "rejects") await Promise.reject(new Error(step));
    if (step === "throws") throw new Error(step);
    if (step === "succeeds" && script.length > 0) wq.add(key);
  };
  const workers = track(runWorkers(wq, handler, { onError }));
  wq.add("a");
  await flush();
  wq.shutDown();
  await flush();
  expect([script, counts, wq.failures("a"), workers.state]).toEqual([[], [1, 1], 0, "resolved"]);
});

test("onError and onGiveUp both take the item first, then the error (§15.1)", async () => {
  const wq = new WorkQueue<string>({ maxRetries: 1 });
  const calls: [string, string, unknown][] = [];
  const error = new Error("broken");
  runWorkers(wq, () => Promise.reject(error), {
    onError: (key, e) => void calls.push(["onError", key, e]),
    onGiveUp: (key, e) => void calls.push(["onGiveUp", key, e]),
  });
  wq.add("a");
  await flush();
  wq.shutDown();
  expect(calls).toEqual([
    ["onError", "a", error],
    ["onGiveUp", "a", error],
  ]);
});

test("a handler gets the item and a signal that aborts, with its reason, when the workers' signal does (§15.1)", async () => {
  const wq = new WorkQueue<string>({ maxRetries: 3 });
  const stop = new AbortController();
  const gate = deferred();
  const seen: { key: string; signal: AbortSignal }[] = [];
  const workers = track(
    runWorkers(
      wq,
      (key, { signal }) => {
        seen.push({ key, signal });
        return gate.promise;
      },
      { signal: stop.signal },
    ),
  );
  wq.add("a");
  await flush();
  const [first] = seen;
  expect([first?.key, first?.signal.aborted]).toEqual(["a", false]);
  const reason = new Error("stop");
  stop.abort(reason);
  expect([first?.signal.aborted, first?.signal.reason]).toEqual([true, reason]);
  gate.resolve();
  await flush();
  expect(workers.state).toBe("resolved");
});

test("without a signal for the workers, a handler's signal never aborts (§15.1)", async () => {
  const wq = new WorkQueue<string>({ maxRetries: 3 });
  const signals: AbortSignal[] = [];
  const workers = track(runWorkers(wq, (_key, { signal }) => void signals.push(signal)));
  wq.add("a");
  await flush();
  wq.shutDown();
  await flush();
  expect([signals.length, signals[0] instanceof AbortSignal, signals[0]?.aborted, workers.state]).toEqual([
    1,
    true,
    false,
    "resolved",
  ]);
});

test("a handler that throws synchronously is retried like one that rejects (§15.1, §15.2)", async () => {
  const wq = new WorkQueue<string>({ maxRetries: 3 });
  let calls = 0;
  const handler = (): void => {
    if (calls++ === 0) throw new Error("sync");
  };
  const workers = track(runWorkers(wq, handler));
  wq.add("a");
  await flush();
  wq.shutDown();
  await flush();
  expect([calls, wq.failures("a"), workers.state]).toEqual([2, 0, "resolved"]);
});

test("calls onGiveUp with the item and the error when retry gives up, also during shutdown, before done (§15.1)", async () => {
  const wq = new WorkQueue<string>({ maxRetries: 1 });
  const given: [string, unknown, number][] = [];
  const error = new Error("broken");
  const giveUp = (q: WorkQueue<string>) => (key: string, e: unknown) => void given.push([key, e, q.inFlight]);
  runWorkers(wq, () => Promise.reject(error), { onGiveUp: giveUp(wq) });
  wq.add("a");
  await flush();
  wq.forget("a");
  wq.shutDown();
  wq.add("b"); // ignored
  await flush();
  expect(given).toEqual([["a", error, 1]]);
  const late = new WorkQueue<string>({ maxRetries: Number.POSITIVE_INFINITY });
  const gate = deferred();
  runWorkers(late, () => gate.promise, { onGiveUp: giveUp(late) });
  late.add("b");
  late.shutDown();
  gate.reject(error);
  await flush();
  expect(given).toEqual([
    ["a", error, 1],
    ["b", error, 1],
  ]);
});

test("an error from onGiveUp goes to onError; one from onError is discarded; the worker goes on (§15.2)", async () => {
  const wq = new WorkQueue<string>({ maxRetries: 0 });
  const reported: unknown[] = [];
  const unhandled: unknown[] = [];
  const listen = (reason: unknown) => void unhandled.push(reason);
  process.on("unhandledRejection", listen);
  const onGiveUp = (key: string) => {
    if (key === "a") throw new Error("dead letter a");
    return Promise.reject(new Error("dead letter b"));
  };
  const onError = (_key: string, error: unknown) => {
    reported.push((error as Error).message);
    if (reported.length % 2 === 0) throw new Error("log down");
    return Promise.reject(new Error("log down"));
  };
  const workers = track(runWorkers(wq, (key) => Promise.reject(new Error(`handler ${key}`)), { onGiveUp, onError }));
  for (const key of ["a", "b"]) wq.add(key);
  wq.shutDown();
  await flush();
  process.off("unhandledRejection", listen);
  expect([reported, unhandled, workers.state, wq.inFlight]).toEqual([
    ["handler a", "dead letter a", "handler b", "dead letter b"],
    [],
    "resolved",
    0,
  ]);
});

test("awaits the callbacks before done: the item stays in flight until they settle (§15.2)", async () => {
  const wq = new WorkQueue<string>({ maxRetries: 0 });
  const [logged, dropped] = [deferred(), deferred()];
  runWorkers(wq, () => Promise.reject(new Error("no")), {
    onError: () => logged.promise,
    onGiveUp: () => dropped.promise,
  });
  wq.add("a");
  const inFlight: number[] = [];
  for (const gate of [logged, dropped, undefined]) {
    await flush();
    inFlight.push(wq.inFlight);
    gate?.resolve();
  }
  expect(inFlight).toEqual([1, 1, 0]);
  wq.shutDown();
});
