/**
 * The metrics of `PostgresWorkQueue` (docs/spec.md §20.17): what this queue object's calls did, counted in the
 * process — adds that changed something, retries answering `true`, queue and work durations, stale calls refused —
 * batched calls included, and the queue's gauges read from the database in one statement — depth, unfinished work,
 * longest running, expired leases; and the Prometheus exporter's scrape of them. Every time is a virtual clock's,
 * so every value is known exactly.
 */
import { Registry } from "prom-client";
import { expect, test } from "vitest";
import { type MetricsSink, type SharedQueueGauges, VirtualClock } from "../../../src/index.js";
import { type Lease, PostgresWorkQueue, StaleLeaseError } from "../../../src/postgres/index.js";
import { prometheusMetrics } from "../../../src/prometheus.js";
import { counting, freshName, freshSchema, unreachable } from "./database.js";

const { pool, schema } = freshSchema("metrics");

/** A sink recording every count and observation, in order, and the gauges' reader it was given. */
function recording(): { readonly sink: MetricsSink; readonly events: string[]; gauges(): Promise<SharedQueueGauges> } {
  const events: string[] = [];
  let read: (() => Promise<SharedQueueGauges>) | undefined;
  const sink: MetricsSink = {
    add: () => events.push("add"),
    retry: () => events.push("retry"),
    observeQueueDuration: (ms) => events.push(`queued ${ms}`),
    observeWorkDuration: (ms) => events.push(`worked ${ms}`),
    staleCall: () => events.push("stale"),
    connect: () => events.push("connect"),
    connectShared(given) {
      read = given;
    },
  };
  return {
    sink,
    events,
    gauges: () => (read as () => Promise<SharedQueueGauges>)(),
  };
}

/** A queue on a virtual clock at 1,000 ms, with a recording sink, and its statements. */
function queueWith(options: { maxRetries?: number; leaseMs?: number } = {}) {
  const clock = new VirtualClock(1_000);
  const recorded = recording();
  const counted = counting(pool);
  const queue = new PostgresWorkQueue({
    pool: counted.pool,
    schema,
    name: freshName(),
    maxRetries: options.maxRetries ?? 3,
    leaseMs: options.leaseMs ?? 1_000,
    clock,
    metrics: recorded.sink,
  });
  return { clock, queue, ...recorded, sent: counted.sent };
}

/** What `get` answered, which the test knows is a lease. */
async function leaseOf(pending: Promise<Lease | undefined>): Promise<Lease> {
  const lease = await pending;
  if (lease === undefined) throw new Error("expected a lease");
  return lease;
}

test("adds count what changed something: an absent item queued or an item in flight newly marked dirty, alone and batched, not while shutting down", async () => {
  const { queue, events } = queueWith();
  await queue.add("a");
  expect(events).toEqual(["add"]);
  await queue.add("a"); // queued: keeps its place (§4.2)
  expect(events).toEqual(["add"]);
  // x goes alone; then c, d, c and a together: c and d queued, the second c and a already queued
  await Promise.all([queue.add("x"), queue.add("c"), queue.add("d"), queue.add("c"), queue.add("a")]);
  expect(events).toEqual(["add", "add", "add", "add"]);
  await leaseOf(queue.get()); // a, in flight
  events.length = 0;
  await queue.add("a"); // marked dirty
  await queue.add("a"); // already dirty: not counted (§19.2)
  expect(events).toEqual(["add"]);
  await Promise.all([queue.add("a"), queue.add("a"), queue.add("e")]); // a dirty, a dirty, e queued
  expect(events).toEqual(["add", "add"]);
  await queue.shutDown();
  await queue.add("f");
  await Promise.all([queue.add("g"), queue.add("h")]);
  expect(events).toEqual(["add", "add"]); // §12.3: nothing added while shutting down
});

