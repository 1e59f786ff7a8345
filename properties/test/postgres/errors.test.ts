/**
 * What each verb of the PostgreSQL queue makes of an error of the database (docs/spec.md §20.8), on the machine's
 * server with faults injected between the queue and its pool: a lost connection becomes a DatabaseUnavailableError
 * that names the verb, a deadlock is made again, any other error is passed on as it is, and the listening connection
 * is given up, made again and closed as §20.10 says.
 */
import { getEventListeners } from "node:events";
import type pg from "pg";
import { afterEach, expect, test, vi } from "vitest";
import { VirtualClock } from "../../../src/index.js";
import {
  DatabaseUnavailableError,
  type PoolLike,
  PostgresWorkQueue,
  StaleLeaseError,
} from "../../../src/postgres/index.js";
import { channelOf } from "../../../src/postgres/schema.js";
import { freshName, freshSchema } from "./database.js";

const { pool, schema } = freshSchema("errors");

afterEach(() => {
  vi.restoreAllMocks();
});

/** A pool that passes every statement to the real one, except that it throws the errors queued for a function. */
function faulty(inner: pg.Pool) {
  const faults: { readonly function: string; readonly error: unknown }[] = [];
  const calls: string[] = [];
  const connect = vi.fn(() => inner.connect());
  const spy: PoolLike = {
    connect,
    async query(text: string, values?: unknown[]) {
      const called = /^select \* from "[^"]+"\.([a-z_]+)\(/.exec(text)?.[1] ?? text;
      calls.push(called);
      const index = faults.findIndex((fault) => fault.function === called);
      if (index >= 0) {
        const [fault] = faults.splice(index, 1);
        throw fault?.error;
      }
      return inner.query(text, values);
    },
  };
  return {
    pool: spy,
    connect,
    /** The schema's functions called, in order. */
    calls,
    /** Throws `error` the next time `fn` is called. */
    fail(fn: string, error: unknown, times = 1): void {
      for (let i = 0; i < times; i++) faults.push({ function: fn, error });
    },
  };
}

/** An error as `pg` throws it: a message and, for a server's error, its SQLSTATE. */
function pgError(message: string, code?: string): Error {
  return Object.assign(new Error(message), code === undefined ? {} : { code });
}

const lost = pgError("read ECONNRESET", "ECONNRESET");

test("each verb reports a lost connection as DatabaseUnavailableError naming that verb, with what pg threw as its cause", async () => {
  const db = faulty(pool);
  const queue = new PostgresWorkQueue({ pool: db.pool, schema, name: freshName(), maxRetries: 3 });
  await queue.add("a");
  const lease = await queue.get();
  if (lease === undefined) throw new Error("nothing handed out");
  const calls: [string, string, () => Promise<unknown>][] = [
    ["add", "add", () => queue.add("b")],
    ["addAfter", "add_after", () => queue.addAfter("b", 10)],
    ["get", "get", () => queue.get()],
    ["take", "get", () => queue.take()], // the take's own get fails: the error names the take
    ["take", "views", () => queue.take()], // the take's get finds nothing; its look at the views fails
    ["done", "done", () => queue.done(lease)],
    ["retry", "retry", () => queue.retry(lease)],
    ["forget", "forget", () => queue.forget(lease)],
    ["extend", "extend", () => queue.extend(lease)],
    ["size", "views", () => queue.size()],
    ["inFlight", "views", () => queue.inFlight()],
    ["waiting", "views", () => queue.waiting()],
    ["shuttingDown", "views", () => queue.shuttingDown()],
    ["failures", "failures", () => queue.failures("a")],
    ["shutDown", "shut_down", () => queue.shutDown()],
  ];
  for (const [verb, fn, call] of calls) {
    db.fail(fn, lost);
    const error = await call().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error, verb).toBeInstanceOf(DatabaseUnavailableError);
    expect((error as Error).name).toBe("DatabaseUnavailableError");
    expect((error as Error).message).toBe(`${verb} could not reach PostgreSQL: read ECONNRESET`);
    expect((error as Error).cause).toBe(lost);
  }
  // Nothing was applied by the calls that failed: a is still the one item in flight, under the same lease.
  expect([await queue.size(), await queue.inFlight(), await queue.waiting(), await queue.shuttingDown()]).toEqual([
    0,
    1,
    0,
    false,
  ]);
  expect(await queue.failures("a")).toBe(0);
  await queue.done(lease);
  db.fail("views", lost);
  await expect(queue.shutDownWithDrain()).rejects.toThrow(
    new DatabaseUnavailableError("shutDownWithDrain", lost).message,
  );
  await queue.close();
});

