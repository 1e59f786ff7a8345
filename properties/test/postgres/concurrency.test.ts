/**
 * `PostgresWorkQueue` shared by several pools, as several processes share it (docs/spec.md §20): concurrent gets,
 * takes woken by another process's add and shutdown through `LISTEN/NOTIFY`, and by an expiring lease.
 */
import pg from "pg";
import { afterAll, expect, test } from "vitest";
import { PostgresWorkQueue } from "../../../src/postgres/index.js";
import { channelOf } from "../../../src/postgres/schema.js";
import { checkHistory } from "../../history/check-history.js";
import { concurrentGets } from "./concurrent.js";
import { databaseUrl, freshName, freshSchema } from "./database.js";

const { pool, schema } = freshSchema("concurrency");
const other = new pg.Pool({ connectionString: databaseUrl, max: 2 });
afterAll(() => other.end());

test("300 items got by 12 workers on 3 pools at once are each handed out exactly once, and checkHistory finds no broken rule of §20.7 in their history", async () => {
  const { handedOut, notOnce, events } = await concurrentGets(schema, 300);
  expect(notOnce).toEqual([]);
  expect(handedOut).toBe(300);
  expect(events.filter((e) => e.op === "lease")).toHaveLength(300);
  expect(checkHistory(events, { maxRetries: 3, toleranceMs: 0 })).toEqual([]);
});

