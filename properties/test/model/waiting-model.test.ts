/**
 * The model of waiting (docs/spec.md §14) checked on its own, so that the queue cannot agree with a wrong model by
 * accident: takes wait only while nothing is queued, are served oldest first, and a shutdown leaves none waiting.
 */
import * as fc from "fast-check";
import { expect, test } from "vitest";
import { type Take, WaitingModel } from "../../../model/index.js";
import { maxRetries } from "../../core/arbitraries.js";
import { params } from "../settings.js";

type Call = ["add" | "done" | "retry", string] | ["take", boolean] | ["abort", number] | ["shutDown", number];

const call: fc.Arbitrary<Call> = fc.oneof(
  fc.tuple(fc.constantFrom("add" as const, "done" as const, "retry" as const), fc.constantFrom("a", "b", "c")),
  fc.tuple(fc.constant("take" as const), fc.boolean()),
  fc.tuple(fc.constant("abort" as const), fc.nat(9)),
  fc.tuple(fc.constant("shutDown" as const), fc.nat(30)),
);

test("takes wait only while nothing is queued, are served oldest first with items they hold, and shutDown ends them", () => {
  fc.assert(
    fc.property(maxRetries, fc.array(call, { maxLength: 40 }), (m, calls) => {
      const model = new WaitingModel<string>({ maxRetries: m });
      const takes: Take<string>[] = [];
      for (const c of calls) {
        const waitingBefore = takes.filter((t) => t.state === "waiting");
        if (c[0] === "take") takes.push(model.take(c[1]));
        else if (c[0] === "abort") {
          const aimed = takes[c[1] % Math.max(1, takes.length)];
          if (aimed !== undefined) model.abort(aimed);
        } else if (c[0] === "shutDown") {
          if (c[1] === 0) model.shutDown(); // rare, so that most calls come before it
        } else model[c[0]](c[1]);
        const served = waitingBefore.filter((t) => t.state === "resolved" && t.item !== undefined);
        const stillWaiting = takes.filter((t) => t.state === "waiting");
        expect(served.every((t) => stillWaiting.every((w) => w.id > t.id))).toBe(true);
        expect(served.every((t) => model.queue.stateOf(t.item as string).startsWith("in flight"))).toBe(true);
        expect(model.waiting).toBe(stillWaiting.length);
        if (model.waiting > 0) expect(model.queue.size).toBe(0);
        if (model.queue.shuttingDown) expect(model.waiting).toBe(0);
      }
    }),
    params(),
  );
});

test("an already aborted take is rejected and takes nothing; an abort of a settled take changes nothing; a take after shutDown does not wait", () => {
  const model = new WaitingModel<string>({ maxRetries: 1 });
  model.add("a");
  expect(model.take(true)).toEqual({ id: 1, state: "rejected", item: undefined });
  const take = model.take();
  model.abort(take);
  expect([take.state, take.item, model.queue.inFlight]).toEqual(["resolved", "a", 1]);
  model.shutDown();
  expect([model.take(), model.waiting]).toEqual([{ id: 3, state: "resolved", item: undefined }, 0]);
  expect(model.drained).toBe(false);
  model.done("a");
  expect(model.drained).toBe(true);
});

test("§14.2, §20.10: with leases, a take while shutting down waits while an item is in flight, gets what its done requeues, and the done of the last one ends it", () => {
  for (const leases of [false, true]) {
    const model = new WaitingModel<string>({ maxRetries: 1, leases });
    model.add("a");
    model.add("b");
    model.take();
    model.take(); // "a" and "b" in flight
    model.add("a"); // dirty: its done queues it again
    model.shutDown();
    const waits = model.take();
    expect(waits.state).toBe(leases ? "waiting" : "resolved");
    model.done("a");
    expect([waits.state, waits.item]).toEqual(["resolved", leases ? "a" : undefined]);
    const last = model.take();
    model.done("a");
    expect(last.state).toBe(leases ? "waiting" : "resolved");
    model.done("b"); // the last item in flight
    expect([last.state, last.item]).toEqual(["resolved", leases ? undefined : "a"]); // without, it took "a" at once
  }
});