test("every error code and message of a lost or refused connection counts as unavailable, and a cause that is no Error is printed as a string", async () => {
  const db = faulty(pool);
  const queue = new PostgresWorkQueue({ pool: db.pool, schema, name: freshName(), maxRetries: 3 });
  const unavailable: unknown[] = [
    ...[
      "ECONNREFUSED",
      "ECONNRESET",
      "ETIMEDOUT",
      "EPIPE",
      "ENOTFOUND",
      "EAI_AGAIN",
      "EHOSTUNREACH",
      "ENETUNREACH",
      "ERR_INVALID_URL",
      "57P01",
      "57P02",
      "57P03",
      "3D000",
      "28000",
      "28P01",
    ].map((code) => pgError(`failed: ${code}`, code)),
    pgError("Connection terminated unexpectedly"),
    pgError("timeout expired: Connection Timeout"),
    pgError("Client has encountered a connection error and is not queryable"),
    pgError("Query read timeout"),
    pgError("timeout exceeded when trying to connect"),
    { code: "ECONNREFUSED" },
  ];
  for (const error of unavailable) {
    db.fail("views", error);
    const thrown = await queue.size().catch((e: unknown) => e);
    expect(thrown, JSON.stringify(error)).toBeInstanceOf(DatabaseUnavailableError);
    expect((thrown as Error).cause).toBe(error);
  }
  db.fail("views", { code: "ECONNREFUSED" });
  await expect(queue.size()).rejects.toThrow(/^size could not reach PostgreSQL: \[object Object\]$/);
});

test("an error of a statement — a failed check, a thrown null, a code that only looks like one — is passed on as it is, once", async () => {
  const db = faulty(pool);
  const queue = new PostgresWorkQueue({ pool: db.pool, schema, name: freshName(), maxRetries: 3 });
  const failed: unknown[] = [
    pgError('new row for relation "items" violates check constraint', "23514"),
    pgError("canceling statement due to statement timeout", "57014"),
    pgError("unknown", "econnreset"),
    pgError("a connection to nowhere"),
    { code: 57 },
    null,
  ];
  for (const error of failed) {
    db.fail("add", error);
    const before = db.calls.length;
    const thrown = await queue.add("a").then(
      () => "added",
      (e: unknown) => e,
    );
    expect(thrown).toBe(error);
    expect(db.calls.length - before).toBe(1);
  }
  expect(await queue.size()).toBe(0);
});

test("a call aborted by a deadlock is made again, up to five times, and the fifth deadlock is passed on", async () => {
  const db = faulty(pool);
  const queue = new PostgresWorkQueue({ pool: db.pool, schema, name: freshName(), maxRetries: 3 });
  const deadlock = pgError("deadlock detected", "40P01");
  db.fail("add", deadlock, 4);
  await queue.add("a");
  expect(db.calls.filter((fn) => fn === "add")).toHaveLength(5);
  expect(await queue.size()).toBe(1);
  db.fail("add", deadlock, 5);
  await expect(queue.add("b")).rejects.toBe(deadlock);
  expect(db.calls.filter((fn) => fn === "add")).toHaveLength(10);
  expect(await queue.size()).toBe(1);
});

test("a stale lease is refused with a StaleLeaseError that names the verb, the item and the token", async () => {
  const clock = new VirtualClock();
  const queue = new PostgresWorkQueue({ pool, schema, name: freshName(), maxRetries: 3, clock, leaseMs: 100 });
  await queue.add("a");
  const lease = await queue.get();
  if (lease === undefined) throw new Error("nothing handed out");
  clock.advance(100);
  expect(await queue.get()).toMatchObject({ item: "a", token: lease.token + 1 });
  for (const verb of ["done", "retry", "forget", "extend"] as const) {
    const error = await queue[verb](lease).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StaleLeaseError);
    expect(error).toMatchObject({ name: "StaleLeaseError", item: "a", token: lease.token });
    expect((error as Error).message).toBe(
      `${verb}("a") refused: the lease with token ${lease.token} expired, was done or was superseded; nothing changed`,
    );
  }
});

test("a take whose listening connection cannot be made rejects, and the next take connects again", async () => {
  const db = faulty(pool);
  const queue = new PostgresWorkQueue({ pool: db.pool, schema, name: freshName(), maxRetries: 3, pollMs: 60_000 });
  db.connect.mockRejectedValueOnce(lost);
  await expect(queue.take()).rejects.toThrow(new DatabaseUnavailableError("take", lost).message);
  await queue.add("a");
  await expect(queue.take()).resolves.toMatchObject({ item: "a" });
  expect(db.connect).toHaveBeenCalledTimes(2);
  await queue.close();
});