test("each hand-out observes how long its item was queued, by get, by batched gets in order, and by take", async () => {
  const { clock, queue, events } = queueWith();
  await queue.add("a");
  clock.advance(30);
  expect((await leaseOf(queue.get())).item).toBe("a");
  expect(events).toEqual(["add", "queued 30"]);
  events.length = 0;
  await Promise.all([queue.add("b"), queue.add("c")]);
  clock.advance(5);
  await queue.add("d");
  clock.advance(7);
  const leases = await Promise.all([queue.get(), queue.get(), queue.get(), queue.get()]);
  expect(leases.map((lease) => lease?.item)).toEqual(["b", "c", "d", undefined]);
  expect(events).toEqual(["add", "add", "add", "queued 12", "queued 12", "queued 7"]);
  events.length = 0;
  await queue.add("e");
  clock.advance(4);
  expect((await queue.take())?.item).toBe("e");
  expect(events).toEqual(["add", "queued 4"]);
  await queue.close(); // its listening connection
});

test("each done that ends a lease observes how long it was in flight, alone, batched, requeuing a dirty item and as a finish; a done or finish holding nothing observes nothing", async () => {
  const { clock, queue, events } = queueWith();
  await Promise.all([queue.add("a"), queue.add("b"), queue.add("c"), queue.add("d")]);
  const a = await leaseOf(queue.get());
  clock.advance(20);
  const b = await leaseOf(queue.get());
  clock.advance(3);
  const c = await leaseOf(queue.get());
  clock.advance(2);
  events.length = 0;
  await queue.done(a);
  expect(events).toEqual(["worked 25"]);
  const d = await leaseOf(queue.get());
  clock.advance(1);
  events.length = 0;
  await Promise.all([queue.done(d), queue.done(c), queue.done(b)]); // d alone, then c and b together
  expect(events).toEqual(["worked 1", "worked 3", "worked 6"]);
  await queue.add("x");
  const x = await leaseOf(queue.get());
  await queue.add("x"); // dirty: its done takes the general path and queues it again
  clock.advance(9);
  events.length = 0;
  await queue.done(x);
  expect(events).toEqual(["worked 9"]);
  expect(await queue.size()).toBe(1);
  await queue.done({ item: "never", token: 0, expiresAt: 0 }); // §6.3: nothing in flight, nothing observed
  expect(events).toEqual(["worked 9"]);
  await queue.add("y");
  const y = await leaseOf(queue.get());
  clock.advance(7);
  events.length = 0;
  await queue.finish(y); // forget and done in one statement (§20.12)
  expect(events).toEqual(["worked 7"]);
  await queue.finish({ item: "never", token: 0, expiresAt: 0 }); // holding nothing, as done: nothing observed
  expect(events).toEqual(["worked 7"]);
});

test("retries count the retry calls answering true; one that gives up is not counted", async () => {
  const { queue, events } = queueWith({ maxRetries: 2 });
  await queue.add("a");
  let lease = await leaseOf(queue.get());
  events.length = 0;
  expect(await queue.retry(lease)).toBe(true);
  expect(events).toEqual(["retry"]);
  await queue.done(lease);
  lease = await leaseOf(queue.get());
  events.length = 0;
  expect(await queue.retry(lease)).toBe(false); // the second failure of two allowed: gives up
  expect(events).toEqual([]);
  await queue.done(lease);
  await Promise.all([queue.add("b"), queue.add("c")]);
  const b = await leaseOf(queue.get());
  const c = await leaseOf(queue.get());
  events.length = 0;
  const answers = await Promise.all([
    queue.retry(b),
    queue.retry(c),
    queue.retry({ item: "a", token: 0, expiresAt: 0 }), // a's third failure: gives up
  ]);
  expect(answers).toEqual([true, true, false]);
  expect(events).toEqual(["retry", "retry"]);
});

test("every call refused as stale counts one stale call in the process that made it, batched ones too", async () => {
  const { queue, events } = queueWith();
  await queue.add("a");
  const a = await leaseOf(queue.get());
  await queue.done(a);
  events.length = 0;
  await expect(queue.done(a)).rejects.toBeInstanceOf(StaleLeaseError);
  await expect(queue.retry(a)).rejects.toBeInstanceOf(StaleLeaseError);
  await expect(queue.forget(a)).rejects.toBeInstanceOf(StaleLeaseError);
  await expect(queue.extend(a)).rejects.toBeInstanceOf(StaleLeaseError);
  await expect(queue.finish(a)).rejects.toBeInstanceOf(StaleLeaseError);
  expect(events).toEqual(["stale", "stale", "stale", "stale", "stale"]);
  await Promise.all([queue.add("b"), queue.add("c")]);
  const b = await leaseOf(queue.get());
  const c = await leaseOf(queue.get());
  events.length = 0;
  const outcomes = await Promise.allSettled([queue.done(b), queue.done(c), queue.done(a), queue.done(c)]);
  expect(outcomes.map((outcome) => outcome.status)).toEqual(["fulfilled", "fulfilled", "rejected", "rejected"]);
  expect(events.filter((event) => event === "stale")).toEqual(["stale", "stale"]);
  events.length = 0;
  await queue.forget({ item: "b", token: 0, expiresAt: 0 }); // holding none, and none live: accepted
  expect(events).toEqual([]);
});

