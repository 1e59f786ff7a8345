/**
 * The model of the lifecycle (docs/spec.md §13–§15) checked on its own, so that a queue cannot agree with a wrong
 * model by accident: drains wait exactly until nothing is queued, in flight or waiting, every drain resolves, an
 * abort withdraws only its own drain; `for await` steps are takes; and what a worker calls and when it stops.
 */
import * as fc from "fast-check";
import { expect, test } from "vitest";
import {
  type Drain,
  LifecycleModel,
  leaseWorkerCalls,
  type Take,
  workerCalls,
  workerStops,
} from "../../../model/index.js";
import { maxRetries } from "../../core/arbitraries.js";
import { params } from "../settings.js";

const model = () => new LifecycleModel<string>({ maxRetries: 3 });

test("a drain of an empty queue shuts it down and resolves at once; each drain is numbered (§13.1)", () => {
  const m = model();
  const first = m.shutDownWithDrain();
  expect([first, m.queue.shuttingDown, m.drains]).toEqual([{ id: 1, state: "resolved" }, true, 0]);
  expect(m.shutDownWithDrain()).toEqual({ id: 2, state: "resolved" });
});

test("a drain waits while an item is queued or in flight, and resolves in the done of the last one (§13.1)", () => {
  const m = model();
  for (const x of ["a", "b"]) m.add(x);
  const drain = m.shutDownWithDrain();
  const states: string[] = [];
  for (const call of [() => m.take(), () => m.done("a"), () => m.queue.get(), () => m.done("b")]) {
    call();
    states.push(drain.state);
  }
  expect(states).toEqual(["waiting", "waiting", "waiting", "resolved"]);
  expect(m.drains).toBe(0);
});

test("a drain waits while an item waits to fall due, though nothing is queued or in flight (§13.1, §17.7)", () => {
  const m = model();
  m.addAfter("a", 10);
  const drain = m.shutDownWithDrain();
  m.advance(10);
  expect([drain.state, m.queue.size]).toEqual(["waiting", 1]);
  m.take();
  m.done("a");
  expect(drain.state).toBe("resolved");
});

test("every drain resolves, concurrent or later; a later shutDown ends none (§13.2)", () => {
  const m = model();
  m.add("a");
  const drains = [m.shutDownWithDrain(), m.shutDownWithDrain()];
  m.shutDown();
  m.take();
  drains.push(m.shutDownWithDrain());
  expect([drains.map((d) => d.state), m.drains]).toEqual([["waiting", "waiting", "waiting"], 3]);
  m.done("a");
  expect(drains.map((d) => d.state)).toEqual(["resolved", "resolved", "resolved"]);
});

test("an already aborted drain rejects at once, shuts down all the same, and stays rejected (§13.3)", () => {
  for (const queued of [false, true]) {
    const m = model();
    if (queued) m.add("a");
    const drain = m.shutDownWithDrain(true);
    expect([drain.state, m.queue.shuttingDown, m.drains]).toEqual(["rejected", true, 0]);
    if (queued) m.done(m.queue.get() as string);
    expect(drain.state).toBe("rejected");
  }
});

test("an abort withdraws only its own waiting drain; an abort of a settled drain changes nothing (§13.3)", () => {
  const m = model();
  m.add("a");
  const drains = [m.shutDownWithDrain(), m.shutDownWithDrain()];
  m.abortDrain(drains[0] as Drain);
  expect([drains.map((d) => d.state), m.drains]).toEqual([["rejected", "waiting"], 1]);
  m.done(m.queue.get() as string);
  m.abortDrain(drains[1] as Drain);
  expect(drains.map((d) => d.state)).toEqual(["rejected", "resolved"]);
});

