/**
 * How a waiting `take` or drain of `PostgresWorkQueue` wakes (docs/spec.md §20.10): by `LISTEN/NOTIFY` for its own
 * queue only, by a timer at the next expiry or due time (on the database's clock or an injected one), by `pollMs`
 * when a notification is lost, and again after its listening connection was cut. Every take here polls only every
 * minute unless the test is about polling, so a take that resolves was woken by what the test names.
 */
import pg from "pg";
import { afterAll, expect, test } from "vitest";
import { VirtualClock } from "../../../src/index.js";
import { PostgresWorkQueue } from "../../../src/postgres/index.js";
import { databaseUrl, freshName, freshSchema } from "./database.js";

const { pool, schema } = freshSchema("waiting");
const other = new pg.Pool({ connectionString: databaseUrl, max: 2 });
afterAll(() => other.end());

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Whether `promise` settled within `ms`. */
async function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let settled = false;
  void promise.then(
    () => {
      settled = true;
    },
    () => {
      settled = true;
    },
  );
  await pause(ms);
  return settled;
}

/** The rows `sql` answers once `ready` holds of them, asking again every 20 ms; after 5 s, the last rows. */
async function rowsWhen<R>(sql: string, ready: (rows: R[]) => boolean): Promise<R[]> {
  for (const deadline = Date.now() + 5000; ; await pause(20)) {
    const rows = (await other.query(sql)).rows as R[];
    if (ready(rows) || Date.now() > deadline) return rows;
  }
}

