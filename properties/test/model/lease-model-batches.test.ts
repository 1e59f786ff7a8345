/**
 * `LeaseModel`'s batches (docs/spec.md §20.18: `lease_many` and `release_many`) and `WorkQueueModel.restore` on
 * their own, with exact answers: the lease suite compares PostgreSQL's batches with these, so they must be right
 * without it.
 */
import { expect, test } from "vitest";
import { LeaseModel, type ModelLease, WorkQueueModel } from "../../../model/index.js";

const fresh = () => new LeaseModel({ maxRetries: 3, leaseMs: 100 });

/** `model` with `items` added in that order. */
function withItems(...items: string[]): LeaseModel {
  const model = fresh();
  for (const item of items) model.add(item);
  return model;
}

test("§20.18: getMany hands out up to count leases in the queue's order, each under its own token, passing by items in flight", () => {
  const model = withItems("a", "b", "c", "d");
  expect(model.get()).toEqual({ item: "a", token: 1, expiresAt: 100 });
  model.add("a"); // in flight: marked dirty, not queued
  model.advance(10);
  expect(model.getMany(2)).toEqual([
    { item: "b", token: 2, expiresAt: 110 },
    { item: "c", token: 3, expiresAt: 110 },
  ]);
  expect([model.size, model.inFlight]).toEqual([1, 3]);
  expect(model.getMany(5)).toEqual([{ item: "d", token: 4, expiresAt: 110 }]); // fewer when fewer are queued
  expect(model.getMany(1)).toEqual([]);
});

test("§20.18: getMany of 0 or less hands out nothing and changes nothing", () => {
  const model = withItems("a", "b");
  expect(model.getMany(0)).toEqual([]);
  expect(model.getMany(-1)).toEqual([]);
  expect([model.size, model.inFlight]).toEqual([2, 0]);
  expect(model.get()).toEqual({ item: "a", token: 1, expiresAt: 100 }); // no token was drawn
});

test("§20.18: a give-back queues each live lease's item at its place: behind the items queued before it was leased, before those queued after", () => {
  const model = withItems("a", "b", "c");
  const [a, b] = model.getMany(2) as [ModelLease, ModelLease];
  model.add("d");
  expect(model.giveBack([b])).toBe(1);
  expect(model.queue.snapshot().queue).toEqual(["b", "c", "d"]);
  expect(model.giveBack([a])).toBe(1);
  expect(model.queue.snapshot().queue).toEqual(["a", "b", "c", "d"]);
  expect([model.size, model.inFlight]).toEqual([4, 0]);
});

test("§20.18: a batch given back in any order goes back in the queue's order, and an item given back keeps its place through another hand-out", () => {
  const model = withItems("a", "b", "c");
  const batch = model.getMany(3);
  model.add("e");
  expect(model.giveBack([...batch].reverse())).toBe(3);
  expect(model.queue.snapshot().queue).toEqual(["a", "b", "c", "e"]);
  const again = model.getMany(2) as [ModelLease, ModelLease]; // a and b, leased from the places they got back
  expect(again.map((lease) => lease.item)).toEqual(["a", "b"]);
  model.add("f");
  expect(model.giveBack([again[1]])).toBe(1);
  expect(model.queue.snapshot().queue).toEqual(["b", "c", "e", "f"]);
});

test("§20.18: an item queued again after its lease ended gets a new place at the tail, which a later give-back keeps", () => {
  const model = withItems("a", "b");
  const a = model.get() as ModelLease;
  model.done(a);
  model.add("a"); // behind b now
  model.add("c");
  const batch = model.getMany(3);
  expect(batch.map((lease) => lease.item)).toEqual(["b", "a", "c"]);
  expect(model.giveBack([batch[1] as ModelLease, batch[2] as ModelLease])).toBe(2);
  expect(model.queue.snapshot().queue).toEqual(["a", "c"]);
  expect(model.giveBack([batch[0] as ModelLease])).toBe(1);
  expect(model.queue.snapshot().queue).toEqual(["b", "a", "c"]);
});

test("§20.18: a give-back of a lease that is not live changes nothing: done, expired, superseded, given back, never handed out, token 0", () => {
  const model = withItems("a");
  const [done] = model.getMany(1) as [ModelLease];
  model.done(done);
  expect(model.giveBack([done])).toBe(0);
  expect(model.queue.stateOf("a")).toBe("absent");
  model.add("a");
  const [expired] = model.getMany(1) as [ModelLease];
  model.add("b");
  model.advance(100); // expires: "a" goes to the tail, behind "b"
  expect(model.giveBack([expired])).toBe(0);
  expect(model.queue.snapshot().queue).toEqual(["b", "a"]);
  const b = model.get() as ModelLease;
  const latest = model.get() as ModelLease; // "a" again: supersedes `expired`
  expect(model.giveBack([expired, { item: "a", token: 0, expiresAt: 0 }, { item: "z", token: 1, expiresAt: 0 }])).toBe(
    0,
  );
  expect([model.size, model.inFlight]).toEqual([0, 2]);
  expect(model.giveBack([latest, latest])).toBe(1); // the second is given back already
  expect(model.giveBack([latest])).toBe(0);
  expect(model.done(latest)).toEqual({ stale: true });
  expect(model.extend(latest)).toEqual({ stale: true });
  expect(model.done(b)).toEqual({ stale: false, value: undefined });
  model.advance(500); // a given-back lease does not expire: "a" stays queued once
  expect([model.size, model.inFlight, model.queue.snapshot().queue]).toEqual([1, 0, ["a"]]);
});

test("§20.18: a give-back serves the dirty mark and the wait, keeps the failure count, and queues the item while shutting down too", () => {
  const model = withItems("a", "b");
  const [a, b] = model.getMany(2) as [ModelLease, ModelLease];
  expect(model.retry(a)).toEqual({ stale: false, value: true }); // in flight: marked dirty
  model.addAfter("b", 50);
  model.shutDown();
  expect(model.giveBack([a, b])).toBe(2);
  expect(model.queue.snapshot()).toMatchObject({ queue: ["a", "b"], inFlight: [], dirty: [], waiting: [] });
  expect(model.failures("a")).toBe(1);
  const again = model.get() as ModelLease;
  expect(model.done(again)).toEqual({ stale: false, value: undefined });
  expect(model.queue.stateOf("a")).toBe("absent"); // the dirty mark was served by the give-back, not kept
});

test("WorkQueueModel.restore: an in-flight item goes to the index, its dirty mark and wait served; past the tail is the tail; others unchanged", () => {
  const model = new WorkQueueModel<string>({ maxRetries: 3 });
  for (const item of ["a", "b", "c", "d"]) model.add(item);
  model.get();
  model.get();
  model.get();
  model.add("b"); // dirty
  model.add("c"); // dirty, and stays so
  model.addAfter("a", 10);
  model.addAfter("e", 10); // waits, and stays so
  model.restore("a", 1);
  model.restore("b", 9);
  model.restore("d", 0); // queued: unchanged
  model.restore("z", 0); // absent: unchanged
  expect(model.snapshot()).toMatchObject({
    queue: ["d", "a", "b"],
    inFlight: ["c"],
    dirty: ["c"],
    waiting: [["e", 10]],
  });
  model.advance(10);
  expect(model.snapshot().queue).toEqual(["d", "a", "b", "e"]); // a's wait was served, not kept
});