test("a listening connection that fails is discarded by its pool, not given back, and the waiting take listens on a new one", async () => {
  const db = faulty(pool);
  const clients: { client: pg.PoolClient; release: ReturnType<typeof vi.spyOn> }[] = [];
  db.connect.mockImplementation(async () => {
    const client = await pool.connect();
    clients.push({ client, release: vi.spyOn(client, "release") });
    return client;
  });
  const name = freshName();
  const queue = new PostgresWorkQueue({ pool: db.pool, schema, name, maxRetries: 3, pollMs: 60_000 });
  const taking = queue.take();
  await vi.waitFor(() => expect(clients).toHaveLength(1));
  const [first] = clients;
  first?.client.emit("error", new Error("the listening connection broke"));
  expect(first?.release).toHaveBeenCalledWith(true);
  await vi.waitFor(() => expect(clients).toHaveLength(2));
  await new PostgresWorkQueue({ pool, schema, name, maxRetries: 3 }).add("a");
  await expect(taking).resolves.toMatchObject({ item: "a" });
  await queue.close();
  expect(clients[1]?.release).toHaveBeenCalledWith(true);
});

test("close while the listening connection is being made, and it fails, resolves; the waiting take rejects as closed", async () => {
  const db = faulty(pool);
  let refuse: (error: Error) => void = () => {};
  db.connect.mockImplementationOnce(
    () =>
      new Promise((_, reject) => {
        refuse = reject;
      }),
  );
  const queue = new PostgresWorkQueue({ pool: db.pool, schema, name: freshName(), maxRetries: 3 });
  const taking = queue.take().catch((e: unknown) => e);
  await vi.waitFor(() => expect(db.connect).toHaveBeenCalledTimes(1));
  const closing = queue.close();
  refuse(lost);
  await expect(closing).resolves.toBeUndefined();
  expect(await taking).toBeInstanceOf(DatabaseUnavailableError);
  await expect(queue.close()).resolves.toBeUndefined();
  await expect(queue.size()).rejects.toThrow(/^size refused: the queue "queue-\d+" was closed$/);
});

/** Wakes the waiting takes of queue `name` as an add of another process would, without queueing anything. */
async function notify(name: string): Promise<void> {
  await pool.query("select pg_notify($1, $2)", [channelOf(schema), name]);
}

test("a waiting take leaves no timer and no abort listener behind each time it is woken and looks again", async () => {
  const setTimer = vi.spyOn(globalThis, "setTimeout");
  const clearTimer = vi.spyOn(globalThis, "clearTimeout");
  const name = freshName();
  const queue = new PostgresWorkQueue({ pool, schema, name, maxRetries: 3, pollMs: 987_654 });
  const controller = new AbortController();
  const taking = queue.take({ signal: controller.signal });
  const polls = () => setTimer.mock.results.filter((_, i) => setTimer.mock.calls[i]?.[1] === 987_654);
  for (let round = 1; round <= 3; round++) {
    await vi.waitFor(() => expect(polls()).toHaveLength(round));
    expect(getEventListeners(controller.signal, "abort")).toHaveLength(1);
    await notify(name);
  }
  await vi.waitFor(() => expect(polls()).toHaveLength(4));
  controller.abort(new Error("withdrawn"));
  await expect(taking).rejects.toThrow("withdrawn");
  const cleared = new Set(clearTimer.mock.calls.map(([handle]) => handle));
  expect(polls().filter((poll) => !cleared.has(poll.value))).toEqual([]);
  expect(getEventListeners(controller.signal, "abort")).toHaveLength(0);
  await queue.close();
});

test("a take waiting on an injected clock wakes at the lease's expiry only, and cancels that wake-up when woken first", async () => {
  const clock = new VirtualClock(1_000);
  const schedule = vi.spyOn(clock, "schedule");
  const db = faulty(pool);
  const name = freshName();
  const queue = new PostgresWorkQueue({
    pool: db.pool,
    schema,
    name,
    maxRetries: 3,
    clock,
    leaseMs: 500,
    pollMs: 60_000,
  });
  const first = queue.take();
  await vi.waitFor(() => expect(db.calls).toContain("views")); // it looked, found nothing, and sleeps
  await queue.add("a");
  const lease = await first;
  expect(schedule).not.toHaveBeenCalled(); // nothing was in flight or waiting while it waited
  const second = queue.take();
  await vi.waitFor(() => expect(schedule).toHaveBeenCalledTimes(1));
  expect(schedule.mock.calls[0]?.[0]).toBe(lease?.expiresAt);
  await notify(name);
  await vi.waitFor(() => expect(schedule).toHaveBeenCalledTimes(2));
  expect(clock.pending).toBe(1);
  clock.advance(500);
  await expect(second).resolves.toMatchObject({ item: "a", token: (lease?.token ?? 0) + 1 });
  await queue.close();
});
