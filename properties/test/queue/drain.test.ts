/**
 * Worked examples of draining (docs/spec.md §13) on the reference queue, including the cases where client-go's
 * `ShutDownWithDrain` returns too early or not at all (§16). Every wait is bounded by one turn of the event loop.
 */
import { getEventListeners } from "node:events";
import { expect, test } from "vitest";
import { WorkQueue } from "../../../src/index.js";
import { flush, track } from "../turns.js";

const queue = () => new WorkQueue<string>({ maxRetries: 3 });

test("with nothing queued or in flight, a drain shuts the queue down and resolves at once (§13.1)", async () => {
  const wq = queue();
  const drained = track(wq.shutDownWithDrain());
  expect(wq.shuttingDown).toBe(true);
  await flush();
  expect(drained.state).toBe("resolved");
});

test("a drain waits while items are queued, though none is in flight, until the last is done (§13.1)", async () => {
  const wq = queue();
  for (const x of ["a", "b"]) wq.add(x);
  const drained = track(wq.shutDownWithDrain());
  const states: string[] = [];
  const step = async (call: () => unknown) => {
    call();
    await flush();
    states.push(drained.state);
  };
  await step(() => wq.get());
  await step(() => wq.done("a"));
  await step(() => wq.get());
  await step(() => wq.done("b"));
  expect(states).toEqual(["pending", "pending", "pending", "resolved"]);
});

test("a drain waits for an item that done requeues because it was marked dirty before the shutdown (§13.1)", async () => {
  const wq = queue();
  wq.add("a");
  wq.get();
  wq.add("a");
  const drained = track(wq.shutDownWithDrain());
  wq.done("a");
  await flush();
  expect([drained.state, wq.size]).toEqual(["pending", 1]);
  wq.done(wq.get() as string);
  await flush();
  expect(drained.state).toBe("resolved");
});

test("a drain waits while something is in flight, whoever holds it (§13.1)", async () => {
  const wq = queue();
  for (const x of ["a", "b"]) wq.add(x);
  wq.get();
  wq.get();
  const drained = track(wq.shutDownWithDrain());
  wq.done("a");
  await flush();
  expect(drained.state).toBe("pending");
  wq.done("b");
  await flush();
  expect(drained.state).toBe("resolved");
});

test("every drain resolves, concurrent or later, and a later shutDown does not end one (§13.2)", async () => {
  const wq = queue();
  wq.add("a");
  const first = [track(wq.shutDownWithDrain()), track(wq.shutDownWithDrain())];
  wq.shutDown();
  const got = wq.get() as string;
  const later = track(wq.shutDownWithDrain());
  await flush();
  expect([...first, later].map((d) => d.state)).toEqual(["pending", "pending", "pending"]);
  wq.done(got);
  await flush();
  expect([...first, later].map((d) => d.state)).toEqual(["resolved", "resolved", "resolved"]);
});

test("an already aborted signal rejects the drain at once, and the queue is shut down all the same (§13.3)", async () => {
  for (const queued of [false, true]) {
    const wq = queue();
    if (queued) wq.add("a");
    const signal = AbortSignal.abort(new Error("no time"));
    const drained = track(wq.shutDownWithDrain({ signal }));
    await flush();
    expect([drained.state, drained.reason, wq.shuttingDown]).toEqual(["rejected", signal.reason, true]);
  }
});

test("an abort rejects only its own drain with its reason; the queue stays shut down (§13.3)", async () => {
  const wq = queue();
  wq.add("a");
  const controllers = [new AbortController(), new AbortController(), new AbortController()];
  const drains = controllers.map((c) => track(wq.shutDownWithDrain({ signal: c.signal })));
  controllers[1]?.abort("enough");
  await flush();
  expect(drains.map((d) => d.state)).toEqual(["pending", "rejected", "pending"]);
  expect([drains[1]?.reason, wq.shuttingDown]).toEqual(["enough", true]);
  wq.done(wq.get() as string);
  controllers[2]?.abort("too late");
  await flush();
  expect(drains.map((d) => d.state)).toEqual(["resolved", "rejected", "resolved"]);
  expect(controllers.map((c) => getEventListeners(c.signal, "abort").length)).toEqual([0, 0, 0]);
});

test.each<[unknown, string]>([
  ["now", 'Expected `options` to be undefined or an object such as { signal }, got `"now"` (string)'],
  [{ signal: 1000 }, "Expected `signal` to be undefined or an AbortSignal, got `1000` (number)"],
])("with options %j, throws a TypeError that names them and does not shut down (§13.4)", (options, message) => {
  const wq = queue();
  expect(() => wq.shutDownWithDrain(options as never)).toThrow(new TypeError(message));
  expect(wq.shuttingDown).toBe(false);
});