test("a drain resolves exactly once the model is drained, unless its signal aborted first (§13.1–§13.3)", () => {
  type Call = ["add" | "done" | "take", string] | ["drain" | "abort", number];
  const call: fc.Arbitrary<Call> = fc.oneof(
    fc.tuple(fc.constantFrom("add" as const, "done" as const, "take" as const), fc.constantFrom("a", "b")),
    fc.tuple(fc.constantFrom("drain" as const, "abort" as const), fc.nat(3)),
  );
  fc.assert(
    fc.property(maxRetries, fc.array(call, { maxLength: 30 }), (r, calls) => {
      const m = new LifecycleModel<string>({ maxRetries: r });
      const drains: Drain[] = [];
      const aborted = new Set<Drain>();
      for (const [verb, arg] of calls) {
        if (verb === "drain") drains.push(m.shutDownWithDrain(arg === 0));
        else if (verb === "abort") {
          const drain = drains[arg % Math.max(1, drains.length)];
          if (drain?.state === "waiting") aborted.add(drain);
          if (drain !== undefined) m.abortDrain(drain);
        } else if (verb === "take") m.take();
        else m[verb](arg as string);
        for (const drain of drains.filter((d) => !aborted.has(d) && d.state !== "rejected")) {
          expect(drain.state).toBe(m.drained ? "resolved" : "waiting");
        }
        expect(m.drains).toBe(drains.filter((d) => d.state === "waiting").length);
      }
    }),
    params(),
  );
});

test("a step of for await is a take without a signal: an item, a wait, or undefined at the end (§14.7)", () => {
  const m = model();
  m.add("a");
  const steps = [m.next(), m.next()];
  expect(steps.map((t) => [t.state, t.item])).toEqual([
    ["resolved", "a"],
    ["waiting", undefined],
  ]);
  m.shutDown();
  expect([steps[1]?.state, m.next().state]).toEqual(["resolved", "resolved"]);
});

test("a worker forgets after a success, retries, reports and gives up after a failure, and dones last (§15.1)", () => {
  expect([
    workerCalls(true, false),
    workerCalls(true, true),
    workerCalls(false, true),
    workerCalls(false, false),
  ]).toEqual([
    ["forget", "done"],
    ["forget", "done"],
    ["retry", "onError", "done"],
    ["retry", "onError", "onGiveUp", "done"],
  ]);
});

test("a lease worker makes §15.1's calls; a refused call is reported and ends them, one that did not reach the database is reported and the next follows (§20.14)", () => {
  expect([
    leaseWorkerCalls(true, false),
    leaseWorkerCalls(false, false),
    leaseWorkerCalls(true, false, { forget: "refused" }),
    leaseWorkerCalls(true, false, { done: "refused" }),
    leaseWorkerCalls(false, true, { retry: "refused" }),
    leaseWorkerCalls(false, false, { retry: "refused" }),
    leaseWorkerCalls(false, false, { done: "refused" }),
    leaseWorkerCalls(true, false, { forget: "unavailable", done: "unavailable" }),
    leaseWorkerCalls(false, false, { retry: "unavailable" }),
    leaseWorkerCalls(true, false, { retry: "refused" }),
    leaseWorkerCalls(false, true, { forget: "refused" }),
  ]).toEqual([
    ["forget", "done"],
    ["retry", "onError", "onGiveUp", "done"],
    ["forget", "onError"],
    ["forget", "done", "onError"],
    ["retry", "onError", "onError"],
    ["retry", "onError", "onError"],
    ["retry", "onError", "onGiveUp", "done", "onError"],
    ["forget", "onError", "done", "onError"],
    ["retry", "onError", "onError", "done"],
    ["forget", "done"],
    ["retry", "onError", "done"],
  ]);
});

test("a worker stops when its take answers undefined or rejects, not while it waits or gets an item (§15.3)", () => {
  const take = (state: Take<string>["state"], item?: string): Take<string> => ({ id: 1, state, item });
  expect([
    workerStops(take("resolved")),
    workerStops(take("rejected")),
    workerStops(take("waiting")),
    workerStops(take("resolved", "a")),
  ]).toEqual([true, true, false, false]);
});
