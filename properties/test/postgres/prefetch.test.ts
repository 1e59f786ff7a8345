/**
 * Prefetched leases (docs/spec.md §20.18) on the machine's real PostgreSQL, in a schema of this suite's own: what
 * another instance sees of a buffer (its leases are in flight), where the leases go when they go back (to their
 * place in the queue), when they go back (a call naming the item, a drain, `close`, half of the lease gone), and
 * the option's errors. The conformance suite with a buffer is prefetch-conformance.test.ts; a process killed with
 * a full buffer, lease-workers-killed.test.ts; the multi-process history, multi-process-history.test.ts.
 */
import pg from "pg";
import { afterAll, expect, onTestFinished, test, vi } from "vitest";
import { type MetricsSink, type SharedQueueGauges, VirtualClock } from "../../../src/index.js";
import {
  DatabaseUnavailableError,
  type Lease,
  type PoolLike,
  PostgresWorkQueue,
  StaleLeaseError,
} from "../../../src/postgres/index.js";
import { counting, databaseUrl, freshName, freshSchema, lostConnection } from "./database.js";

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

/**
 * `pool`, whose `lease_many`s are recorded by the count they ask for (`asked`); the next one after `hold()` waits
 * until the held statement's `answer()` sends it, or its `fail()` rejects it as a lost connection does.
 */
