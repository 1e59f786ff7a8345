/**
 * `LeaseModel` (docs/spec.md §20) and `WorkQueueModel.expire` on their own, rule by rule, with exact answers: the
 * lease suite compares PostgreSQL with this model, so the model must be right without it.
 */
import { expect, test } from "vitest";
import { LeaseModel, WorkQueueModel } from "../../../model/index.js";

const fresh = (maxRetries = 3) => new LeaseModel({ maxRetries, leaseMs: 100 });

test("§20.2: get hands out the oldest item under a lease whose token grows and which expires leaseMs later", () => {
  const model = fresh();
  model.add("a");
  model.add("b");
  expect(model.get()).toEqual({ item: "a", token: 1, expiresAt: 100 });
  model.advance(30);
  expect(model.get()).toEqual({ item: "b", token: 2, expiresAt: 130 });
  expect(model.get()).toBeUndefined();
  expect([model.size, model.inFlight, model.now]).toEqual([0, 2, 30]);
});

test("§20.3: an expired lease requeues its item at the tail at its expiry, keeping its failures, and is stale", () => {
  const model = fresh();
  model.add("a");
  const a = model.get();
  if (a === undefined) throw new Error("nothing handed out");
  expect(model.retry(a)).toEqual({ stale: false, value: true }); // dirty now
  model.advance(99);
  expect([model.size, model.inFlight]).toEqual([0, 1]);
  model.add("b");
  model.advance(1);
  expect([model.size, model.inFlight, model.failures("a")]).toEqual([2, 0, 1]);
  expect(model.done(a)).toEqual({ stale: true });
  expect(model.retry(a)).toEqual({ stale: true });
  expect(model.forget(a)).toEqual({ stale: true });
  expect(model.extend(a)).toEqual({ stale: true });
  expect(model.failures("a")).toBe(1);
  expect(model.get()?.item).toBe("b"); // "b" was queued before "a" expired
  expect(model.get()).toEqual({ item: "a", token: 3, expiresAt: 200 });
  expect(model.size).toBe(0); // the dirty mark was served by the requeue, not kept
});

test("§20.3: leases expiring in one advance go back in the order of their expiries, then of their tokens", () => {
  const model = fresh();
  for (const item of ["a", "b", "c"]) model.add(item);
  const a = model.get();
  model.advance(10);
  const b = model.get();
  const c = model.get();
  if (a === undefined || b === undefined || c === undefined) throw new Error("nothing handed out");
  model.advance(5);
  expect(model.extend(b)).toEqual({ stale: false, value: 115 });
  model.advance(500);
  expect([model.get()?.item, model.get()?.item, model.get()?.item]).toEqual(["a", "c", "b"]);
});

test("§20.3: leases expiring at one instant go back in the order they were handed out, whatever their items", () => {
  const model = fresh();
  model.add("a");
  const first = model.get(); // "a", token 1
  if (first === undefined) throw new Error("nothing handed out");
  model.done(first);
  model.add("b");
  model.add("a");
  expect([model.get()?.token, model.get()?.token]).toEqual([2, 3]); // "b", then "a" again
  model.advance(100);
  expect([model.get()?.item, model.get()?.item]).toEqual(["b", "a"]);
});

test("§20.3, §20.4: a lease that was done does not expire, and is refused from then on: done ends it", () => {
  const model = fresh();
  model.add("a");
  model.add("b");
  const a = model.get();
  if (a === undefined) throw new Error("nothing handed out");
  expect(model.done(a)).toEqual({ stale: false, value: undefined });
  model.advance(200);
  expect([model.size, model.inFlight]).toEqual([1, 0]); // "b" only: the done lease did not expire
  expect(model.done(a)).toEqual({ stale: true });
  expect(model.retry(a)).toEqual({ stale: true });
  expect(model.forget(a)).toEqual({ stale: true });
  expect(model.extend(a)).toEqual({ stale: true });
  expect([model.size, model.failures("a")]).toEqual([1, 0]);
});

test("§20.3: an infinite advance is refused before any lease expires", () => {
  const model = fresh();
  model.add("a");
  model.get();
  expect(() => model.advance(Number.POSITIVE_INFINITY)).toThrow(RangeError);
  expect([model.inFlight, model.size, model.now]).toEqual([1, 0, 0]);
});