test("the gauges are the queue's, read in one statement at the clock's time: depth, unfinished work, longest running, expired leases", async () => {
  const { clock, queue, gauges, sent } = queueWith({ leaseMs: 100 });
  expect(await gauges()).toEqual({ depth: 0, unfinishedWorkMs: 0, longestRunningMs: 0, expiredLeases: 0 });
  await Promise.all([queue.add("a"), queue.add("b"), queue.add("c")]);
  const a = await leaseOf(queue.get());
  clock.advance(10);
  await leaseOf(queue.get()); // b, left to expire
  clock.advance(5);
  sent.length = 0;
  expect(await gauges()).toEqual({ depth: 1, unfinishedWorkMs: 15 + 5, longestRunningMs: 15, expiredLeases: 0 });
  expect(sent).toEqual(["metrics"]);
  await queue.done(a);
  expect(await gauges()).toEqual({ depth: 1, unfinishedWorkMs: 5, longestRunningMs: 5, expiredLeases: 0 });
  clock.advance(96); // b's lease expired at 1,110: b is queued again, behind c
  expect(await gauges()).toEqual({ depth: 2, unfinishedWorkMs: 0, longestRunningMs: 0, expiredLeases: 1 });
  const c = await leaseOf(queue.get());
  const b = await leaseOf(queue.get());
  expect([c.item, b.item]).toEqual(["c", "b"]);
  clock.advance(200); // both expire
  expect(await gauges()).toEqual({ depth: 2, unfinishedWorkMs: 0, longestRunningMs: 0, expiredLeases: 3 });
  // Another queue object of the same queue reads the same gauges: they are the queue's, not the process's.
  const other = recording();
  new PostgresWorkQueue({ pool, schema, name: queue.name, maxRetries: 3, clock, metrics: other.sink });
  expect(await other.gauges()).toEqual({ depth: 2, unfinishedWorkMs: 0, longestRunningMs: 0, expiredLeases: 3 });
  expect(other.events).toEqual([]); // connectShared, never connect
});

test("a read of the gauges that cannot reach the database rejects as the queue's calls do, naming metrics", async () => {
  const recorded = recording();
  new PostgresWorkQueue({ pool: unreachable(pool), schema, name: freshName(), maxRetries: 3, metrics: recorded.sink });
  await expect(recorded.gauges()).rejects.toThrow("metrics could not reach PostgreSQL: read ECONNRESET");
});

test("metrics add no statement to any call: add, get, done, retry and forget send what they send without them", async () => {
  const { queue, sent } = queueWith();
  const plain = counting(pool);
  const without = new PostgresWorkQueue({ pool: plain.pool, schema, name: freshName(), maxRetries: 3 });
  for (const each of [queue, without]) {
    await Promise.all([each.add("a"), each.add("b"), each.add("c")]);
    const leases = await Promise.all([each.get(), each.get(), each.get()]);
    const [a, b, c] = leases as [Lease, Lease, Lease];
    await Promise.all([each.retry(a), each.retry(b)]);
    await Promise.all([each.forget(c), each.forget(b)]);
    await Promise.all([each.done(a), each.done(b), each.done(c)]);
  }
  expect(sent).toEqual(plain.sent);
  expect(sent).toEqual([
    "add",
    "add_many",
    "get",
    "get_many",
    "retry",
    "retry",
    "forget",
    "forget",
    "done",
    "done_many",
  ]);
});

