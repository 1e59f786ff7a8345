/**
 * Prefetched leases (docs/spec.md §20.18) on the machine's real PostgreSQL, in a schema of this suite's own: what
 * another instance sees of a buffer (its leases are in flight), where the leases go when they go back (to their
 * place in the queue), when they go back (a call naming the item, a drain, `close`, half of the lease gone), and
 * the option's errors. The conformance suite with a buffer is prefetch-conformance.test.ts; a process killed with
 * a full buffer, lease-workers-killed.test.ts; the multi-process history, multi-process-history.test.ts.
 */
import { afterAll, expect, test } from "vitest";
import { type MetricsSink, type SharedQueueGauges, VirtualClock } from "../../../src/index.js";
import { DatabaseUnavailableError, type Lease, PostgresWorkQueue } from "../../../src/postgres/index.js";
import { counting, freshName, freshSchema } from "./database.js";

const { pool, schema } = freshSchema("prefetch");
const opened: PostgresWorkQueue[] = [];
afterAll(() => Promise.all(opened.map((queue) => queue.close())));

/** An instance of the queue `name`, closed after the suite. */
function open(
  name: string,
  options: { prefetch?: number; clock?: VirtualClock; leaseMs?: number; metrics?: MetricsSink } = {},
) {
  const queue = new PostgresWorkQueue({ pool, schema, name, maxRetries: 3, ...options });
  opened.push(queue);
  return queue;
}

/** Gets until nothing is queued, ending each lease with `done`; the items in the order they came. */
async function drainItems(queue: PostgresWorkQueue): Promise<string[]> {
  const items: string[] = [];
  for (let lease = await queue.get(); lease !== undefined; lease = await queue.get()) {
    items.push(lease.item);
    await queue.done(lease);
  }
  return items;
}

test("another instance never gets a buffered item while its lease lives, and once the buffer's instance closes, gets each back in its place, an add made meanwhile served by it", async () => {
  const name = freshName();
  const buffering = open(name, { prefetch: 4 });
  const other = open(name);
  for (const item of ["k1", "k2", "k3", "k4", "k5", "k6"]) await other.add(item);
  expect(await buffering.get()).toMatchObject({ item: "k1" }); // k2–k5 buffered, in one statement with k1
  expect(await other.get()).toMatchObject({ item: "k6" });
  expect(await other.get()).toBeUndefined();
  expect([await other.size(), await other.inFlight()]).toEqual([0, 6]); // the buffered leases are in flight for it
  expect([await buffering.size(), await buffering.inFlight()]).toEqual([4, 2]); // and queued items for their instance
  await other.add("k3"); // in flight for it: marked dirty
  await other.add("k7");
  await buffering.close();
  expect(await drainItems(other)).toEqual(["k2", "k3", "k4", "k5", "k7"]);
});

test("with prefetch 4, ten gets made one after another send two statements, each leasing the head for its get and the four after it; a get of the empty queue one more", async () => {
  const { pool: counted, sent } = counting(pool);
  const name = freshName();
  const queue = new PostgresWorkQueue({ pool: counted, schema, name, maxRetries: 3, prefetch: 4 });
  opened.push(queue);
  const items = Array.from({ length: 10 }, (_, i) => `i${i}`);
  await Promise.all(items.map((item) => queue.add(item)));
  sent.length = 0;
  const got: string[] = [];
  for (const _ of items) got.push(((await queue.get()) as Lease).item);
  expect(got).toEqual(items);
  expect(sent).toEqual(["lease_many", "lease_many"]);
  expect(await queue.get()).toBeUndefined();
  expect(sent).toEqual(["lease_many", "lease_many", "lease_many"]);
});

test("an instance's own calls see no buffer: an add of a buffered item changes nothing, and a retry with token 0 gives the lease back first and is accepted", async () => {
  const name = freshName();
  const queue = open(name, { prefetch: 4 });
  for (const item of ["a", "b", "c"]) await queue.add(item);
  const a = (await queue.get()) as Lease;
  expect(a.item).toBe("a");
  await queue.add("c"); // queued for this instance: nothing changes
  expect(await queue.retry({ item: "b", token: 0, expiresAt: 0 })).toBe(true);
  expect(await queue.failures("b")).toBe(1);
  await queue.done(a);
  expect(await drainItems(queue)).toEqual(["b", "c"]); // b went back to its place, and c was queued once
});

test("a drain gives the buffered leases back, so that another instance's workers finish them", async () => {
  const name = freshName();
  const buffering = open(name, { prefetch: 4 });
  const other = open(name);
  for (const item of ["a", "b", "c"]) await buffering.add(item);
  const a = (await buffering.get()) as Lease;
  const drained = buffering.shutDownWithDrain();
  const items: string[] = [];
  for (let lease = await other.take(); lease !== undefined; lease = await other.take()) {
    items.push(lease.item);
    await other.done(lease);
    if (items.length === 2) await buffering.done(a);
  }
  await drained;
  expect(items).toEqual(["b", "c"]);
});

test("a buffered lease is handed on only while half of leaseMs is left: one older goes back and is leased anew", async () => {
  const clock = new VirtualClock();
  const name = freshName();
  const queue = open(name, { prefetch: 2, clock, leaseMs: 100 });
  const other = open(name, { clock, leaseMs: 100 });
  for (const item of ["a", "b", "c"]) await queue.add(item);
  expect(await queue.get()).toMatchObject({ item: "a", expiresAt: 100 });
  clock.advance(50);
  expect(await queue.get()).toMatchObject({ item: "b", expiresAt: 100 }); // 50 left: fresh
  clock.advance(1);
  expect(await queue.get()).toMatchObject({ item: "c", expiresAt: 151 }); // 49 left: given back, leased again
  expect(await other.get()).toBeUndefined(); // nothing was lost or queued twice
});