test("§20.3: what falls due at an expiry's instant is queued before the expired item", () => {
  const model = fresh();
  model.add("a");
  model.get();
  model.addAfter("b", 100);
  expect(model.waiting).toBe(1);
  model.advance(100);
  expect([model.get()?.item, model.get()?.item, model.waiting]).toEqual(["b", "a", 0]);
});

test("§20.3: an expiry while shutting down still queues the item", () => {
  const model = fresh();
  model.add("a");
  model.get();
  model.shutDown();
  model.advance(100);
  expect([model.size, model.shuttingDown]).toEqual([1, true]);
});

test("§20.4: a superseded lease is stale; the latest one is accepted until its done", () => {
  const model = fresh(1);
  model.add("a");
  const first = model.get();
  if (first === undefined) throw new Error("nothing handed out");
  model.advance(100);
  const second = model.get();
  if (second === undefined) throw new Error("nothing handed out");
  expect(model.done(first)).toEqual({ stale: true });
  expect(model.forget(second)).toEqual({ stale: false, value: undefined });
  expect(model.retry(second)).toEqual({ stale: false, value: false }); // maxRetries 1: gives up
  expect(model.failures("a")).toBe(1);
  expect(model.done(second)).toEqual({ stale: false, value: undefined });
  expect(model.inFlight).toBe(0);
  expect(model.done(second)).toEqual({ stale: true });
  expect(model.forget(second)).toEqual({ stale: true });
  expect(model.failures("a")).toBe(1);
});

test("§20.4: token 0, a caller holding no lease, is accepted while no lease of the item is live, whatever was handed out before", () => {
  const model = fresh();
  const zero = { item: "a", token: 0, expiresAt: 0 };
  model.add("a");
  expect(model.retry(zero)).toEqual({ stale: false, value: true }); // queued: §7.3 keeps it queued once
  expect(model.failures("a")).toBe(1);
  const a = model.get();
  if (a === undefined) throw new Error("nothing handed out");
  expect(model.forget(zero)).toEqual({ stale: true }); // in flight under a live lease
  expect(model.done(zero)).toEqual({ stale: true });
  expect(model.done(a)).toEqual({ stale: false, value: undefined });
  expect(model.done(a)).toEqual({ stale: true });
  expect(model.forget(zero)).toEqual({ stale: false, value: undefined });
  expect(model.failures("a")).toBe(0);
  expect(model.done(zero)).toEqual({ stale: false, value: undefined }); // §6.3: not in flight, nothing changes
  expect(model.retry(zero)).toEqual({ stale: false, value: true }); // §7.3: an absent item is queued
  expect(model.extend(zero)).toEqual({ stale: true }); // nothing to extend
  expect([model.size, model.inFlight]).toEqual([1, 0]);
});

test("§20.4: token 0 is accepted for an item never handed out, and refused while its lease is live", () => {
  const model = fresh();
  const never = { item: "x", token: 0, expiresAt: 0 };
  expect(model.retry(never)).toEqual({ stale: false, value: true }); // §7.3: an absent item is queued
  expect(model.size).toBe(1);
  expect(model.get()?.token).toBe(1);
  expect(model.retry(never)).toEqual({ stale: true });
  expect(model.done({ item: "y", token: 7, expiresAt: 0 })).toEqual({ stale: true });
  const other = { item: "z", token: 0, expiresAt: 0 };
  expect(model.done(other)).toEqual({ stale: false, value: undefined });
  expect(model.extend(other)).toEqual({ stale: true }); // nothing to extend
  expect(model.forget(other)).toEqual({ stale: false, value: undefined });
  expect(model.failures("x")).toBe(1);
});

test("§20.5: extend of a live lease moves its expiry to leaseMs from now", () => {
  const model = fresh();
  model.add("a");
  const a = model.get();
  if (a === undefined) throw new Error("nothing handed out");
  model.advance(60);
  expect(model.extend(a)).toEqual({ stale: false, value: 160 });
  model.advance(99);
  expect(model.inFlight).toBe(1);
  model.advance(1);
  expect(model.inFlight).toBe(0);
});

