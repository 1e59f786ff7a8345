/**
 * The database goes away and comes back (docs/spec.md §20.8), made by a TCP proxy between the queue's pool and the
 * machine's server (properties/test/postgres/proxy.ts): while it is away every call rejects with
 * DatabaseUnavailableError naming the verb and the cause, and changes nothing in the database, which the test reads
 * through a connection of its own; once it is back, the same queue instance goes on and nothing was lost. A call
 * the server was running when its client went away may still commit: it is applied whole or not at all. And a
 * take whose `LISTEN` fails, as it does on a connection the pool lent out just as the database went away. And a
 * server that stops answering without a reset (the proxy holds what either end sends), on a pool with timeouts.
 */
import pg from "pg";
import { afterEach, expect, test, vi } from "vitest";
import {
  DatabaseUnavailableError,
  type Lease,
  type PoolLike,
  PostgresWorkQueue,
  StaleLeaseError,
} from "../../../src/postgres/index.js";
import { databaseUrl, freshName, freshSchema } from "./database.js";
import { startProxy, type TcpProxy } from "./proxy.js";

const { pool, schema } = freshSchema("outage");
const target = new URL(databaseUrl);

/** The pools and proxies a test made, ended after it. */
const made: { proxy: TcpProxy; pool: pg.Pool }[] = [];
afterEach(async () => {
  for (const { proxy, pool } of made.splice(0)) {
    proxy.resume();
    await proxy.reopen();
    await pool.end();
    await proxy.cut();
  }
});

/** A proxy to the machine's server and a pool that connects through it, with `options` beside the defaults. */
async function throughProxy(options: pg.PoolConfig = {}): Promise<{ proxy: TcpProxy; viaProxy: pg.Pool }> {
  const proxy = await startProxy({ host: target.hostname, port: Number(target.port || 5432) });
  const url = new URL(databaseUrl);
  url.hostname = "127.0.0.1";
  url.port = String(proxy.port);
  const viaProxy = new pg.Pool({ connectionString: url.toString(), max: 3, ...options });
  // pg reports an idle client's lost connection on the pool, which throws it without a listener; the queue's calls
  // report the loss themselves.
  viaProxy.on("error", () => undefined);
  made.push({ proxy, pool: viaProxy });
  return { proxy, viaProxy };
}