/** A pool that counts the statements the queue sends through it. */
function counting(inner: pg.Pool): { pool: pg.Pool; readonly statements: () => number } {
  let statements = 0;
  const spy = new Proxy(inner, {
    get(target, key, receiver) {
      if (key === "query") {
        return (...args: Parameters<pg.Pool["query"]>) => {
          statements += 1;
          return (target.query as (...a: unknown[]) => unknown).apply(target, args);
        };
      }
      const value = Reflect.get(target, key, receiver);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return { pool: spy, statements: () => statements };
}

test("a take on an injected clock is woken when that clock reaches the lease's expiry, and not before", async () => {
  const clock = new VirtualClock();
  const queue = new PostgresWorkQueue({
    pool,
    schema,
    name: freshName(),
    maxRetries: 3,
    leaseMs: 100,
    pollMs: 60_000,
    clock,
  });
  await queue.add("a");
  const first = await queue.get();
  const taken = queue.take();
  expect(await settlesWithin(taken, 150)).toBe(false);
  clock.advance(99);
  expect(await settlesWithin(taken, 100)).toBe(false);
  clock.advance(1);
  const again = await taken;
  expect([again?.item, again?.expiresAt]).toEqual(["a", 200]);
  expect(again?.token).toBeGreaterThan(first?.token as number);
  await queue.close();
});

test("a take already waiting is woken by an addAfter's due time, on the database's clock, long before its poll", async () => {
  const name = freshName();
  const taker = new PostgresWorkQueue({ pool, schema, name, maxRetries: 3, pollMs: 60_000 });
  const taken = taker.take();
  await pause(100);
  const asked = Date.now();
  await new PostgresWorkQueue({ pool: other, schema, name, maxRetries: 3 }).addAfter("a", 150);
  const lease = await taken;
  expect(lease?.item).toBe("a");
  // Handed out at the database's time expiresAt − leaseMs, which is not before the item fell due.
  expect((lease?.expiresAt as number) - taker.leaseMs).toBeGreaterThanOrEqual(asked + 150);
  await taker.close();
});

test("a take is not woken by a notification for another queue of the schema, and is by its own", async () => {
  const spy = counting(pool);
  const name = freshName();
  const taker = new PostgresWorkQueue({ pool: spy.pool, schema, name, maxRetries: 3, pollMs: 60_000 });
  const taken = taker.take();
  // Its look is two statements, get and views; then it sleeps (a loaded machine may take longer than a pause).
  while (spy.statements() < 2) await pause(10);
  await pause(100);
  const looked = spy.statements();
  await new PostgresWorkQueue({ pool: other, schema, name: freshName(), maxRetries: 3 }).add("x");
  await pause(150);
  expect(spy.statements()).toBe(looked);
  await new PostgresWorkQueue({ pool: other, schema, name, maxRetries: 3 }).add("a");
  expect((await taken)?.item).toBe("a");
  await taker.close();
});

test("a take finds an item queued without a notification (one lost) within pollMs", async () => {
  const name = freshName();
  const taker = new PostgresWorkQueue({ pool, schema, name, maxRetries: 3, pollMs: 150 });
  const taken = taker.take();
  await pause(100);
  // Queue "a" as enter does, but by hand, so that no notification is sent.
  const client = await other.connect();
  await client.query("begin");
  await client.query(`insert into "${schema}".items (queue, item) values ($1, 'a')`, [name]);
  await client.query(`insert into "${schema}".queued (queue, item, queued_ms, position) values ($1, 'a', 0, 0)`, [
    name,
  ]);
  await client.query("commit");
  client.release();
  expect((await taken)?.item).toBe("a");
  await taker.close();
});

test("a take whose listening connection is cut listens again at once, and is woken by the next add", async () => {
  const own = new pg.Pool({ connectionString: databaseUrl, max: 3, application_name: "workqueue-listener-test" });
  const name = freshName();
  const taker = new PostgresWorkQueue({ pool: own, schema, name, maxRetries: 3, pollMs: 60_000 });
  const taken = taker.take();
  const listening = `select pid from pg_stat_activity where application_name = 'workqueue-listener-test' and query like 'listen %'`;
  const [first] = await rowsWhen<{ pid: number }>(listening, (rows) => rows.length === 1);
  const pid = first?.pid;
  await other.query("select pg_terminate_backend($1)", [pid]);
  const relistened = await rowsWhen<{ pid: number }>(listening, (rows) => rows.length === 1 && rows[0]?.pid !== pid);
  expect(relistened.map((r) => r.pid)).not.toContain(pid);
  expect(relistened).toHaveLength(1);
  await new PostgresWorkQueue({ pool: other, schema, name, maxRetries: 3 }).add("a");
  expect((await taken)?.item).toBe("a");
  await taker.close();
  await own.end();
});

test("shutDownWithDrain resolves at once when nothing is left, and otherwise once the last lease is done", async () => {
  const empty = new PostgresWorkQueue({ pool, schema, name: freshName(), maxRetries: 3, pollMs: 60_000 });
  await empty.shutDownWithDrain();
  expect(await empty.shuttingDown()).toBe(true);
  await empty.close();
  const name = freshName();
  const queue = new PostgresWorkQueue({ pool, schema, name, maxRetries: 3, pollMs: 60_000 });
  await queue.add("a");
  await queue.add("b");
  const a = await queue.get();
  const drained = queue.shutDownWithDrain();
  expect(await settlesWithin(drained, 100)).toBe(false);
  const worker = new PostgresWorkQueue({ pool: other, schema, name, maxRetries: 3 });
  await worker.done(a as never);
  expect(await settlesWithin(drained, 100)).toBe(false); // "b" is still queued
  const b = await worker.get();
  expect(b?.item).toBe("b");
  await worker.done(b as never);
  await drained;
  expect([await queue.size(), await queue.inFlight()]).toEqual([0, 0]);
  await queue.close();
});

test("a drain whose signal aborts rejects with the reason; the queue stays shut down and keeps its items", async () => {
  const queue = new PostgresWorkQueue({ pool, schema, name: freshName(), maxRetries: 3, pollMs: 60_000 });
  await queue.add("a");
  const controller = new AbortController();
  const drained = queue.shutDownWithDrain({ signal: controller.signal });
  await pause(100);
  controller.abort(new Error("stop draining"));
  await expect(drained).rejects.toThrow("stop draining");
  expect([await queue.shuttingDown(), await queue.size()]).toEqual([true, 1]);
  await expect(queue.shutDownWithDrain({ signal: AbortSignal.abort(new Error("at once")) })).rejects.toThrow("at once");
  await queue.close();
});

test("a take waiting for a lease to expire makes no statement until it is woken", async () => {
  const spy = counting(pool);
  for (const clock of [undefined, new VirtualClock()]) {
    const queue = new PostgresWorkQueue({
      pool: spy.pool,
      schema,
      name: freshName(),
      maxRetries: 3,
      leaseMs: 10_000,
      pollMs: 60_000,
      clock,
    });
    await queue.add("a");
    await queue.get();
    const before = spy.statements();
    const taken = queue.take();
    // Its look is a get and the views; once both went out, nothing more until a wake (however slow the machine).
    while (spy.statements() < before + 2) await pause(10);
    const looked = spy.statements();
    await pause(200);
    expect(spy.statements()).toBe(looked);
    await queue.add("b");
    expect((await taken)?.item).toBe("b");
    await queue.close();
  }
});

test("§14.2, §20.10: while shutting down, a take waits while one item waits and another is in flight, and answers undefined once the lease is done and the wait fell due and was handed out", async () => {
  const clock = new VirtualClock();
  const queue = new PostgresWorkQueue({ pool, schema, name: freshName(), maxRetries: 3, clock, pollMs: 50 });
  await queue.add("held");
  const held = await queue.get();
  await queue.addAfter("later", 1_000);
  await queue.shutDown();
  expect([await queue.waiting(), await queue.inFlight()]).toEqual([1, 1]);
  const signal = AbortSignal.timeout(300);
  await expect(queue.take({ signal })).rejects.toMatchObject({ name: "TimeoutError" }); // still waiting: neither count is 0
  if (held === undefined) throw new Error("nothing handed out");
  await queue.done(held);
  clock.advance(1_000);
  const later = await queue.take();
  expect(later?.item).toBe("later");
  if (later !== undefined) await queue.done(later);
  expect(await queue.take()).toBeUndefined();
  await queue.close();
});

test("§14.2: while shutting down, a take whose get found nothing does not answer undefined when a done requeued the item before its views", async () => {
  // The done runs when the take sends its views, after its get found nothing: the views then show the item queued
  // and nothing in flight. Found by checkLifecycle (properties/test/postgres/lifecycle.test.ts).
  let between: (() => Promise<void>) | undefined;
  const hooked = new Proxy(pool, {
    get(target, key) {
      if (key !== "query") return Reflect.get(target, key, target);
      return async (text: string, values?: unknown[]) => {
        const run = /\.views\(/.test(text) ? between : undefined;
        between = run === undefined ? between : undefined;
        await run?.();
        return target.query(text, values);
      };
    },
  });
  const queue = new PostgresWorkQueue({ pool: hooked, schema, name: freshName(), maxRetries: 1, pollMs: 60_000 });
  await queue.add("a");
  const lease = await queue.get();
  await queue.add("a"); // in flight: marked dirty, queued again by its done
  await queue.shutDown();
  between = () => queue.done(lease as NonNullable<typeof lease>);
  const taken = await queue.take();
  expect([taken?.item, between]).toEqual(["a", undefined]);
  await queue.done(taken as NonNullable<typeof taken>);
  await queue.close();
});
