/**
 * Calls of `PostgresWorkQueue` that go out together (docs/spec.md §20.1): the `add`s, `get`s, `done`s, `retry`s and
 * `forget`s that arrive while one statement of their kind is in flight are sent as one statement, each answering
 * its own result, and resolving only once that statement committed.
 */
import { expect, test } from "vitest";
import { type Lease, PostgresWorkQueue, StaleLeaseError } from "../../../src/postgres/index.js";
import { counting, freshName, freshSchema, unreachable } from "./database.js";

const { pool, schema } = freshSchema("batching");

test("dones made at once go out in two statements, the first alone and the rest together, each answering its own result", async () => {
  const { pool: counted, sent } = counting(pool);
  const queue = new PostgresWorkQueue({ pool: counted, schema, name: freshName(), maxRetries: 1 });
  const items = ["a", "b", "c", "d", "e"];
  for (const item of items) await queue.add(item);
  const leases = [];
  for (const _ of items) leases.push(await queue.get());
  const held = leases.map((lease) => lease as NonNullable<typeof lease>);
  sent.length = 0;
  const [first, ...rest] = held as [NonNullable<(typeof leases)[0]>, ...NonNullable<(typeof leases)[0]>[]];
  // The second done of c in the same statement is refused: the first ended the lease (§20.4).
  const outcomes = await Promise.allSettled([
    queue.done(first),
    ...rest.map((lease) => queue.done(lease)),
    queue.done(held[2] as typeof first),
  ]);
  expect(sent).toEqual(["done", "done_many"]);
  expect(outcomes.map((outcome) => outcome.status)).toEqual([
    "fulfilled",
    "fulfilled",
    "fulfilled",
    "fulfilled",
    "fulfilled",
    "rejected",
  ]);
  const refused = outcomes[5] as PromiseRejectedResult;
  expect(refused.reason).toBeInstanceOf(StaleLeaseError);
  expect((refused.reason as Error).message).toContain(`token ${held[2]?.token}`);
  expect(await queue.inFlight()).toBe(0); // every done committed before it resolved
  expect(await queue.size()).toBe(0);
});

test("retries made at once go out in two statements, applied in the order made, each answering its own result", async () => {
  const { pool: counted, sent } = counting(pool);
  const queue = new PostgresWorkQueue({ pool: counted, schema, name: freshName(), maxRetries: 2 });
  for (const item of ["a", "b", "c"]) await queue.add(item);
  const [a, b, c] = [await queue.get(), await queue.get(), await queue.get()] as [Lease, Lease, Lease];
  sent.length = 0;
  const outcomes = await Promise.allSettled([
    queue.retry(a),
    queue.retry(b),
    queue.retry(c),
    queue.retry(b), // b's second failure reaches maxRetries: it gives up
    queue.retry({ ...c, token: c.token + 1000 }), // no such lease: refused, nothing counted
  ]);
  expect(sent).toEqual(["retry", "retry_many"]);
  expect(outcomes.slice(0, 4)).toEqual([true, true, true, false].map((value) => ({ status: "fulfilled", value })));
  const refused = outcomes[4] as PromiseRejectedResult;
  expect(refused.reason).toBeInstanceOf(StaleLeaseError);
  expect((refused.reason as Error).message).toContain(`token ${c.token + 1000}`);
  expect([await queue.failures("a"), await queue.failures("b"), await queue.failures("c")]).toEqual([1, 2, 1]);
});

test("forgets made at once go out in two statements, each answering its own result", async () => {
  const { pool: counted, sent } = counting(pool);
  const queue = new PostgresWorkQueue({ pool: counted, schema, name: freshName(), maxRetries: 5 });
  for (const item of ["a", "b", "c"]) await queue.add(item);
  const held = [await queue.get(), await queue.get(), await queue.get()] as [Lease, Lease, Lease];
  for (const lease of held) await queue.retry(lease);
  sent.length = 0;
  const outcomes = await Promise.allSettled([
    ...held.map((lease) => queue.forget(lease)),
    queue.forget({ ...held[0], token: held[0].token + 1000 }),
  ]);
  expect(sent).toEqual(["forget", "forget_many"]);
  expect(outcomes.map((outcome) => outcome.status)).toEqual(["fulfilled", "fulfilled", "fulfilled", "rejected"]);
  expect((outcomes[3] as PromiseRejectedResult).reason).toBeInstanceOf(StaleLeaseError);
  expect([await queue.failures("a"), await queue.failures("b"), await queue.failures("c")]).toEqual([0, 0, 0]);
});

test("adds made at once go out in two statements, an item added twice among them queued once, in the order they were made", async () => {
  const { pool: counted, sent } = counting(pool);
  const queue = new PostgresWorkQueue({ pool: counted, schema, name: freshName(), maxRetries: 1 });
  await Promise.all(["a", "b", "c", "b", "d"].map((item) => queue.add(item)));
  expect(sent).toEqual(["add", "add_many"]);
  expect(await queue.size()).toBe(4);
  const order = [];
  for (let lease = await queue.get(); lease !== undefined; lease = await queue.get()) order.push(lease.item);
  expect(order).toEqual(["a", "b", "c", "d"]);
});

