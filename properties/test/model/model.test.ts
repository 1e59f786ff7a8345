/**
 * The model checked on its own, so that an implementation cannot agree with a wrong model by accident: its
 * invariants on its own state after every call, and laws that relate calls to each other.
 */
import * as fc from "fast-check";
import { describe, expect, test } from "vitest";
import { type ModelSnapshot, WorkQueueModel } from "../../../model/index.js";
import { scenario } from "../../core/arbitraries.js";
import type { Operation } from "../../core/operation.js";
import { perform } from "../../core/subject.js";
import { anyItems } from "../../core/universes.js";
import { planOf } from "../../sequential/plan.js";
import { params } from "../settings.js";

/** A model reached by a random sequence of calls (robust profile, shutdown included), and that sequence. */
const reached = scenario({ profile: "robust", shape: "few", items: anyItems, shutDown: true }).map((input) => ({
  maxRetries: input.maxRetries,
  plan: planOf(input).plan,
}));

/** A fresh model that has gone through `plan`. */
function replayed(maxRetries: number, plan: readonly Operation[]): WorkQueueModel<unknown> {
  const model = new WorkQueueModel<unknown>({ maxRetries });
  for (const operation of plan) perform(model, operation);
  return model;
}

const item = fc.constantFrom(...anyItems.few);

/** The model's snapshot after `calls`, made on a fresh copy of the reached state. */
function snapshotAfter(state: { maxRetries: number; plan: Operation[] }, calls: (m: WorkQueueModel<unknown>) => void) {
  const model = replayed(state.maxRetries, state.plan);
  calls(model);
  return model.snapshot();
}

const same = (a: unknown, b: unknown) => [a].includes(b);

/** The model's own invariants (docs/spec.md §2, §10.2): what is wrong with a snapshot, or nothing. */
function brokenInvariants(s: ModelSnapshot<unknown>): string[] {
  const broken: string[] = [];
  if (s.queue.some((x, i) => s.queue.findIndex((y) => same(x, y)) !== i)) broken.push("a duplicate in the queue");
  if (s.queue.some((x) => s.inFlight.some((y) => same(x, y)))) broken.push("an item both queued and in flight");
  if (s.inFlight.some((x, i) => s.inFlight.findIndex((y) => same(x, y)) !== i)) broken.push("an item in flight twice");
  if (s.dirty.some((x) => !s.inFlight.some((y) => same(x, y)))) broken.push("a dirty mark on an item not in flight");
  if (s.dirty.some((x, i) => s.dirty.findIndex((y) => same(x, y)) !== i)) broken.push("an item marked dirty twice");
  if (s.failures.some(([, n]) => !(Number.isInteger(n) && n > 0)))
    broken.push("a stored failure count that is not positive");
  return broken;
}

