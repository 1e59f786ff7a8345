/**
 * What `PostgresWorkQueue` sends for each call, how it batches the calls made while one of their kind is in flight,
 * and how it reads each function's answer (docs/spec.md §4–§9, §12, §13, §20.1–§20.5, §20.8, §20.18), without a
 * database: the pool answers each function from a script and records each statement, so a mutant that sends the
 * wrong values or misreads an answer fails here at once, before the suites on the server.
 */
import { expect, test, vi } from "vitest";
import { VirtualClock } from "../../../src/index.js";
import { type PoolLike, PostgresWorkQueue, StaleLeaseError } from "../../../src/postgres/index.js";
import { channelOf } from "../../../src/postgres/schema.js";

type Row = Record<string, unknown>;

/**
 * A pool whose `query` answers the function a statement calls with `answers[function](values)`, and rejects one it
 * has no answer for; it records each statement's text and values. `connect` answers `state.connecting()`, by
 * default a new listening client, which records what it is asked and each `release`, fails its `listen` with
 * `state.listenError` when set, and whose events `emit` sends. A take that never sleeps (a mutant) looks without end
 * on answers that take no macrotask: the pool fails its 21st look instead.
 */
function scripted(answers: Record<string, (values: unknown[]) => Row[]>) {
  const statements: { readonly fn: string; readonly text: string; readonly values: unknown[] }[] = [];
  const released: unknown[] = [];
  const listened: string[] = [];
  const clients: { emit: (event: string, value: unknown) => void }[] = [];
  const state: { connecting: () => Promise<unknown>; listenError: unknown } = {
    connecting: async () => {
      const handlers: Record<string, ((value: unknown) => void)[]> = {};
      const client = {
        query: async (text: string) => {
          listened.push(text);
          if (state.listenError !== undefined) throw state.listenError;
          return { rows: [] };
        },
        on: (event: string, handler: (value: unknown) => void) => {
          handlers[event] = [...(handlers[event] ?? []), handler];
          return client;
        },
        release: (error?: unknown) => {
          released.push(error);
        },
      };
      clients.push({
        emit: (event, value) => {
          for (const handler of handlers[event] ?? []) handler(value);
        },
      });
      return client;
    },
    listenError: undefined,
  };
  const pool = {
    query: async (text: string, values: unknown[] = []) => {
      const fn = /^select \* from "workqueue"\.(\w+)\(/.exec(text)?.[1] ?? text;
      statements.push({ fn, text, values });
      const answer = answers[fn];
      if (fn === "views" && statements.filter((each) => each.fn === "views").length > 20) {
        throw new Error("more than 20 looks: the take or drain did not sleep");
      }
      if (answer === undefined) throw new Error(`no answer for ${text}`);
      return { rows: answer(values) };
    },
    connect: () => state.connecting(),
  } as unknown as PoolLike;
  return { pool, statements, released, listened, clients, state, fns: () => statements.map((each) => each.fn) };
}

/** Waits for the calls already made, and the macrotask after them. */
const turn = () => new Promise((resolve) => setImmediate(resolve));

/** Holds `db`'s next connection of the listening client until the function returned is called, then connects it. */
function heldConnecting(db: ReturnType<typeof scripted>): () => void {
  const connect = db.state.connecting;
  let connected: () => void = () => {};
  db.state.connecting = () =>
    new Promise((resolve) => {
      connected = () => resolve(connect());
    });
  return () => connected();
}

/** Holds `db`'s next connection of the listening client until the function returned fails it with its error. */
function failingConnecting(db: ReturnType<typeof scripted>): (error: Error) => void {
  let refuse: (error: Error) => void = () => {};
  db.state.connecting = () =>
    new Promise((_, reject) => {
      refuse = reject;
    });
  return (error) => refuse(error);
}

/** Whether `promise` settled after the calls already made, and the macrotask after them, ran. */
async function settledNow(promise: Promise<unknown>): Promise<boolean> {
  let settled = false;
  const mark = () => {
    settled = true;
  };
  void promise.then(mark, mark);
  await turn();
  return settled;
}

/** A views row: the counts given, not shut down, with no next event unless given. */
function views(size: number, inFlight: number, waiting: number, nextEvent: number | null = null): Row {
  return { size, in_flight: inFlight, waiting, shutting_down: false, next_event: nextEvent };
}

/** An answer that gives `rows` one at a time, one a statement, and fails a statement after the last. */
function inTurn(rows: Row[]): () => Row[] {
  return () => {
    const row = rows.shift();
    if (row === undefined) throw new Error("a look after the views showed nothing left");
    return [row];
  };
}

/** lease_many's rows for `items`, in that order, each under token 1 and fresh for 30 s. */
function leased(items: readonly string[]): Row[] {
  return items.map((item, i) => ({ item, token: 1, expires_ms: 30_000, queued_position: i }));
}

// First, on a pool that answers after a macrotask: a mutant that makes every error again spins without end, which in a
// later test, whose pool fails a statement at once, would block the event loop.
test("an error of a statement that is no deadlock is passed on as it is, after one statement", async () => {
  const failed = Object.assign(new Error("permission denied for function failures"), { code: "42501" });
  let statements = 0;
  const pool = {
    query: async () => {
      statements += 1;
      await turn();
      throw failed;
    },
    connect: async () => undefined,
  } as unknown as PoolLike;
  const queue = new PostgresWorkQueue({ pool, name: "q", maxRetries: 3 });
  const error = queue.failures("a").catch((e: unknown) => e);
  expect(await settledNow(error)).toBe(true);
  expect(await error).toBe(failed);
  expect(statements).toBe(1);
  await queue.close();
});

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
    lease_many: () => leased(["a", "b"]),
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

test("shutDown and a drain name themselves when they cannot reach the database", async () => {
  const lost = () => {
    throw Object.assign(new Error("read ECONNRESET"), { code: "ECONNRESET" });
  };
  const db = scripted({ shut_down: lost });
  const queue = new PostgresWorkQueue({ pool: db.pool, name: "q", maxRetries: 3 });
  await expect(queue.shutDown()).rejects.toThrow(/^shutDown could not reach PostgreSQL: read ECONNRESET$/);
  const drained = scripted({ shut_down: () => [], views: lost });
  const draining = new PostgresWorkQueue({ pool: drained.pool, name: "q", maxRetries: 3 });
  await expect(draining.shutDownWithDrain()).rejects.toThrow(
    /^shutDownWithDrain could not reach PostgreSQL: read ECONNRESET$/,
  );
  await Promise.all([queue.close(), draining.close()]);
});

test("a drain resolves only at the look whose views show nothing queued, in flight or waiting", async () => {
  const answered = [views(1, 1, 0), views(1, 0, 1), views(0, 1, 1), views(0, 0, 0)];
  const db = scripted({
    shut_down: () => [],
    views: inTurn(answered),
  });
  const queue = new PostgresWorkQueue({ pool: db.pool, name: "q", maxRetries: 3, pollMs: 1 });
  await queue.shutDownWithDrain();
  expect(db.fns()).toEqual(["shut_down", "views", "views", "views", "views"]);
  await queue.close();
});

test("a drain whose views name a next event asks its clock to wake it then, and resolves at that look", async () => {
  const answered = [views(0, 1, 0, 1_100), views(0, 0, 0)];
  const db = scripted({
    shut_down: () => [],
    views: inTurn(answered),
  });
  const clock = new VirtualClock(1_000);
  const schedule = vi.spyOn(clock, "schedule");
  const queue = new PostgresWorkQueue({ pool: db.pool, name: "q", maxRetries: 3, clock, pollMs: 3_600_000 });
  const drained = queue.shutDownWithDrain();
  await turn();
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
  const refuse = failingConnecting(db);
  const queue = new PostgresWorkQueue({ pool: db.pool, name: "q", maxRetries: 3 });
  const taken = queue.take().catch((e: unknown) => (e as Error).message);
  await new Promise((resolve) => setImmediate(resolve));
  const closed = queue.close();
  refuse(Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" }));
  await expect(closed).resolves.toBeUndefined();
  expect(await taken).toBe("take could not reach PostgreSQL: connect ECONNREFUSED");
  expect(db.released).toEqual([]);
});

test("a take on a shut-down queue answers undefined only at the look whose views show nothing queued, waiting or in flight", async () => {
  const shut = (row: Row): Row => ({ ...row, shutting_down: true });
  const answered = [shut(views(0, 1, 1)), shut(views(1, 0, 1)), shut(views(0, 0, 0))];
  const db = scripted({
    get: () => [],
    views: inTurn(answered),
  });
  const queue = new PostgresWorkQueue({ pool: db.pool, name: "q", maxRetries: 3, pollMs: 1 });
  await expect(queue.take()).resolves.toBeUndefined();
  expect(db.fns()).toEqual(["get", "views", "get", "views", "get", "views"]);
  await queue.close();
});

test("close while a drain waits rejects the drain, naming shutDownWithDrain, not take", async () => {
  const db = scripted({ shut_down: () => [], views: () => [views(0, 1, 0)] });
  const queue = new PostgresWorkQueue({ pool: db.pool, name: "q", maxRetries: 3, pollMs: 3_600_000 });
  const drained = queue.shutDownWithDrain().catch((e: unknown) => (e as Error).message);
  await turn();
  expect(db.fns()).toEqual(["shut_down", "views"]);
  await queue.close();
  expect(await drained).toBe('shutDownWithDrain refused: the queue "q" was closed');
  expect(db.fns()).toEqual(["shut_down", "views"]);
});

test("a drain and a take waiting on one listening client that cannot connect each reject naming their own call", async () => {
  const db = scripted({ shut_down: () => [] });
  const refuse = failingConnecting(db);
  const queue = new PostgresWorkQueue({ pool: db.pool, name: "q", maxRetries: 3 });
  const drained = queue.shutDownWithDrain().then(
    () => new Error("the drain resolved"),
    (e: unknown) => e as Error,
  );
  await turn();
  const taken = queue.take().then(
    () => new Error("the take resolved"),
    (e: unknown) => e as Error,
  );
  await turn();
  const cut = Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" });
  refuse(cut);
  const [drain, take] = [await drained, await taken];
  expect([drain.message, take.message]).toEqual([
    "shutDownWithDrain could not reach PostgreSQL: connect ECONNREFUSED",
    "take could not reach PostgreSQL: connect ECONNREFUSED",
  ]);
  expect([drain.cause, take.cause]).toEqual([cut, cut]);
  expect(db.fns()).toEqual(["shut_down"]);
  await queue.close();
});

/** A metrics sink that records each count and observation. */
function recording() {
  const seen: string[] = [];
  return {
    seen,
    sink: {
      add: () => seen.push("add"),
      retry: () => seen.push("retry"),
      observeQueueDuration: (ms: number) => seen.push(`queued ${ms}`),
      observeWorkDuration: (ms: number) => seen.push(`worked ${ms}`),
      staleCall: () => seen.push("stale"),
    },
  };
}

test("adds made while one is in flight go out as one add_many of each item once; the sink counts what each statement changed", async () => {
  const db = scripted({ add: () => [{ changed: 1 }], add_many: () => [{ changed: 2 }] });
  const metrics = recording();
  const queue = new PostgresWorkQueue({ pool: db.pool, name: "q", maxRetries: 3, metrics: metrics.sink });
  await Promise.all(["a", "b", "c", "b"].map((item) => queue.add(item)));
  expect(db.statements.map((each) => [each.text, each.values])).toEqual([
    ['select * from "workqueue".add($1, $2, $3) changed', ["q", "a", null]],
    ['select * from "workqueue".add_many($1, $2, $3) changed', ["q", ["b", "c"], null]],
  ]);
  expect(metrics.seen).toEqual(["add", "add", "add"]);
  await queue.close();
});

test("an add or addAfter of an item whose lease is buffered sends nothing; of another item, its statement", async () => {
  const db = scripted({
    lease_many: () => leased(["a", "b"]),
    add: () => [{ changed: 1 }],
    add_after: () => [],
    release_many: () => [],
  });
  const clock = new VirtualClock(1_000);
  const queue = new PostgresWorkQueue({ pool: db.pool, name: "q", maxRetries: 3, prefetch: 1, clock });
  expect((await queue.get())?.item).toBe("a");
  await queue.add("b");
  await queue.addAfter("b", 10);
  await queue.add("c");
  await queue.addAfter("c", 10);
  expect(db.statements.map((each) => [each.fn, each.values])).toEqual([
    ["lease_many", ["q", 1_000, 30_000, 2]],
    ["add", ["q", "c", 1_000]],
    ["add_after", ["q", "c", 1_000, 10]],
  ]);
  await queue.close();
});

test("dones, retries and forgets made while one of their kind is in flight go out as one _many call, each answering its own row", async () => {
  const answer = (values: unknown[]) =>
    (values[1] as string[]).map((item) => ({ answer: item === "b" ? "stale" : "ok" }));
  const db = scripted({
    done: () => [{ answer: "ok", worked_ms: 7 }],
    done_many: (values) => answer(values).map((row) => ({ ...row, worked_ms: 8 })),
    retry: () => [{ answer: "requeued" }],
    retry_many: (values) => (values[1] as string[]).map((item) => ({ answer: item === "b" ? "gave up" : "requeued" })),
    forget: () => [{ answer: "ok" }],
    forget_many: answer,
  });
  const metrics = recording();
  const queue = new PostgresWorkQueue({
    pool: db.pool,
    name: "q",
    maxRetries: 3,
    backoff: { baseMs: 5, maxMs: 100 },
    metrics: metrics.sink,
  });
  const leases = ["a", "b", "c"].map((item, i) => ({ item, token: i + 1, expiresAt: 0 }));
  const settle = (calls: Promise<unknown>[]) =>
    Promise.all(
      calls.map((call) =>
        call.then(
          (value) => value ?? "ok",
          (e: unknown) => (e as Error).name,
        ),
      ),
    );
  expect(await settle(leases.map((lease) => queue.retry(lease)))).toEqual([true, false, true]);
  expect(await settle(leases.map((lease) => queue.forget(lease)))).toEqual(["ok", "StaleLeaseError", "ok"]);
  expect(await settle(leases.map((lease) => queue.done(lease)))).toEqual(["ok", "StaleLeaseError", "ok"]);
  expect(db.statements.map((each) => [each.text, each.values])).toEqual([
    ['select * from "workqueue".retry($1, $2, $3, $4, $5, $6, $7) answer', ["q", "a", 1, null, 3, 5, 100]],
    ['select * from "workqueue".retry_many($1, $2, $3, $4, $5, $6, $7)', ["q", ["b", "c"], [2, 3], null, 3, 5, 100]],
    ['select * from "workqueue".forget($1, $2, $3, $4) answer', ["q", "a", 1, null]],
    ['select * from "workqueue".forget_many($1, $2, $3, $4)', ["q", ["b", "c"], [2, 3], null]],
    ['select * from "workqueue".done($1, $2, $3, $4) answer', ["q", "a", 1, null]],
    ['select * from "workqueue".done_many($1, $2, $3, $4)', ["q", ["b", "c"], [2, 3], null]],
  ]);
  expect(metrics.seen).toEqual(["retry", "retry", "stale", "worked 7", "stale", "worked 8"]);
  await queue.close();
});

test("dones beside one with token 0 of an item whose lease is buffered give the buffered leases of their items back first", async () => {
  const db = scripted({
    lease_many: () => leased(["a", "b", "c"]),
    release_many: () => [],
    done: () => [{ answer: "ok" }],
    done_many: () => [{ answer: "ok" }, { answer: "ok" }],
  });
  const queue = new PostgresWorkQueue({ pool: db.pool, name: "q", maxRetries: 3, prefetch: 2 });
  expect((await queue.get())?.item).toBe("a");
  await Promise.all([
    queue.done({ item: "x", token: 7, expiresAt: 0 }),
    queue.done({ item: "b", token: 5, expiresAt: 0 }),
    queue.done({ item: "c", token: 0, expiresAt: 0 }),
  ]);
  expect(db.fns()).toEqual(["lease_many", "done", "release_many", "done_many"]);
  expect(db.statements[2]?.values.slice(0, 3)).toEqual(["q", ["b", "c"], [1, 1]]);
  await queue.close();
});

test("a get whose buffer's fill leased nothing answers undefined; an addAfter without a buffer sends its statement", async () => {
  const db = scripted({ lease_many: () => [], add_after: () => [] });
  const buffering = new PostgresWorkQueue({ pool: db.pool, name: "q", maxRetries: 3, prefetch: 2 });
  expect(await buffering.get()).toBeUndefined();
  const plain = new PostgresWorkQueue({ pool: db.pool, name: "p", maxRetries: 3 });
  await plain.addAfter("a", 10);
  expect(db.statements.map((each) => [each.text, each.values])).toEqual([
    ['select * from "workqueue".lease_many($1, $2, $3, $4)', ["q", null, 30_000, 3]],
    ['select * from "workqueue".add_after($1, $2, $3, $4)', ["p", "a", null, 10]],
  ]);
  await Promise.all([buffering.close(), plain.close()]);
});

test("a retry without a backoff sends nulls for it; a finish alone is one finish_many", async () => {
  const db = scripted({ retry: () => [{ answer: "requeued" }], finish_many: () => [{ forgot: "ok", answer: "ok" }] });
  const queue = new PostgresWorkQueue({ pool: db.pool, name: "q", maxRetries: Number.POSITIVE_INFINITY });
  expect(await queue.retry({ item: "a", token: 1, expiresAt: 0 })).toBe(true);
  await queue.finish({ item: "a", token: 1, expiresAt: 0 });
  expect(db.statements.map((each) => [each.text, each.values])).toEqual([
    [
      'select * from "workqueue".retry($1, $2, $3, $4, $5, $6, $7) answer',
      ["q", "a", 1, null, Number.POSITIVE_INFINITY, null, null],
    ],
    ['select * from "workqueue".finish_many($1, $2, $3, $4)', ["q", ["a"], [1], null]],
  ]);
  await queue.close();
});

test("a done with token 0 of an item whose lease is buffered gives that lease back first; one with a token sends at once", async () => {
  const db = scripted({
    lease_many: () => leased(["a", "b", "c"]),
    release_many: () => [],
    done: () => [{ answer: "ok" }],
  });
  const queue = new PostgresWorkQueue({ pool: db.pool, name: "q", maxRetries: 3, prefetch: 2 });
  expect((await queue.get())?.item).toBe("a");
  await queue.done({ item: "b", token: 5, expiresAt: 0 });
  expect(db.fns()).toEqual(["lease_many", "done"]);
  await queue.done({ item: "c", token: 0, expiresAt: 0 });
  expect(db.fns()).toEqual(["lease_many", "done", "release_many", "done"]);
  expect(db.statements[2]?.values.slice(0, 3)).toEqual(["q", ["c"], [1]]);
  await queue.close();
});

test("gets made while one is in flight go out as one get_many for their count; each answers its own row or undefined", async () => {
  const row = (item: string) => ({ item, token: "9", expires_ms: 40_000, queued_for_ms: item.length });
  const db = scripted({ get: () => [row("a")], get_many: () => [row("bb")] });
  const metrics = recording();
  const queue = new PostgresWorkQueue({ pool: db.pool, name: "q", maxRetries: 3, leaseMs: 600, metrics: metrics.sink });
  const got = await Promise.all([queue.get(), queue.get(), queue.get()]);
  expect(got).toEqual([
    { item: "a", token: 9, expiresAt: 40_000 },
    { item: "bb", token: 9, expiresAt: 40_000 },
    undefined,
  ]);
  expect(db.statements.map((each) => [each.text, each.values])).toEqual([
    ['select * from "workqueue".get($1, $2, $3)', ["q", null, 600]],
    ['select * from "workqueue".get_many($1, $2, $3, $4)', ["q", null, 600, 2]],
  ]);
  expect(metrics.seen).toEqual(["queued 1", "queued 2"]);
  await queue.close();
});

test("a statement the server aborted to break a deadlock is made again, five times in all", async () => {
  let failing = 4;
  const deadlock = Object.assign(new Error("deadlock detected"), { code: "40P01" });
  const db = scripted({
    failures: () => {
      if (failing > 0) {
        failing -= 1;
        throw deadlock;
      }
      return [{ failures: 0 }];
    },
  });
  const queue = new PostgresWorkQueue({ pool: db.pool, name: "q", maxRetries: 3 });
  expect(await queue.failures("a")).toBe(0);
  expect(db.statements).toHaveLength(5);
  failing = 5;
  await expect(queue.failures("a")).rejects.toBe(deadlock);
  expect(db.statements).toHaveLength(10);
  await queue.close();
});

test("for await takes a lease per step until take answers undefined", async () => {
  const queued = ["a", "b"];
  const db = scripted({
    get: () => {
      const item = queued.shift();
      return item === undefined ? [] : [{ item, token: 1, expires_ms: 30_000, queued_for_ms: 0 }];
    },
    views: () => [{ ...views(0, 0, 0), shutting_down: true }],
  });
  const queue = new PostgresWorkQueue({ pool: db.pool, name: "q", maxRetries: 3 });
  const taken: unknown[] = [];
  for await (const lease of queue) {
    taken.push(lease?.item);
    if (taken.length > 3) break; // a loop that does not end at undefined
  }
  expect(taken).toEqual(["a", "b"]);
  await queue.close();
});

test("the views count this object's buffered leases as queued, not in flight", async () => {
  const db = scripted({
    lease_many: () => leased(["a", "b", "c"]),
    views: () => [views(1, 3, 0)],
    release_many: () => [],
  });
  const queue = new PostgresWorkQueue({ pool: db.pool, name: "q", maxRetries: 3, prefetch: 2 });
  expect((await queue.get())?.item).toBe("a");
  expect([await queue.size(), await queue.inFlight()]).toEqual([3, 1]);
  await queue.close();
});

test("a take listens on the schema's channel; a notification naming the queue wakes every sleeping take and drain, one naming another queue none", async () => {
  const db = scripted({ views: () => [views(0, 1, 0)], shut_down: () => [], get: () => [] });
  const queue = new PostgresWorkQueue({ pool: db.pool, name: "q", maxRetries: 3, pollMs: 3_600_000 });
  const drained = queue.shutDownWithDrain().catch((e: unknown) => e);
  const taken = queue.take().catch((e: unknown) => e);
  await turn();
  expect(db.listened).toEqual([`listen "${channelOf("workqueue")}"`]);
  const looks = () => db.fns().filter((fn) => fn === "views").length;
  expect(looks()).toBe(2);
  db.clients[0]?.emit("notification", { channel: channelOf("workqueue"), payload: "other" });
  db.clients[0]?.emit("notification", { channel: channelOf("workqueue"), payload: "+other" });
  await turn();
  expect(looks()).toBe(2);
  db.clients[0]?.emit("notification", { channel: channelOf("workqueue"), payload: "q" });
  await turn();
  expect(looks()).toBe(4);
  await queue.close();
  expect(await settledNow(Promise.all([drained, taken]))).toBe(true);
});

test("a listening client that fails is discarded once, and the waiting take listens again on a new one", async () => {
  const db = scripted({ views: () => [views(0, 1, 0)], get: () => [] });
  const queue = new PostgresWorkQueue({ pool: db.pool, name: "q", maxRetries: 3, pollMs: 3_600_000 });
  const taken = queue.take().catch((e: unknown) => e);
  await turn();
  expect(db.clients).toHaveLength(1);
  db.clients[0]?.emit("error", new Error("the connection broke"));
  db.clients[0]?.emit("error", new Error("and again"));
  expect(db.released).toEqual([true]);
  await turn();
  expect(db.clients).toHaveLength(2);
  expect(db.fns().filter((fn) => fn === "views")).toHaveLength(2);
  await queue.close();
  expect(db.released).toEqual([true, true]);
  expect(await settledNow(taken)).toBe(true);
});

test("a take whose listen fails discards the client and rejects, naming the take when the database is unreachable; the next take connects again", async () => {
  const db = scripted({ get: () => [{ item: "a", token: 1, expires_ms: 30_000, queued_for_ms: 0 }] });
  const queue = new PostgresWorkQueue({ pool: db.pool, name: "q", maxRetries: 3 });
  const lost = Object.assign(new Error("read ECONNRESET"), { code: "ECONNRESET" });
  db.state.listenError = lost;
  await expect(queue.take()).rejects.toThrow(/^take could not reach PostgreSQL: read ECONNRESET$/);
  const other = new Error("permission denied");
  db.state.listenError = other;
  await expect(queue.take()).rejects.toBe(other);
  expect(db.released).toEqual([true, true]);
  db.state.listenError = undefined;
  expect((await queue.take())?.item).toBe("a");
  expect(db.clients).toHaveLength(3);
  await queue.close();
});

test("a take whose pool cannot connect rejects naming the take", async () => {
  const db = scripted({});
  db.state.connecting = async () => {
    throw Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" });
  };
  const queue = new PostgresWorkQueue({ pool: db.pool, name: "q", maxRetries: 3 });
  await expect(queue.take()).rejects.toThrow(/^take could not reach PostgreSQL: connect ECONNREFUSED$/);
  await queue.close();
});

test("close while the listening client connects, which then succeeds, rejects the take as closed without a look", async () => {
  const db = scripted({});
  const connected = heldConnecting(db);
  const queue = new PostgresWorkQueue({ pool: db.pool, name: "q", maxRetries: 3 });
  const taken = queue.take().catch((e: unknown) => (e as Error).message);
  await turn();
  const closed = queue.close();
  connected();
  await closed;
  expect(await taken).toBe('take refused: the queue "q" was closed');
  expect(db.statements).toEqual([]);
  expect(db.released).toEqual([true]);
});

test("a refused done, retry or forget names its verb; a done whose function gives no work duration observes none", async () => {
  const db = scripted({
    done: (values) => [values[2] === 1 ? { answer: "ok", worked_ms: null } : { answer: "stale" }],
    retry: () => [{ answer: "stale" }],
    forget: () => [{ answer: "stale" }],
  });
  const metrics = recording();
  const queue = new PostgresWorkQueue({ pool: db.pool, name: "q", maxRetries: 3, metrics: metrics.sink });
  await queue.done({ item: "a", token: 1, expiresAt: 0 });
  const lease = { item: "a", token: 2, expiresAt: 0 };
  const refused = await Promise.all(
    [queue.done(lease), queue.retry(lease), queue.forget(lease)].map((call) =>
      call.then(
        () => "resolved",
        (e: unknown) => (e as Error).message,
      ),
    ),
  );
  expect(refused.map((message) => message.replace(/ refused: .*/, ""))).toEqual([
    'done("a")',
    'retry("a")',
    'forget("a")',
  ]);
  expect(metrics.seen).toEqual(["stale", "stale", "stale"]);
  await queue.close();
});

test("close while a take with an aborted signal connects rejects the take as closed", async () => {
  const db = scripted({});
  const connected = heldConnecting(db);
  const queue = new PostgresWorkQueue({ pool: db.pool, name: "q", maxRetries: 3 });
  const controller = new AbortController();
  const taken = queue.take({ signal: controller.signal }).catch((e: unknown) => (e as Error).message);
  await turn();
  const closed = queue.close();
  controller.abort(new Error("withdrawn"));
  connected();
  await closed;
  expect(await taken).toBe('take refused: the queue "q" was closed');
});

test("a notification of one item queued wakes the oldest sleeping take only", async () => {
  const db = scripted({ views: () => [views(0, 1, 0)], get: () => [] });
  const queue = new PostgresWorkQueue({ pool: db.pool, name: "q", maxRetries: 3, pollMs: 3_600_000 });
  const taken = [queue.take(), queue.take()].map((take) => take.catch((e: unknown) => e));
  await turn();
  const looks = () => db.fns().filter((fn) => fn === "views").length;
  expect(looks()).toBe(2);
  db.clients[0]?.emit("notification", { channel: channelOf("workqueue"), payload: "+q" });
  await turn();
  expect(looks()).toBe(3);
  await queue.close();
  expect(await settledNow(Promise.all(taken))).toBe(true);
});

test("the gauges are one metrics statement, with this object's buffered leases counted in the depth", async () => {
  const db = scripted({
    lease_many: () => leased(["a", "b", "c"]),
    metrics: () => [{ depth: "1", unfinished_ms: 5, longest_ms: 6, expired: "2" }],
    release_many: () => [],
  });
  let read: () => Promise<unknown> = async () => undefined;
  const sink = { ...recording().sink, connectShared: (gauges: () => Promise<unknown>) => (read = gauges) };
  const queue = new PostgresWorkQueue({ pool: db.pool, name: "q", maxRetries: 3, prefetch: 2, metrics: sink });
  expect((await queue.get())?.item).toBe("a");
  expect(await read()).toEqual({ depth: 3, unfinishedWorkMs: 5, longestRunningMs: 6, expiredLeases: 2 });
  expect(db.statements.slice(1).map((each) => [each.text, each.values])).toEqual([
    ['select * from "workqueue".metrics($1, $2)', ["q", null]],
  ]);
  await queue.close();
});

test("a call on a schema without the queue's functions throws SchemaNotMigratedError naming the call and the schema", async () => {
  const db = scripted({
    failures: () => {
      throw Object.assign(new Error("function workqueue.failures does not exist"), { code: "42883" });
    },
  });
  const queue = new PostgresWorkQueue({ pool: db.pool, name: "q", maxRetries: 3 });
  await expect(queue.failures("a")).rejects.toThrow(/^failures found no queue in the schema "workqueue" \(/);
  expect(db.statements).toHaveLength(1);
  await queue.close();
});

test("a fill that buffers a surplus wakes a sleeping take, which is handed a buffered lease at once", async () => {
  const fills = [[], ["a", "b", "c"]];
  const db = scripted({
    lease_many: () => leased(fills.shift() ?? []),
    views: () => [views(0, 0, 0)],
    release_many: () => [],
  });
  const queue = new PostgresWorkQueue({ pool: db.pool, name: "q", maxRetries: 3, prefetch: 2, pollMs: 3_600_000 });
  const taken = queue.take();
  await turn();
  expect(db.fns()).toEqual(["lease_many", "views"]);
  expect((await queue.get())?.item).toBe("a");
  expect(await settledNow(taken)).toBe(true);
  expect((await taken)?.item).toBe("b");
  await queue.close();
});

test("a get and a take whose get cannot reach the database each name themselves", async () => {
  const db = scripted({
    get: () => {
      throw Object.assign(new Error("read ECONNRESET"), { code: "ECONNRESET" });
    },
  });
  const queue = new PostgresWorkQueue({ pool: db.pool, name: "q", maxRetries: 3 });
  await expect(queue.get()).rejects.toThrow(/^get could not reach PostgreSQL: read ECONNRESET$/);
  await expect(queue.take()).rejects.toThrow(/^take could not reach PostgreSQL: read ECONNRESET$/);
  await queue.close();
});