function holding() {
  const asked: number[] = [];
  let gate: Promise<void> | undefined;
  const hold = () => {
    const held = { answer: () => {}, fail: () => {} };
    gate = new Promise<void>((resolve, reject) => {
      held.answer = resolve;
      held.fail = () => reject(lostConnection);
    });
    return held;
  };
  const proxy = new Proxy(pool, {
    get(target, key) {
      if (key === "query") {
        return async (text: string, values?: unknown[]) => {
          if (text.includes(".lease_many(")) {
            asked.push(Number(values?.[3]));
            const held = gate;
            gate = undefined;
            if (held !== undefined) await held;
          }
          return target.query(text, values);
        };
      }
      const value = Reflect.get(target, key, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return { pool: proxy, asked, hold };
}

/** A queue of `items` on `pool`, with prefetch 4 and leaseMs 1000, and another instance of it without a buffer. */
async function refilling(pool: pg.Pool, items: readonly string[], options: { clock?: VirtualClock } = {}) {
  const name = freshName();
  const queue = new PostgresWorkQueue({ pool, schema, name, maxRetries: 3, prefetch: 4, leaseMs: 1_000, ...options });
  opened.push(queue);
  const other = open(name, { leaseMs: 1_000, ...options });
  for (const item of items) await other.add(item);
  return { queue, other };
}

/** Whether `promise` is settled once the calls that can run now ran. */
async function settled(promise: Promise<unknown>): Promise<boolean> {
  let done = false;
  void promise.then(
    () => (done = true),
    () => (done = true),
  );
  await new Promise((resolve) => setImmediate(resolve));
  return done;
}

const tenItems = Array.from({ length: 10 }, (_, i) => `i${i}`);

/**
 * Hands on i0, i1 and i2 from `queue` (of {@link refilling}'s ten items): the third hand-on leaves two buffered and
 * sends a refill asking for two, which `hold` holds. Answers the leases handed on and the held refill, once sent.
 */
async function refillHeld(queue: PostgresWorkQueue, { asked, hold }: ReturnType<typeof holding>) {
  const leases: [Lease, Lease] = [(await queue.get()) as Lease, (await queue.get()) as Lease];
  expect(leases.map((lease) => lease?.item)).toEqual(["i0", "i1"]); // ? so that a missing lease fails here
  const refill = hold();
  expect((await queue.get())?.item).toBe("i2");
  await vi.waitFor(() => expect(asked).toEqual([5, 2]));
  return { leases, refill };
}

test("with prefetch 4, a get that finds the buffer empty leases its head and four more in one statement; the hand-on that leaves two starts a refill asking for two, after the buffered leases, while the next gets are served from the buffer at once", async () => {
  const { pool: held, asked, hold } = holding();
  const { queue } = await refilling(held, tenItems);
  expect((await queue.get())?.item).toBe("i0");
  expect(asked).toEqual([5]);
  expect((await queue.get())?.item).toBe("i1"); // three left: no refill
  await new Promise((resolve) => setImmediate(resolve));
  expect(asked).toEqual([5]);
  const refill = hold();
  expect((await queue.get())?.item).toBe("i2"); // two left: half of 4
  await vi.waitFor(() => expect(asked).toEqual([5, 2]));
  expect((await queue.get())?.item).toBe("i3"); // served while the refill is unanswered
  expect((await queue.get())?.item).toBe("i4");
  const fifth = queue.get(); // the buffer is empty: it waits for the refill
  expect(await settled(fifth)).toBe(false);
  refill.answer();
  expect((await fifth)?.item).toBe("i5");
  const got: string[] = [];
  for (let lease = await queue.get(); lease !== undefined; lease = await queue.get()) got.push(lease.item);
  expect(got).toEqual(["i6", "i7", "i8", "i9"]);
});

test("a refill that brings fewer than it asked for starts no other: a get of the empty queue sends one statement", async () => {
  const { pool: held, asked } = holding();
  const { queue } = await refilling(held, tenItems.slice(0, 6));
  for (const item of ["i0", "i1", "i2"]) expect((await queue.get())?.item).toBe(item);
  await vi.waitFor(() => expect(asked).toEqual([5, 2]));
  await queue.size(); // a statement of the object: after the refill
  for (const item of ["i3", "i4", "i5"]) expect((await queue.get())?.item).toBe(item);
  expect(await queue.get()).toBeUndefined();
  expect(asked).toEqual([5, 2, 5]);
});

test("a refill that fails rejects nobody: a get that came meanwhile, to the empty buffer, is served by a statement of its own", async () => {
  const holder = holding();
  const { pool: held, asked } = holder;
  const { queue } = await refilling(held, tenItems);
  const { refill } = await refillHeld(queue, holder);
  for (const item of ["i3", "i4"]) expect((await queue.get())?.item).toBe(item);
  const waiting = queue.get();
  refill.fail();
  expect((await waiting)?.item).toBe("i5");
  expect(asked).toEqual([5, 2, 5]);
});

test("after a refill that failed, hand-ons start no refill: the next fill is that of a call that finds the buffer empty", async () => {
  const holder = holding();
  const { pool: held, asked } = holder;
  const { queue } = await refilling(held, tenItems);
  const { refill } = await refillHeld(queue, holder);
  refill.fail();
  await queue.size(); // a statement of the object: after the refill
  for (const item of ["i3", "i4"]) expect((await queue.get())?.item).toBe(item);
  await queue.size();
  expect(asked).toEqual([5, 2]);
  expect((await queue.get())?.item).toBe("i5");
  expect(asked).toEqual([5, 2, 5]);
});

test("a buffered head that goes stale while a refill runs is not handed on: it goes back with every lease after it, the refill's too, and the get waiting for it is served a new lease of it", async () => {
  const clock = new VirtualClock();
  const holder = holding();
  const { pool: held, asked } = holder;
  const { queue } = await refilling(held, tenItems, { clock });
  const { refill } = await refillHeld(queue, holder);
  clock.advance(501); // i3's lease has less than half of leaseMs left
  const waiting = queue.get();
  refill.answer();
  expect(await waiting).toMatchObject({ item: "i3", expiresAt: clock.now() + 1_000 });
  expect(asked).toEqual([5, 2, 5]);
});

test("a give-back of every lease while a refill runs gives back the refill's leases too: close during a refill leaves every item not handed on queued, in its place", async () => {
  const holder = holding();
  const { queue, other } = await refilling(holder.pool, tenItems);
  const { refill } = await refillHeld(queue, holder);
  const closing = queue.close();
  expect(await settled(closing)).toBe(false); // after the refill
  refill.answer();
  await closing;
  expect(await other.inFlight()).toBe(3);
  expect(await drainItems(other)).toEqual(tenItems.slice(3));
});

test("a forget, retry or done of a lease the object handed on runs beside a refill in progress: each is answered while the refill is unanswered", async () => {
  const holder = holding();
  const { queue, other } = await refilling(holder.pool, tenItems);
  const {
    leases: [first, second],
    refill,
  } = await refillHeld(queue, holder);
  let answered = false;
  const calls = (async () => {
    await queue.forget(first);
    await queue.done(first);
    expect(await queue.retry(second)).toBe(true);
    await queue.done(second);
    answered = true;
  })();
  try {
    await vi.waitFor(() => expect(answered).toBe(true));
  } finally {
    refill.answer(); // also when the calls wait for it, so that the suite's close ends
  }
  await calls;
  expect(await other.failures("i1")).toBe(1);
  expect(await queue.inFlight()).toBe(1); // i2's lease; i0 is done, and i1 queued again
});

test("dones sent together with a token 0 among them take their turn: the buffered lease of its item goes back first, and that done is accepted", async () => {
  const queue = open(freshName(), { prefetch: 4 });
  for (const item of ["a", "b", "c", "d"]) await queue.add(item);
  const [a, b] = [(await queue.get()) as Lease, (await queue.get()) as Lease]; // c and d buffered
  // a's done goes out alone; b's and d's, made meanwhile, together
  await Promise.all([queue.done(a), queue.done(b), queue.done({ item: "d", token: 0, expiresAt: 0 })]);
  expect(await drainItems(queue)).toEqual(["c", "d"]);
});

test("finishes sent together with a token 0 among them take their turn: the buffered lease of its item goes back first, and that finish is accepted, leaving it queued", async () => {
  const queue = open(freshName(), { prefetch: 4 });
  for (const item of ["a", "b", "c", "d"]) await queue.add(item);
  const [a, b] = [(await queue.get()) as Lease, (await queue.get()) as Lease]; // c and d buffered
  // a's finish goes out alone; b's and d's, made meanwhile, together
  await Promise.all([queue.finish(a), queue.finish(b), queue.finish({ item: "d", token: 0, expiresAt: 0 })]);
  expect(await queue.inFlight()).toBe(0);
  expect(await drainItems(queue)).toEqual(["c", "d"]);
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

test("an add or an addAfter of a buffered item sends no statement: it is queued for its instance, and stays queued once", async () => {
  const clock = new VirtualClock();
  const spy = counting(pool);
  const queue = new PostgresWorkQueue({ pool: spy.pool, schema, name: freshName(), maxRetries: 3, prefetch: 4, clock });
  opened.push(queue);
  for (const item of ["a", "b", "c"]) await queue.add(item);
  const a = (await queue.get()) as Lease; // b and c buffered; the fill brought fewer than it asked for: no refill
  const sent = spy.sent.length;
  await queue.add("b");
  await queue.addAfter("c", 10);
  expect(spy.sent.slice(sent)).toEqual([]);
  clock.advance(10);
  await queue.done(a);
  expect(await drainItems(queue)).toEqual(["b", "c"]);
});

test("a get made once close was called is refused, although a refill in progress kept its buffer from going back yet", async () => {
  const name = freshName();
  const queue = open(name, { prefetch: 4 });
  for (const item of ["a", "b", "c", "d", "e", "f"]) await queue.add(item);
  const got: string[] = [];
  for (let i = 0; i < 3; i++) got.push(((await queue.get()) as Lease).item); // the fill brought a–e
  expect(got).toEqual(["a", "b", "c"]); // the hand-on of c left d and e: a refill runs, alone
  const closing = queue.close(); // its give-back waits for the refill
  await expect(queue.get()).rejects.toThrow(`get refused: the queue "${name}" was closed`);
  await closing;
  expect(await drainItems(open(name))).toEqual(["d", "e", "f"]);
});

test("a fill that buffers leases wakes this object's sleeping take, which is handed one at once, without a notification", async () => {
  // Its listening client hears nothing: only the instance itself can wake its take before the hour's poll. `asleep`
  // resolves once a look's views were answered: the take then sleeps.
  let looked: () => void = () => {};
  const asleep = new Promise<void>((resolve) => {
    looked = resolve;
  });
  const deaf: PoolLike = {
    query: async (text, values) => {
      const answer = await pool.query(text, values);
      if (text.includes(".views(")) setImmediate(looked);
      return answer;
    },
    connect: async () => {
      const client = await pool.connect();
      return {
        query: (text: string, values?: unknown[]) => client.query(text, values),
        on: () => undefined,
        release: (error?: Error | boolean) => client.release(error),
      };
    },
  };
  const name = freshName();
  const queue = new PostgresWorkQueue({ pool: deaf, schema, name, maxRetries: 3, prefetch: 4, pollMs: 3_600_000 });
  opened.push(queue);
  const taken = queue.take();
  let settled = false;
  void taken.then(() => {
    settled = true;
  });
  await asleep;
  const other = open(name);
  for (const item of ["a", "b", "c"]) await other.add(item);
  expect(await queue.get()).toMatchObject({ item: "a" }); // b and c buffered: the fill wakes the take
  await new Promise((resolve) => setImmediate(resolve));
  expect(settled).toBe(true);
  expect(await taken).toMatchObject({ item: "b" });
  await queue.close(); // its listening client back: the suite's pool has four
});

test("an extend of a buffered item with token 0 gives its lease back first, and is refused: that item is queued for every instance", async () => {
  const name = freshName();
  const buffering = open(name, { prefetch: 4 });
  const other = open(name);
  for (const item of ["a", "b", "c"]) await buffering.add(item);
  expect(await buffering.get()).toMatchObject({ item: "a" }); // b and c buffered
  await expect(buffering.extend({ item: "c", token: 0, expiresAt: 0 })).rejects.toBeInstanceOf(StaleLeaseError);
  expect(await other.get()).toMatchObject({ item: "c" });
  expect(await other.get()).toBeUndefined(); // b is still buffered
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

/** A metrics sink that keeps the queue durations it observes, and counts nothing else. */
function queueDurations(): { observed: number[]; sink: MetricsSink } {
  const observed: number[] = [];
  const sink: MetricsSink = {
    add: () => {},
    retry: () => {},
    observeQueueDuration: (ms) => observed.push(ms),
    observeWorkDuration: () => {},
  };
  return { observed, sink };
}

test("without a clock, a lease is fresh for half of leaseMs from when its fill was sent: then the buffer gives it back by itself, to its place, and its queue duration was observed on the process's time", async () => {
  const { observed, sink } = queueDurations();
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

test("a take woken after a look that found nothing leases the item it was woken for with get, buffering nothing, its queue duration observed on the clock; the next take that finds the buffer empty fills it", async () => {
  // a pool of its own: the suite's, of four connections, may be held by the listening connections of the tests before
  const own = new pg.Pool({ connectionString: databaseUrl, max: 4 });
  const sent: string[] = [];
  let viewed = () => {};
  const looked = new Promise<void>((resolve) => {
    viewed = resolve;
  });
  const logged = new Proxy(own, {
    get(target, key) {
      if (key === "query") {
        return async (text: string, values?: unknown[]) => {
          const name = /\.(\w+)\(/.exec(text)?.[1] ?? text;
          sent.push(name);
          const result = await target.query(text, values);
          if (name === "views") viewed();
          return result;
        };
      }
      const value = Reflect.get(target, key, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  const { observed, sink } = queueDurations();
  const clock = new VirtualClock(1_000);
  const name = freshName();
  const queue = new PostgresWorkQueue({ pool: logged, schema, name, maxRetries: 3, prefetch: 4, clock, metrics: sink });
  const other = new PostgresWorkQueue({ pool: own, schema, name, maxRetries: 3, clock });
  onTestFinished(async () => {
    await Promise.all([queue.close(), other.close()]);
    await own.end();
  });
  const taken = queue.take();
  await looked; // its look found nothing: it sleeps
  await other.add("a");
  expect((await taken)?.item).toBe("a");
  expect(sent).toEqual(["lease_many", "views", "get"]);
  expect(observed).toEqual([0]); // queued at 1,000, handed out at 1,000
  for (const item of ["b", "c"]) await other.add(item);
  expect((await queue.take())?.item).toBe("b");
  expect(sent.slice(3)).toEqual(["lease_many"]);
  expect(await other.inFlight()).toBe(3); // a and b leased, c buffered
});