/** The queue's rows, read directly from the server, not through the proxy. */
async function stateOf(name: string) {
  const items = await pool.query(
    `select item, in_flight, dirty, token, lease, expires_ms, failures, due_ms from "${schema}".items
      where queue = $1 order by item`,
    [name],
  );
  const queued = await pool.query(`select item from "${schema}".queued where queue = $1 order by queued_ms, position`, [
    name,
  ]);
  const queues = await pool.query(`select shutting_down from "${schema}".queues where name = $1`, [name]);
  return { items: items.rows, queued: queued.rows.map((row) => row.item as string), queues: queues.rows };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** What `call` rejected with, or `"resolved"`. */
function rejection(call: Promise<unknown>): Promise<unknown> {
  return call.then(
    () => "resolved",
    (error: unknown) => error,
  );
}

/** Resolves once the pool has no client left: each one's lost connection has been noticed and the client dropped. */
async function emptied(viaProxy: pg.Pool): Promise<void> {
  while (viaProxy.totalCount > 0) await sleep(10);
}

test("a database that goes away mid-work: the waiting take and every verb reject with DatabaseUnavailableError naming the verb and the refused connection, nothing changes in the database, and once it is back the same queue goes on and nothing was lost", async () => {
  const { proxy, viaProxy } = await throughProxy();
  const name = freshName();
  // The statements the pool answered, to tell when the waiting take has looked and sleeps.
  const answered: string[] = [];
  const watched: PoolLike = {
    connect: () => viaProxy.connect(),
    query: async (text, values) => {
      const result = await viaProxy.query(text, values);
      answered.push(text);
      return result;
    },
  };
  const queue = new PostgresWorkQueue({ pool: watched, schema, name, maxRetries: 3, pollMs: 60_000 });
  await queue.add("a");
  await queue.add("b");
  const leaseA = (await queue.get()) as Lease;
  const leaseB = (await queue.get()) as Lease;
  await queue.add("a"); // while in flight: a is dirty
  await queue.addAfter("c", 60_000);
  const looked = answered.length;
  const waiting = rejection(queue.take()); // nothing is queued: it waits on its listening connection
  while (!answered.slice(looked).some((text) => text.includes(".views("))) await sleep(10); // it looked: it sleeps
  const before = await stateOf(name);
  expect(before.queued).toEqual([]);
  expect(before.items.map((row) => [row.item, row.in_flight, row.dirty])).toEqual([
    ["a", true, true],
    ["b", true, false],
    ["c", false, false],
  ]);

  await proxy.cut();
  const refused = `connect ECONNREFUSED 127.0.0.1:${proxy.port}`;
  const taken = await waiting;
  expect(taken).toBeInstanceOf(DatabaseUnavailableError);
  expect((taken as Error).message).toBe(`take could not reach PostgreSQL: ${refused}`);
  await emptied(viaProxy);
  const calls: [string, () => Promise<unknown>][] = [
    ["add", () => queue.add("d")],
    ["addAfter", () => queue.addAfter("d", 10)],
    ["get", () => queue.get()],
    ["take", () => queue.take()],
    ["done", () => queue.done(leaseA)],
    ["retry", () => queue.retry(leaseB)],
    ["forget", () => queue.forget(leaseB)],
    ["extend", () => queue.extend(leaseA)],
    ["size", () => queue.size()],
    ["inFlight", () => queue.inFlight()],
    ["waiting", () => queue.waiting()],
    ["shuttingDown", () => queue.shuttingDown()],
    ["failures", () => queue.failures("b")],
    ["shutDown", () => queue.shutDown()],
  ];
  for (const [verb, call] of calls) {
    const error = await rejection(call());
    expect(error, verb).toBeInstanceOf(DatabaseUnavailableError);
    expect((error as Error).message).toBe(`${verb} could not reach PostgreSQL: ${refused}`);
    expect((error as Error & { cause: { code?: unknown } }).cause.code).toBe("ECONNREFUSED");
  }
  expect(await stateOf(name)).toEqual(before);

  await proxy.reopen();
  expect([await queue.size(), await queue.inFlight(), await queue.waiting(), await queue.shuttingDown()]).toEqual([
    0,
    2,
    1,
    false,
  ]);
  expect(await queue.retry(leaseB)).toBe(true); // the leases outlived the outage: b counts its failure
  await queue.done(leaseB);
  await queue.done(leaseA); // a, added while in flight, is queued again
  const handled: string[] = [];
  for (let lease = await queue.get(); lease !== undefined; lease = await queue.get()) {
    await queue.forget(lease);
    await queue.done(lease);
    handled.push(lease.item);
  }
  expect(handled).toEqual(["b", "a"]);
  await queue.add("d");
  expect(await queue.take()).toMatchObject({ item: "d" }); // it listens again
  expect([await queue.waiting(), await queue.failures("b")]).toEqual([1, 0]);
  await queue.close();
});

test("a done in progress when the database goes away rejects with DatabaseUnavailableError and is applied whole or not at all; made again once the database is back, it leaves the item queued once", async () => {
  const { proxy, viaProxy } = await throughProxy();
  const name = freshName();
  const queue = new PostgresWorkQueue({ pool: viaProxy, schema, name, maxRetries: 3 });
  await queue.add("a");
  const lease = (await queue.get()) as Lease;
  await queue.add("a"); // while in flight: the done queues it again
  const before = await stateOf(name);
  // Another session holds a's row, so the done waits on it inside its transaction when the database goes away.
  const blocker = await pool.connect();
  await blocker.query("begin");
  await blocker.query(`select from "${schema}".items where queue = $1 and item = 'a' for update`, [name]);
  const doing = rejection(queue.done(lease));
  // The queue's statement, and not these looks at pg_stat_activity, whose text names the function too.
  const theDone = `query like 'select * from "${schema}".done(%'`;
  const blocked = `select pid from pg_stat_activity where wait_event_type = 'Lock' and ${theDone}`;
  while ((await pool.query(blocked)).rowCount === 0) await sleep(10);
  await proxy.cut();
  const error = await doing;
  await blocker.query("commit");
  blocker.release();
  expect(error).toBeInstanceOf(DatabaseUnavailableError);
  expect((error as Error).message).toBe("done could not reach PostgreSQL: Connection terminated unexpectedly");
  // The server ends the done's backend once it finds its client gone: after the lock is free, at the latest.
  const running = `select pid from pg_stat_activity where ${theDone}`;
  while ((await pool.query(running)).rowCount !== 0) await sleep(10);
  const after = await stateOf(name);
  const applied = after.queued.length === 1;
  console.log(`the done cut off by the outage was ${applied ? "applied whole" : "not applied"}`);
  if (applied) {
    expect(after.queued).toEqual(["a"]);
    expect(after.items.map((row) => [row.item, row.in_flight, row.dirty, row.lease])).toEqual([
      ["a", false, false, "finished"],
    ]);
  } else {
    expect(after).toEqual(before);
  }

  await proxy.reopen();
  // §20.8: a done may be made again as it is; when the first was applied, the lease ended and the second is refused
  const again = await rejection(queue.done(lease));
  expect(again).toEqual(applied ? new StaleLeaseError("done", "a", lease.token) : "resolved");
  expect([await queue.size(), await queue.inFlight()]).toEqual([1, 0]);
  expect((await queue.get())?.item).toBe("a");
});

test("a database that is down when the queue starts: its first call rejects at once with DatabaseUnavailableError naming the refused connection, and the same queue works once the database is up", async () => {
  const { proxy, viaProxy } = await throughProxy();
  await proxy.cut();
  const name = freshName();
  const queue = new PostgresWorkQueue({ pool: viaProxy, schema, name, maxRetries: 3 });
  const refused = `connect ECONNREFUSED 127.0.0.1:${proxy.port}`;
  const added = await rejection(queue.add("a"));
  expect(added).toBeInstanceOf(DatabaseUnavailableError);
  expect((added as Error).message).toBe(`add could not reach PostgreSQL: ${refused}`);
  const taken = await rejection(queue.take());
  expect(taken).toBeInstanceOf(DatabaseUnavailableError);
  expect((taken as Error).message).toBe(`take could not reach PostgreSQL: ${refused}`);
  expect(await stateOf(name)).toEqual({ items: [], queued: [], queues: [] });

  await proxy.reopen();
  await queue.add("a");
  expect(await queue.take()).toMatchObject({ item: "a" });
  expect(await queue.inFlight()).toBe(1);
  await queue.close();
});

test("a take whose LISTEN fails rejects — with DatabaseUnavailableError on a lost connection, with the error itself otherwise — discards that client once, also when it reported the loss too, and the next take listens on a new one", async () => {
  const lost = Object.assign(new Error("read ECONNRESET"), { code: "ECONNRESET" });
  const denied = Object.assign(new Error("permission denied"), { code: "42501" });
  // How the first LISTEN of each connection fails: rejects with an error, after the client emitted it or not.
  const failures: [Error, boolean][] = [
    [lost, false],
    [lost, true],
    [denied, false],
  ];
  const releases: ReturnType<typeof vi.spyOn>[] = [];
  const watched: PoolLike = {
    query: (text, values) => pool.query(text, values),
    async connect() {
      const client = await pool.connect();
      releases.push(vi.spyOn(client, "release"));
      const failure = failures.shift();
      if (failure !== undefined) {
        const [error, emitted] = failure;
        vi.spyOn(client, "query").mockImplementationOnce(() => {
          if (emitted) client.emit("error", error);
          return Promise.reject(error);
        });
      }
      return client;
    },
  };
  const queue = new PostgresWorkQueue({ pool: watched, schema, name: freshName(), maxRetries: 3, pollMs: 60_000 });
  for (const expected of [
    new DatabaseUnavailableError("take", lost),
    new DatabaseUnavailableError("take", lost),
    denied,
  ]) {
    const error = await rejection(queue.take());
    expect(error).toBeInstanceOf(expected.constructor);
    expect((error as Error).message).toBe(expected.message);
    expect(releases.at(-1)?.mock.calls).toEqual([[true]]);
  }
  await queue.add("a");
  expect(await queue.take()).toMatchObject({ item: "a" });
  expect(releases).toHaveLength(4);
  await queue.close();
  expect(releases.at(-1)?.mock.calls).toEqual([[true]]);
});

test("a database that stops answering without a reset: on a pool with query_timeout and connectionTimeoutMillis, a call rejects with DatabaseUnavailableError, close resolves, and the leases the instance held come back", async () => {
  const { proxy, viaProxy } = await throughProxy({ query_timeout: 300, connectionTimeoutMillis: 300 });
  const name = freshName();
  const queue = new PostgresWorkQueue({ pool: viaProxy, schema, name, maxRetries: 3, prefetch: 5, leaseMs: 1_000 });
  const direct = new PostgresWorkQueue({ pool, schema, name, maxRetries: 3 });
  for (const item of ["a", "b", "c", "d"]) await direct.add(item);
  const lease = (await queue.take()) as Lease;
  expect([lease.item, await direct.inFlight()]).toEqual(["a", 4]); // a leased, b, c and d buffered
  proxy.stall();
  const error = await rejection(queue.done(lease));
  expect(error).toBeInstanceOf(DatabaseUnavailableError);
  expect((error as Error).message).toBe("done could not reach PostgreSQL: Query read timeout");
  await queue.close(); // its release of the buffered leases times out too, and is left to their expiry
  proxy.resume();
  // Nothing was lost: what the stalled instance held is handed out again once its leases expired (a, unless its
  // done reached the server after all).
  await direct.shutDown();
  const handled: string[] = [];
  try {
    for await (const again of direct) {
      handled.push(again.item);
      await direct.done(again);
    }
    expect([await direct.size(), await direct.inFlight()]).toEqual([0, 0]);
  } finally {
    await direct.close(); // its listening connection is the suite pool's, which the suite ends
  }
  expect(handled.filter((item) => item !== "a").sort()).toEqual(["b", "c", "d"]);
  expect(handled.filter((item) => item === "a").length).toBeLessThanOrEqual(1);
});
