/**
 * What `PostgresWorkQueue` sends for each call and how it reads each function's answer (docs/spec.md §9, §12, §13,
 * §20.4, §20.5), without a database: the pool answers each function from a script and records each statement, so a
 * mutant that sends the wrong values or misreads an answer fails here at once, before the suites on the server.
 */
import { expect, test, vi } from "vitest";
import { VirtualClock } from "../../../src/index.js";
import { type PoolLike, PostgresWorkQueue, StaleLeaseError } from "../../../src/postgres/index.js";

type Row = Record<string, unknown>;

/**
 * A pool whose `query` answers the function a statement calls with `answers[function](values)`, and rejects one it
 * has no answer for; it records each statement's text and values. Its listening client is `connecting`'s, and
 * records each `release`.
 */
function scripted(answers: Record<string, (values: unknown[]) => Row[]>) {
  const statements: { readonly fn: string; readonly text: string; readonly values: unknown[] }[] = [];
  const released: unknown[] = [];
  const client = {
    query: async () => ({ rows: [] }),
    on: () => client,
    release: (error?: unknown) => {
      released.push(error);
    },
  };
  const state = { connecting: async () => client as unknown };
  const pool = {
    query: async (text: string, values: unknown[] = []) => {
      const fn = /^select \* from "workqueue"\.(\w+)\(/.exec(text)?.[1] ?? text;
      statements.push({ fn, text, values });
      const answer = answers[fn];
      if (answer === undefined) throw new Error(`no answer for ${text}`);
      return { rows: answer(values) };
    },
    connect: () => state.connecting(),
  } as unknown as PoolLike;
  return { pool, statements, released, state, fns: () => statements.map((each) => each.fn) };
}

/** A views row: the counts given, not shut down, with no next event unless given. */
function views(size: number, inFlight: number, waiting: number, nextEvent: number | null = null): Row {
  return { size, in_flight: inFlight, waiting, shutting_down: false, next_event: nextEvent };
}

test("extend sends the lease and leaseMs, answers the new expiry, and throws StaleLeaseError naming extend when the function answers null", async () => {
  let expiry: number | null = 5_000;
  const db = scripted({ extend: () => [{ extend: expiry }] });
  const queue = new PostgresWorkQueue({ pool: db.pool, name: "q", maxRetries: 3, leaseMs: 700 });
  await expect(queue.extend({ item: "a", token: 4, expiresAt: 1 })).resolves.toEqual({
    item: "a",
    token: 4,
    expiresAt: 5_000,
  });
  expect(db.statements).toEqual([
    { fn: "extend", text: 'select * from "workqueue".extend($1, $2, $3, $4, $5)', values: ["q", "a", 4, null, 700] },
  ]);
  expiry = null;
  const refused = await queue.extend({ item: "a", token: 4, expiresAt: 1 }).catch((e: unknown) => e);
  expect(refused).toBeInstanceOf(StaleLeaseError);
  expect(refused).toMatchObject({ item: "a", token: 4 });
  expect((refused as Error).message).toMatch(/^extend\("a"\) refused: /);
  await queue.close();
});

test("an extend with token 0 of an item whose lease is buffered gives that lease back before it extends", async () => {
  const db = scripted({
    lease_many: () => ["a", "b"].map((item, i) => ({ item, token: 1, expires_ms: 30_000, queued_position: i })),
    release_many: () => [],
    extend: () => [{ extend: null }],
  });
  const queue = new PostgresWorkQueue({ pool: db.pool, name: "q", maxRetries: 3, prefetch: 1 });
  expect((await queue.get())?.item).toBe("a");
  await expect(queue.extend({ item: "b", token: 0, expiresAt: 0 })).rejects.toBeInstanceOf(StaleLeaseError);
  expect(db.fns()).toEqual(["lease_many", "release_many", "extend"]);
  expect(db.statements[1]?.values.slice(0, 3)).toEqual(["q", ["b"], [1]]);
  await queue.close();
});

test("each view reads its own column of the views, naming itself in an error", async () => {
  let fail = false;
  const row = { size: "3", in_flight: "2", waiting: "1", shutting_down: true, next_event: null };
  const db = scripted({
    views: () => {
      if (fail) throw Object.assign(new Error("read ECONNRESET"), { code: "ECONNRESET" });
      return [row];
    },
  });
  const queue = new PostgresWorkQueue({ pool: db.pool, name: "q", maxRetries: 3 });
  const read = () => Promise.all([queue.size(), queue.inFlight(), queue.waiting(), queue.shuttingDown()]);
  expect(await read()).toEqual([3, 2, 1, true]);
  expect(db.statements.map((each) => [each.text, each.values])).toEqual(
    Array(4).fill(['select * from "workqueue".views($1, $2)', ["q", null]]),
  );
  row.shutting_down = false;
  expect(await queue.shuttingDown()).toBe(false);
  fail = true;
  const errors = await Promise.all(
    [queue.size(), queue.inFlight(), queue.waiting(), queue.shuttingDown()].map((call) =>
      call.catch((e: unknown) => (e as Error).message),
    ),
  );
  expect(errors).toEqual(
    ["size", "inFlight", "waiting", "shuttingDown"].map(
      (verb) => `${verb} could not reach PostgreSQL: read ECONNRESET`,
    ),
  );
  await queue.close();
});

test("failures sends the queue and the item and answers the count as a number; shutDown sends the queue", async () => {
  const db = scripted({ failures: () => [{ failures: "4" }], shut_down: () => [{ shut_down: null }] });
  const queue = new PostgresWorkQueue({ pool: db.pool, name: "q", maxRetries: 3 });
  expect(await queue.failures("a")).toBe(4);
  await queue.shutDown();
  expect(db.statements.map((each) => [each.text, each.values])).toEqual([
    ['select * from "workqueue".failures($1, $2)', ["q", "a"]],
    ['select * from "workqueue".shut_down($1)', ["q"]],
  ]);
  await queue.close();
});

test("a drain resolves only at the look whose views show nothing queued, in flight or waiting", async () => {
  const answered = [views(1, 1, 0), views(1, 0, 1), views(0, 1, 1), views(0, 0, 0)];
  const db = scripted({
    shut_down: () => [],
    views: () => {
      const row = answered.shift();
      if (row === undefined) throw new Error("a look after the views showed nothing left");
      return [row];
    },
  });
  const queue = new PostgresWorkQueue({ pool: db.pool, name: "q", maxRetries: 3, pollMs: 1 });
  await queue.shutDownWithDrain();
  expect(db.fns()).toEqual(["shut_down", "views", "views", "views", "views"]);
  await queue.close();
});

test("a drain whose views name a next event asks its clock to wake it then, and resolves at that look", async () => {
  const answered = [views(0, 1, 0, 1_100), views(0, 0, 0)];
  let looked: () => void = () => {};
  const first = new Promise<void>((resolve) => {
    looked = resolve;
  });
  const db = scripted({
    shut_down: () => [],
    views: () => {
      looked();
      const row = answered.shift();
      if (row === undefined) throw new Error("a look after the views showed nothing left");
      return [row];
    },
  });
  const clock = new VirtualClock(1_000);
  const schedule = vi.spyOn(clock, "schedule");
  const queue = new PostgresWorkQueue({ pool: db.pool, name: "q", maxRetries: 3, clock, pollMs: 3_600_000 });
  const drained = queue.shutDownWithDrain();
  await first;
  await new Promise((resolve) => setImmediate(resolve));
  expect(schedule).toHaveBeenCalledWith(1_100, expect.any(Function));
  clock.advance(100);
  await drained;
  expect(db.fns()).toEqual(["shut_down", "views", "views"]);
  await queue.close();
});

test("close discards the listening client, refuses every later call without a statement, and a second close does nothing", async () => {
  const db = scripted({ get: () => [{ item: "a", token: 1, expires_ms: 30_000, queued_for_ms: 0 }] });
  const queue = new PostgresWorkQueue({ pool: db.pool, name: "q", maxRetries: 3 });
  expect((await queue.take())?.item).toBe("a");
  await queue.close();
  expect(db.released).toEqual([true]);
  await expect(queue.size()).rejects.toThrow('size refused: the queue "q" was closed');
  await expect(queue.add("b")).rejects.toThrow('add refused: the queue "q" was closed');
  expect(db.fns()).toEqual(["get"]);
  await queue.close();
  expect(db.released).toEqual([true]);
});

test("close of a queue that never listened resolves and releases nothing", async () => {
  const db = scripted({});
  const queue = new PostgresWorkQueue({ pool: db.pool, name: "q", maxRetries: 3 });
  await queue.close();
  expect(db.released).toEqual([]);
  expect(db.statements).toEqual([]);
});

test("close while the listening client is being connected, and the connection fails, resolves; the take rejects", async () => {
  const db = scripted({});
  let refuse: (error: Error) => void = () => {};
  db.state.connecting = () =>
    new Promise((_, reject) => {
      refuse = reject;
    });
  const queue = new PostgresWorkQueue({ pool: db.pool, name: "q", maxRetries: 3 });
  const taken = queue.take().catch((e: unknown) => (e as Error).message);
  await new Promise((resolve) => setImmediate(resolve));
  const closed = queue.close();
  refuse(Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" }));
  await expect(closed).resolves.toBeUndefined();
  expect(await taken).toBe("take could not reach PostgreSQL: connect ECONNREFUSED");
  expect(db.released).toEqual([]);
});