test("a get answers the oldest queued item although another call holds that item's row (§10.8)", async () => {
  const name = freshName();
  const queue = new PostgresWorkQueue({ pool, schema, name, maxRetries: 3 });
  await queue.add("a");
  await queue.add("b");
  // Another session holds "a"'s row, as an add of the queued "a" or a forget of it does for its transaction: a get
  // that skipped every locked row would answer "b", out of the queue's order.
  const holder = await other.connect();
  await holder.query("begin");
  await holder.query(`select * from "${schema}".items where queue = $1 and item = 'a' for update`, [name]);
  let settled = false;
  const getting = queue.get().finally(() => {
    settled = true;
  });
  // Until the get waits for the held row (or answered without waiting, which the expectation below rejects): a fixed
  // pause would, on a loaded machine, commit before the get reached the row and check nothing.
  const deadline = Date.now() + 10_000;
  const blocked = async () =>
    (
      await pool.query(
        "select count(*)::int as n from pg_stat_activity where wait_event_type = 'Lock' and position($1 in query) > 0",
        [schema],
      )
    ).rows[0].n > 0;
  while (!settled && !(await blocked())) {
    if (Date.now() > deadline) throw new Error("the get neither waited for the held row nor answered within 10 s");
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  await holder.query("commit");
  holder.release();
  expect((await getting)?.item).toBe("a");
  expect(await queue.size()).toBe(1);
});

test("an add that overlaps another add of the same queue is ordered by their commits: it waits for the other's, so what one call saw queued is never overtaken (§10.8)", async () => {
  const name = freshName();
  const queue = new PostgresWorkQueue({ pool, schema, name, maxRetries: 3 });
  // Another process's add of "a", inside a transaction that has not committed yet: it took its place in the queue.
  const holder = await other.connect();
  await holder.query("begin");
  await holder.query(`select "${schema}".add($1, 'a', null)`, [name]);
  let settled = false;
  const adding = queue.add("b").finally(() => {
    settled = true;
  });
  // Until the add of "b" waits for the open one (or answered without waiting, which the expectation rejects): had it
  // answered, a size then would see "b" alone, and "a", committed after, would be handed out before it.
  const deadline = Date.now() + 10_000;
  const blocked = async () =>
    (
      await pool.query(
        "select count(*)::int as n from pg_stat_activity where wait_event_type = 'Lock' and position($1 in query) > 0",
        [schema],
      )
    ).rows[0].n > 0;
  try {
    while (!settled && !(await blocked())) {
      if (Date.now() > deadline) throw new Error("the add neither waited for the open add nor answered within 10 s");
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(settled).toBe(false);
  } finally {
    await holder.query("commit");
    holder.release();
  }
  await adding;
  expect([await queue.size(), (await queue.get())?.item, (await queue.get())?.item]).toEqual([2, "a", "b"]);
  await queue.close();
});

test("a take waiting in one process is woken by an add in another, long before its poll", async () => {
  const name = freshName();
  const taker = new PostgresWorkQueue({ pool, schema, name, maxRetries: 3, pollMs: 60_000 });
  const adder = new PostgresWorkQueue({ pool: other, schema, name, maxRetries: 3 });
  const taken = taker.take();
  await new Promise((resolve) => setTimeout(resolve, 100));
  await adder.add("a");
  expect((await taken)?.item).toBe("a");
  await taker.close();
});

test("a take waiting in one process resolves undefined when another shuts the queue down", async () => {
  const name = freshName();
  const taker = new PostgresWorkQueue({ pool, schema, name, maxRetries: 3, pollMs: 60_000 });
  const taken = taker.take();
  await new Promise((resolve) => setTimeout(resolve, 100));
  await new PostgresWorkQueue({ pool: other, schema, name, maxRetries: 3 }).shutDown();
  expect(await taken).toBeUndefined();
  await taker.close();
});

test("a take waiting while a lease is live gets the item when the lease expires, on the database's clock", async () => {
  const name = freshName();
  const queue = new PostgresWorkQueue({ pool, schema, name, maxRetries: 3, leaseMs: 200, pollMs: 60_000 });
  await queue.add("a");
  const first = await queue.get();
  const again = await queue.take();
  expect(again?.item).toBe("a");
  expect(again?.token).toBeGreaterThan(first?.token as number);
  expect(again?.expiresAt).toBeGreaterThanOrEqual(first?.expiresAt as number);
  await queue.close();
});

test("a take whose signal aborts while it waits rejects with the reason and takes nothing", async () => {
  const name = freshName();
  const queue = new PostgresWorkQueue({ pool, schema, name, maxRetries: 3, pollMs: 60_000 });
  const controller = new AbortController();
  const taken = queue.take({ signal: controller.signal });
  await new Promise((resolve) => setTimeout(resolve, 50));
  controller.abort(new Error("stop"));
  await expect(taken).rejects.toThrow("stop");
  await queue.add("a");
  expect(await queue.size()).toBe(1);
  await queue.close();
});

test("close ends the listening connection rather than pool it, rejects the waiting take and every later call, and keeps the state", async () => {
  const own = new pg.Pool({ connectionString: databaseUrl, max: 3 });
  const name = freshName();
  const queue = new PostgresWorkQueue({ pool: own, schema, name, maxRetries: 3, pollMs: 60_000 });
  await queue.add("a");
  await queue.get();
  const listening = async () =>
    (
      await pool.query("select count(*)::int as n from pg_stat_activity where query = $1", [
        `listen "${channelOf(schema)}"`,
      ])
    ).rows[0].n as number;
  const before = await listening();
  const taken = queue.take().catch((e: unknown) => e);
  // The take is waiting once its listening connection has run LISTEN: counted then, not after a guessed pause.
  const deadline = Date.now() + 10_000;
  while ((await listening()) === before) {
    if (Date.now() > deadline) throw new Error("the take did not LISTEN within 10 s");
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  const connections = own.totalCount;
  await queue.close();
  expect(own.totalCount).toBe(connections - 1); // a pooled listener would stay LISTENing for its next user
  expect(await taken).toEqual(new Error(`take refused: the queue "${name}" was closed`));
  await expect(queue.add("b")).rejects.toThrow(`add refused: the queue "${name}" was closed`);
  await expect(queue.take()).rejects.toThrow(`take refused: the queue "${name}" was closed`);
  await queue.close();
  expect(await new PostgresWorkQueue({ pool: own, schema, name, maxRetries: 3 }).inFlight()).toBe(1);
  await own.end();
});