test("gets made at once go out in two statements, handing out the queue's heads in the order the gets were made, and undefined past them", async () => {
  const { pool: counted, sent } = counting(pool);
  const queue = new PostgresWorkQueue({ pool: counted, schema, name: freshName(), maxRetries: 1 });
  for (const item of ["a", "b", "c", "d"]) await queue.add(item);
  sent.length = 0;
  const leases = await Promise.all(Array.from({ length: 6 }, () => queue.get()));
  expect(sent).toEqual(["get", "get_many"]);
  expect(leases.map((lease) => lease?.item)).toEqual(["a", "b", "c", "d", undefined, undefined]);
  const tokens = leases.flatMap((lease) => (lease === undefined ? [] : [lease.token]));
  expect(new Set(tokens).size).toBe(4); // a lease of its own each
  expect([await queue.size(), await queue.inFlight()]).toEqual([0, 4]);
  for (const lease of leases) if (lease !== undefined) await queue.done(lease);
  expect([await queue.size(), await queue.inFlight()]).toEqual([0, 0]);
});

test("takes made at once look together: one get_many hands each waiting take a lease of its own", async () => {
  const { pool: counted, sent } = counting(pool);
  const queue = new PostgresWorkQueue({ pool: counted, schema, name: freshName(), maxRetries: 1 });
  for (const item of ["a", "b", "c"]) await queue.add(item);
  sent.length = 0;
  const leases = await Promise.all([queue.take(), queue.take(), queue.take()]);
  expect(sent.slice(0, 2)).toEqual(["get", "get_many"]);
  expect(leases.map((lease) => lease?.item)).toEqual(["a", "b", "c"]);
  for (const lease of leases) if (lease !== undefined) await queue.done(lease);
  await queue.close();
});

test("a statement that fails rejects every call it carried, naming its verb, and the calls after it go out again", async () => {
  const name = freshName();
  const queue = new PostgresWorkQueue({ pool, schema, name, maxRetries: 1 });
  await Promise.all(["x", "y", "z"].map((item) => queue.add(item)));
  const held = [await queue.get(), await queue.get(), await queue.get()] as Lease[];
  let fail = true;
  const broken = new PostgresWorkQueue({ pool: unreachable(pool, () => fail), schema, name, maxRetries: 1 });
  const reasons = async (calls: Promise<void>[]) =>
    (await Promise.allSettled(calls)).map((outcome) => (outcome as PromiseRejectedResult).reason?.message);
  // The first call of each kind goes out alone; the other two, together: every one names its own verb.
  expect(await reasons(["a", "b", "c"].map((item) => broken.add(item)))).toEqual(
    Array(3).fill("add could not reach PostgreSQL: read ECONNRESET"),
  );
  expect(await reasons(held.map((lease) => broken.done(lease)))).toEqual(
    Array(3).fill("done could not reach PostgreSQL: read ECONNRESET"),
  );
  expect(await reasons([broken.get(), broken.get(), broken.get()] as Promise<never>[])).toEqual(
    Array(3).fill("get could not reach PostgreSQL: read ECONNRESET"),
  );
  expect(await reasons([broken.take(), broken.take()] as Promise<never>[])).toEqual(
    Array(2).fill("take could not reach PostgreSQL: read ECONNRESET"),
  );
  fail = false;
  await Promise.all(["d", "e"].map((item) => broken.add(item)));
  await Promise.all(held.map((lease) => broken.done(lease)));
  expect([await queue.size(), await queue.inFlight()]).toEqual([2, 0]);
  await broken.close(); // its takes' listening connection goes back to the pool
});

test("a forget, alone or among others, of a live lease whose item has no failure counted writes no row version; one of an item with failures clears them", async () => {
  const name = freshName();
  const queue = new PostgresWorkQueue({ pool, schema, name, maxRetries: 5 });
  for (const item of ["a", "b", "c", "d"]) await queue.add(item);
  const [a, b, c, d] = [await queue.get(), await queue.get(), await queue.get(), await queue.get()] as Lease[];
  await queue.retry(d as Lease); // d has a failure counted
  const versions = async () =>
    (
      await pool.query(`select item, xmin::text as version from "${schema}".items where queue = $1 order by item`, [
        name,
      ])
    ).rows;
  const before = await versions();
  await queue.forget(a as Lease); // alone: forget
  await Promise.all([b, c, d].map((lease) => queue.forget(lease as Lease))); // b alone, then c and d in forget_many
  const after = await versions();
  expect(after.slice(0, 3)).toEqual(before.slice(0, 3));
  expect(after[3]?.version).not.toBe(before[3]?.version);
  expect(await queue.failures("d")).toBe(0);
});