test("a sink without the optional methods is enough: a stale call is refused all the same", async () => {
  const base = { pool, schema, name: freshName(), maxRetries: 3 };
  const sink = { add() {}, retry() {}, observeQueueDuration() {}, observeWorkDuration() {} };
  const minimal = new PostgresWorkQueue({ ...base, metrics: sink });
  await minimal.add("a");
  const lease = await leaseOf(minimal.get());
  await minimal.done(lease);
  await expect(minimal.done(lease)).rejects.toBeInstanceOf(StaleLeaseError); // no staleCall: refused all the same
});

/** One scrape's samples, by `name{labels}`. */
function samples(text: string): Map<string, number> {
  const found = new Map<string, number>();
  for (const line of text.split("\n")) {
    const sample = /^(\S+) (\S+)$/.exec(line);
    if (sample !== null && !line.startsWith("#")) found.set(sample[1] as string, Number(sample[2]));
  }
  return found;
}

test("the Prometheus exporter scrapes the process's counts, the queue's gauges in one statement, expired leases and stale calls", async () => {
  const clock = new VirtualClock(1_000);
  const registry = new Registry();
  const counted = counting(pool);
  const name = freshName();
  const queue = new PostgresWorkQueue({
    pool: counted.pool,
    schema,
    name,
    maxRetries: 3,
    leaseMs: 1_000,
    clock,
    metrics: prometheusMetrics({ name, registry }),
  });
  const label = `{name="${name}"}`;
  let scrape = samples(await registry.metrics());
  expect(scrape.get(`workqueue_stale_calls_total${label}`)).toBe(0);
  expect(scrape.get(`workqueue_expired_leases${label}`)).toBe(0);
  await Promise.all([queue.add("a"), queue.add("b"), queue.add("c")]);
  clock.advance(500);
  const a = await leaseOf(queue.get());
  const b = await leaseOf(queue.get());
  clock.advance(250);
  await queue.done(a);
  expect(await queue.retry(b)).toBe(true);
  await queue.done(b);
  await expect(queue.done(b)).rejects.toBeInstanceOf(StaleLeaseError);
  expect((await leaseOf(queue.get())).item).toBe("c"); // queued before b's requeue; left to expire
  clock.advance(1_500);
  counted.sent.length = 0;
  scrape = samples(await registry.metrics());
  expect(counted.sent).toEqual(["metrics"]); // one statement for the five gauges
  expect(scrape.get(`workqueue_adds_total${label}`)).toBe(3);
  expect(scrape.get(`workqueue_retries_total${label}`)).toBe(1);
  expect(scrape.get(`workqueue_queue_duration_seconds_count${label}`)).toBe(3); // a and b at 1,500, c at 1,750
  expect(scrape.get(`workqueue_queue_duration_seconds_sum${label}`)).toBe(0.5 + 0.5 + 0.75);
  expect(scrape.get(`workqueue_work_duration_seconds_count${label}`)).toBe(2);
  expect(scrape.get(`workqueue_work_duration_seconds_sum${label}`)).toBe(0.25 + 0.25);
  expect(scrape.get(`workqueue_stale_calls_total${label}`)).toBe(1);
  expect(scrape.get(`workqueue_expired_leases${label}`)).toBe(1);
  expect(scrape.get(`workqueue_depth${label}`)).toBe(2); // b, requeued by its done, and c, by its expiry
  expect(scrape.get(`workqueue_unfinished_work_seconds${label}`)).toBe(0);
  expect(scrape.get(`workqueue_longest_running_processor_seconds${label}`)).toBe(0);
  expect((await leaseOf(queue.get())).item).toBe("b");
  clock.advance(400);
  scrape = samples(await registry.metrics());
  expect(scrape.get(`workqueue_unfinished_work_seconds${label}`)).toBe(0.4);
  expect(scrape.get(`workqueue_longest_running_processor_seconds${label}`)).toBe(0.4);
  expect(scrape.get(`workqueue_depth${label}`)).toBe(1);
  // A queue whose gauges cannot be read is left out of the scrape's gauges; its counts stay.
  await queue.close();
  scrape = samples(await registry.metrics());
  for (const gauge of ["depth", "unfinished_work_seconds", "longest_running_processor_seconds", "expired_leases"]) {
    expect(scrape.has(`workqueue_${gauge}${label}`)).toBe(false);
  }
  expect(scrape.get(`workqueue_adds_total${label}`)).toBe(3);
  expect(scrape.get(`workqueue_stale_calls_total${label}`)).toBe(1);
});