describe("the model", () => {
  test("keeps its own invariants after every call: no duplicate, nothing queued and in flight, dirty only in flight", () => {
    fc.assert(
      fc.property(reached, ({ maxRetries, plan }) => {
        const model = new WorkQueueModel<unknown>({ maxRetries });
        for (const operation of plan) {
          perform(model, operation);
          const snapshot = model.snapshot();
          expect(brokenInvariants(snapshot)).toEqual([]);
          expect([model.size, model.inFlight]).toEqual([snapshot.queue.length, snapshot.inFlight.length]);
        }
      }),
      params(),
    );
  });

  test("add of a queued item changes nothing", () => {
    fc.assert(
      fc.property(reached, (state) => {
        const model = replayed(state.maxRetries, state.plan);
        for (const x of model.snapshot().queue) expect(snapshotAfter(state, (m) => m.add(x))).toEqual(model.snapshot());
      }),
      params(),
    );
  });

  test("add is idempotent: a second add of the same item changes nothing", () => {
    fc.assert(
      fc.property(reached, item, (state, x) => {
        expect(snapshotAfter(state, (m) => [m.add(x), m.add(x)])).toEqual(snapshotAfter(state, (m) => m.add(x)));
      }),
      params(),
    );
  });

  test("forget is idempotent and sets the failure count to 0, changing nothing else", () => {
    fc.assert(
      fc.property(reached, item, (state, x) => {
        const once = snapshotAfter(state, (m) => m.forget(x));
        expect(snapshotAfter(state, (m) => [m.forget(x), m.forget(x)])).toEqual(once);
        const untouched = replayed(state.maxRetries, state.plan).snapshot();
        expect(once).toEqual({ ...untouched, failures: untouched.failures.filter(([y]) => !same(x, y)) });
      }),
      params(),
    );
  });

  test("done of an item that is not in flight changes nothing", () => {
    fc.assert(
      fc.property(reached, item, (state, x) => {
        const model = replayed(state.maxRetries, state.plan);
        fc.pre(!model.stateOf(x).startsWith("in flight"));
        expect(snapshotAfter(state, (m) => m.done(x))).toEqual(model.snapshot());
      }),
      params(),
    );
  });

  test("get on an empty queue answers undefined and changes nothing", () => {
    fc.assert(
      fc.property(reached, (state) => {
        const model = replayed(state.maxRetries, state.plan);
        while (model.get() !== undefined);
        const drained = model.snapshot();
        expect(model.get()).toBeUndefined();
        expect(model.snapshot()).toEqual(drained);
      }),
      params(),
    );
  });

  test("retry counts exactly one failure, then acts as add below maxRetries and changes nothing else at or above it or while shutting down", () => {
    fc.assert(
      fc.property(reached, item, (state, x) => {
        const model = replayed(state.maxRetries, state.plan);
        const count = model.failures(x) + 1;
        const requeued = model.retry(x);
        expect(model.failures(x)).toBe(count);
        expect(requeued).toBe(count < state.maxRetries && !model.shuttingDown);
        const expected = snapshotAfter(state, (m) => (requeued ? m.add(x) : undefined));
        expect({ ...model.snapshot(), failures: [] }).toEqual({ ...expected, failures: [] });
      }),
      params(),
    );
  });

  test("shutDown is idempotent and changes nothing but the shutting-down flag", () => {
    fc.assert(
      fc.property(reached, (state) => {
        const once = snapshotAfter(state, (m) => m.shutDown());
        expect(snapshotAfter(state, (m) => [m.shutDown(), m.shutDown()])).toEqual(once);
        expect(once).toEqual({ ...replayed(state.maxRetries, state.plan).snapshot(), shuttingDown: true });
      }),
      params(),
    );
  });

  test("while shutting down, add changes nothing, and retry counts one failure, answers false and changes nothing else", () => {
    fc.assert(
      fc.property(reached, item, (state, x) => {
        const model = replayed(state.maxRetries, state.plan);
        model.shutDown();
        const before = model.snapshot();
        model.add(x);
        expect(model.snapshot()).toEqual(before);
        const count = model.failures(x);
        expect(model.retry(x)).toBe(false);
        expect(model.failures(x)).toBe(count + 1);
        expect({ ...model.snapshot(), failures: [] }).toEqual({ ...before, failures: [] });
      }),
      params(),
    );
  });

  test("a call with undefined or null throws a TypeError and changes nothing", () => {
    const verbs = ["add", "done", "retry", "forget", "failures"] as const;
    fc.assert(
      fc.property(reached, fc.constantFrom(...verbs), fc.constantFrom(undefined, null), (state, verb, bad) => {
        const model = replayed(state.maxRetries, state.plan);
        const before = model.snapshot();
        expect(() => model[verb](bad)).toThrow(TypeError);
        expect(model.snapshot()).toEqual(before);
      }),
      params(),
    );
  });

  test("nothing is lost: draining hands out every queued item and every dirty item exactly once", () => {
    fc.assert(
      fc.property(reached, (state) => {
        const model = replayed(state.maxRetries, state.plan);
        const { queue, inFlight, dirty } = model.snapshot();
        for (const x of inFlight) model.done(x);
        const handedOut: unknown[] = [];
        for (let x = model.get(); x !== undefined; x = model.get()) {
          handedOut.push(x);
          model.done(x);
        }
        expect(handedOut).toEqual([...queue, ...inFlight.filter((x) => dirty.some((y) => same(x, y)))]);
        expect(model.snapshot()).toMatchObject({ queue: [], inFlight: [], dirty: [] });
      }),
      params(),
    );
  });
});