test("metrics: the depth counts the buffered items as queued, and each lease's queue duration is observed when it is handed on", async () => {
  const clock = new VirtualClock(1_000);
  const observed: number[] = [];
  let read: (() => Promise<SharedQueueGauges>) | undefined;
  const sink: MetricsSink = {
    add: () => {},
    retry: () => {},
    observeQueueDuration: (ms) => observed.push(ms),
    observeWorkDuration: () => {},
    connectShared(given) {
      read = given;
    },
  };
  const queue = open(freshName(), { prefetch: 4, clock, leaseMs: 1_000, metrics: sink });
  for (const item of ["a", "b", "c"]) await queue.add(item);
  clock.advance(10);
  await queue.get();
  clock.advance(20);
  await queue.get();
  expect(observed).toEqual([10, 30]);
  expect((await (read as () => Promise<SharedQueueGauges>)()).depth).toBe(1); // c, buffered
});

/**
 * `pool`, except that the next `lease_many` after `fail()` (at first, the next) fails as a lost connection does,
 * 20 ms later, while calls made meanwhile wait for it.
 */
function failingOnce() {
  let failing = true;
  const fail = () => {
    failing = true;
  };
  const proxy = new Proxy(pool, {
    get(target, key) {
      if (key === "query") {
        return (text: string, values?: unknown[]) => {
          if (failing && text.includes("lease_many")) {
            failing = false;
            const lost = new Error("Connection terminated unexpectedly");
            return new Promise((_, reject) => setTimeout(() => reject(lost), 20));
          }
          return target.query(text, values);
        };
      }
      const value = Reflect.get(target, key, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return { pool: proxy, fail };
}

test("a fill that cannot reach the database rejects the calls waiting for it with an error naming their verb, and the next fill serves them in order", async () => {
  const queue = new PostgresWorkQueue({
    pool: failingOnce().pool,
    schema,
    name: freshName(),
    maxRetries: 3,
    prefetch: 2,
  });
  opened.push(queue);
  for (const item of ["a", "b", "c"]) await queue.add(item);
  const error = await queue.get().catch((e: unknown) => e);
  expect(error).toBeInstanceOf(DatabaseUnavailableError);
  expect((error as Error).message).toMatch(/^get\b/);
  expect(await Promise.all([queue.get(), queue.get(), queue.get()])).toMatchObject([
    { item: "a" },
    { item: "b" },
    { item: "c" },
  ]);
});

test("a failed fill rejects only the waiting calls of the verb it was sent for: a take waiting beside a get is served by the next fill", async () => {
  const flaky = failingOnce();
  const queue = new PostgresWorkQueue({ pool: flaky.pool, schema, name: freshName(), maxRetries: 3, prefetch: 2 });
  opened.push(queue);
  await queue.get().catch(() => undefined); // the first failure
  await queue.add("z");
  await queue.done((await queue.take()) as Lease); // the take's listening connection is made
  await queue.add("a");
  flaky.fail();
  const [got, taken] = await Promise.allSettled([queue.get(), queue.take()]);
  expect(got).toMatchObject({ status: "rejected", reason: { name: "DatabaseUnavailableError" } });
  expect(taken).toMatchObject({ status: "fulfilled", value: { item: "a" } });
});

test("without a clock, a lease is fresh for half of leaseMs from when its fill was sent: then the buffer gives it back by itself, to its place, and its queue duration was observed on the process's time", async () => {
  const observed: number[] = [];
  const sink: MetricsSink = {
    add: () => {},
    retry: () => {},
    observeQueueDuration: (ms) => observed.push(ms),
    observeWorkDuration: () => {},
  };
  const name = freshName();
  const leaseMs = 4_000; // the give-back, due at 2 s, must land before the expiry at 4 s on a loaded machine
  const buffering = open(name, { prefetch: 2, leaseMs, metrics: sink });
  const other = open(name, { leaseMs });
  for (const item of ["a", "b", "c", "d"]) await other.add(item);
  const a = (await buffering.get()) as Lease; // b and c buffered
  expect(observed).toHaveLength(1);
  expect(observed[0]).toBeGreaterThanOrEqual(0);
  expect(observed[0]).toBeLessThan(leaseMs);
  expect(await other.size()).toBe(1); // d
  while ((await other.size()) === 1) await new Promise((resolve) => setTimeout(resolve, 50));
  expect(await other.inFlight()).toBe(1); // a: b and c went back, not expired
  expect((await other.get())?.item).toBe("b"); // in its place, before d
  await buffering.done(a);
});

test("a prefetch that is not a non-negative integer throws a RangeError naming it", () => {
  for (const [prefetch, shown] of [
    [-1, "`-1` (number)"],
    [1.5, "`1.5` (number)"],
    [Number.NaN, "`NaN` (number)"],
    [Number.POSITIVE_INFINITY, "`Infinity` (number)"],
    ["3", '`"3"` (string)'],
  ] as const) {
    expect(
      () => new PostgresWorkQueue({ pool, schema, name: "q", maxRetries: 3, prefetch: prefetch as number }),
    ).toThrow(new RangeError(`Expected \`prefetch\` to be a non-negative integer, got ${shown}`));
  }
  expect(() => new PostgresWorkQueue({ pool, schema, name: "q", maxRetries: 3, prefetch: 0 })).not.toThrow();
});