test("§18.2 in the model of leases: with a backoff, retry requeues after the delay", () => {
  const model = new LeaseModel({ maxRetries: 5, leaseMs: 1000, backoff: { baseMs: 10, maxMs: 15 } });
  model.add("a");
  const a = model.get();
  if (a === undefined) throw new Error("nothing handed out");
  expect(model.retry(a).stale).toBe(false);
  expect(model.done(a).stale).toBe(false);
  expect([model.size, model.waiting]).toEqual([0, 1]);
  model.advance(10);
  expect([model.size, model.waiting]).toEqual([1, 0]);
});

test("leaseMs and advance's ms are checked, naming the value", () => {
  for (const leaseMs of [0, -1, Number.NaN, Number.POSITIVE_INFINITY]) {
    expect(() => new LeaseModel({ maxRetries: 1, leaseMs })).toThrow(
      new RangeError(
        `Expected \`leaseMs\` to be a positive finite number of milliseconds, got \`${leaseMs}\` (number)`,
      ),
    );
  }
  expect(() => new LeaseModel({ maxRetries: 1, leaseMs: 1e-9 })).not.toThrow();
  const model = fresh();
  for (const ms of [-1, Number.NaN, Number.POSITIVE_INFINITY]) {
    expect(() => model.advance(ms)).toThrow(
      new RangeError(`Expected \`ms\` to be a non-negative finite number, got \`${ms}\` (number)`),
    );
  }
  model.advance(0);
  expect(model.now).toBe(0);
});

test("WorkQueueModel.expire: an in-flight item goes to the tail, its wait ends; a dirty one is requeued once; others unchanged", () => {
  const model = new WorkQueueModel<string>({ maxRetries: 3 });
  for (const item of ["a", "b", "c"]) model.add(item);
  model.get(); // a
  model.get(); // b
  model.addAfter("a", 50);
  model.addAfter("e", 20);
  model.add("b"); // dirty
  model.expire("a");
  model.expire("b");
  model.expire("c"); // queued: nothing
  model.expire("d"); // absent: nothing
  expect(model.snapshot()).toMatchObject({ queue: ["c", "a", "b"], inFlight: [], dirty: [], waiting: [["e", 20]] });
  model.shutDown();
  model.get();
  model.expire("c");
  expect(model.snapshot().queue).toEqual(["a", "b", "c"]);
});

test("§14.2, §20.10: a take while shutting down waits while a lease is live, and answers undefined once none is", () => {
  const model = fresh();
  model.add("a");
  model.add("b");
  const a = model.take();
  if (a === undefined || a === "waits") throw new Error("nothing handed out");
  expect(a).toEqual({ item: "a", token: 1, expiresAt: 100 });
  expect(model.take()).toEqual({ item: "b", token: 2, expiresAt: 100 });
  expect(model.take()).toBe("waits"); // not shutting down: nothing queued
  model.shutDown();
  expect(model.take()).toBe("waits"); // two leases live: either may expire and queue its item again
  expect(model.done(a)).toEqual({ stale: false, value: undefined });
  expect(model.take()).toBe("waits"); // "b" is still live
  model.advance(100); // "b"'s holder died: its lease expires and "b" is queued again
  expect(model.take()).toEqual({ item: "b", token: 3, expiresAt: 200 });
  expect(model.take()).toBe("waits");
  model.advance(100);
  expect(model.take()).toEqual({ item: "b", token: 4, expiresAt: 300 });
  const last = { item: "b", token: 4, expiresAt: 300 };
  expect(model.done(last)).toEqual({ stale: false, value: undefined });
  expect(model.take()).toBeUndefined();
  expect([model.size, model.inFlight, model.waiting]).toEqual([0, 0, 0]);
});

test("§14.2, §17.7: a take waits on an empty queue that is not shutting down, and while shutting down for a waiting item", () => {
  const model = fresh();
  expect(model.take()).toBe("waits"); // nothing queued, waiting or in flight, but no shutdown: work may come
  model.addAfter("a", 10);
  model.shutDown();
  expect(model.take()).toBe("waits"); // nothing queued or in flight, but "a" falls due even after the shutdown
  model.advance(10);
  expect(model.take()).toEqual({ item: "a", token: 1, expiresAt: 110 });
});
