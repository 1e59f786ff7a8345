/**
 * How a sleeping `take` or drain of `PostgresWorkQueue` is woken by its own object (docs/spec.md §14, §13 and
 * §20.10), at once and without a notification: by `shutDown`, `close`, its abort, a take that ends and passes the
 * wake on. Without a database: the pool answers each statement itself, so a mutant that leaves a take asleep fails
 * here within a macrotask, before the suites on the server wait out their time limits.
 */
import { expect, test, vi } from "vitest";
import { VirtualClock } from "../../../src/index.js";
import { type PoolLike, PostgresWorkQueue } from "../../../src/postgres/index.js";
import { channelOf } from "../../../src/postgres/schema.js";
import { tracked } from "./tracked.js";

/**
 * A pool that answers without a database: `get` hands out the next of `queued`, if any; the views show an empty
 * queue that is shut down once `shut_down` was called. Its listening client hears only what `notify` sends. It
 * records each statement, and `asleep(n)` resolves once n looks' views were answered: the takes then sleep, which
 * only a wake ends. It answers 10 looks at most.
 */
function silent() {
  const statements: string[] = [];
  const queued: string[] = [];
  let shut = false;
  let looks = 0;
  const sleepers: { readonly looks: number; readonly wake: () => void }[] = [];
  /** The views' next event; the statements that fail as a lost connection does. */
  const state: {
    nextEvent: number | null;
    failing: RegExp | undefined;
    inFlight: number;
    afterViews: (() => void) | undefined;
  } = { nextEvent: null, failing: undefined, inFlight: 0, afterViews: undefined };
  const answer = async (text: string) => {
    statements.push(/\.(\w+)\(/.exec(text)?.[1] ?? text);
    if (state.failing?.test(text)) throw Object.assign(new Error("read ECONNRESET"), { code: "ECONNRESET" });
    if (text.includes(".shut_down(")) shut = true;
    if (text.includes(".get(")) {
      const item = queued.shift();
      return { rows: item === undefined ? [] : [{ item, token: 1, expires_ms: 30_000, queued_for_ms: 0 }] };
    }
    if (!text.includes(".views(")) return { rows: [] };
    // a take that never sleeps (a mutant) looks without end on answers that take no macrotask: it fails instead
    looks += 1;
    if (looks > 10) throw new Error("more than 10 looks: the take did not sleep");
    for (const sleeper of sleepers) if (sleeper.looks <= looks) setImmediate(sleeper.wake);
    state.afterViews?.();
    return {
      rows: [{ size: 0, in_flight: state.inFlight, waiting: 0, shutting_down: shut, next_event: state.nextEvent }],
    };
  };
  const listeners: ((message: { channel: string; payload?: string }) => void)[] = [];
  const client = {
    query: answer,
    on: (event: string, listener: (message: { channel: string; payload?: string }) => void) => {
      if (event === "notification") listeners.push(listener);
      return client;
    },
    release: () => undefined,
  };
  return {
    statements,
    queued,
    state,
    asleep: (n = 1) => new Promise<void>((wake) => sleepers.push({ looks: n, wake })),
    notify: (payload: string) => {
      for (const listener of listeners) listener({ channel: channelOf("workqueue"), payload });
    },
    pool: { query: answer, connect: async () => client } as unknown as PoolLike,
  };
}

/** Whether `promise` settled after the calls already made, and the macrotask after them, ran. */
async function settledNow(promise: Promise<unknown>): Promise<boolean> {
  const settled = tracked(promise);
  await new Promise((resolve) => setImmediate(resolve));
  return settled();
}

test("shutDown wakes this object's sleeping take itself, without a notification: it answers undefined at once", async () => {
  const db = silent();
  const queue = new PostgresWorkQueue({ pool: db.pool, name: "q", maxRetries: 3, pollMs: 3_600_000 });
  const taken = queue.take();
  await db.asleep();
  await queue.shutDown();
  expect(await settledNow(taken)).toBe(true);
  await expect(taken).resolves.toBeUndefined();
  await queue.close();
});

test("close wakes a sleeping take, which rejects as refused at once, not at its next poll", async () => {
  const db = silent();
  const queue = new PostgresWorkQueue({ pool: db.pool, name: "q", maxRetries: 3, pollMs: 3_600_000 });
  const taken = queue.take().catch((e: unknown) => e);
  await db.asleep();
  await queue.close();
  expect(await settledNow(taken)).toBe(true);
  expect(await taken).toEqual(new Error('take refused: the queue "q" was closed'));
});

test("a drain whose signal aborted before the call shuts the queue down and rejects without listening", async () => {
  const db = silent();
  const queue = new PostgresWorkQueue({ pool: db.pool, name: "q", maxRetries: 3 });
  const signal = AbortSignal.abort(new Error("at once"));
  await expect(queue.shutDownWithDrain({ signal })).rejects.toThrow("at once");
  expect(db.statements).toEqual(["shut_down"]);
  await queue.close();
});

test("a take that ends passes its wake on: one notification of items queued wakes one sleeping take, whose end wakes the next, at once", async () => {
  const db = silent();
  const queue = new PostgresWorkQueue({ pool: db.pool, name: "q", maxRetries: 3, pollMs: 3_600_000 });
  const first = queue.take();
  const second = queue.take();
  await db.asleep(2);
  db.queued.push("a", "b");
  db.notify("+q"); // one item queued, as far as this notification says
  const settled = [tracked(first), tracked(second)];
  await new Promise((resolve) => setImmediate(resolve));
  expect(settled.map((each) => each())).toEqual([true, true]);
  expect([(await first)?.item, (await second)?.item]).toEqual(["a", "b"]);
  await queue.close();
});

test("a take whose signal aborted before the call rejects with its reason without listening or asking anything", async () => {
  const db = silent();
  const queue = new PostgresWorkQueue({ pool: db.pool, name: "q", maxRetries: 3 });
  await expect(queue.take({ signal: AbortSignal.abort(new Error("at once")) })).rejects.toThrow("at once");
  expect(db.statements).toEqual([]);
  await queue.close();
});

test("a take whose signal aborts while it sleeps rejects with the reason at once, not at its next poll", async () => {
  const db = silent();
  const queue = new PostgresWorkQueue({ pool: db.pool, name: "q", maxRetries: 3, pollMs: 3_600_000 });
  const controller = new AbortController();
  const taken = queue.take({ signal: controller.signal }).catch((e: unknown) => e);
  await db.asleep();
  controller.abort(new Error("withdrawn"));
  expect(await settledNow(taken)).toBe(true);
  expect(await taken).toEqual(new Error("withdrawn"));
  await queue.close();
});

test("a take whose look found nothing asks its clock to wake it at the views' next event", async () => {
  const db = silent();
  db.state.nextEvent = 1_100;
  const clock = new VirtualClock(1_000);
  const schedule = vi.spyOn(clock, "schedule");
  const queue = new PostgresWorkQueue({ pool: db.pool, name: "q", maxRetries: 3, clock, pollMs: 3_600_000 });
  const taken = queue.take();
  await db.asleep();
  expect(schedule).toHaveBeenCalledWith(1_100, expect.any(Function));
  db.queued.push("a");
  clock.advance(100);
  await expect(taken).resolves.toMatchObject({ item: "a" });
  await queue.close();
});

test.each([
  ["look's views", /\.views\(/, 0],
  ["buffer's fill", /\.lease_many\(/, 4],
])("a take whose %s cannot reach the database rejects naming the take", async (_, failing, prefetch) => {
  const db = silent();
  db.state.failing = failing;
  const queue = new PostgresWorkQueue({ pool: db.pool, name: "q", maxRetries: 3, prefetch });
  await expect(queue.take()).rejects.toThrow(/^take could not reach PostgreSQL: read ECONNRESET$/);
  await queue.close();
});

test("a notification of an item queued wakes the sleeping take at once, not an older sleeping drain", async () => {
  const db = silent();
  db.state.inFlight = 1; // the drain and the take wait for it
  const queue = new PostgresWorkQueue({ pool: db.pool, name: "q", maxRetries: 3, pollMs: 3_600_000 });
  const drained = queue.shutDownWithDrain().catch((e: unknown) => e);
  await db.asleep(1);
  const taken = queue.take();
  await db.asleep(2);
  db.queued.push("a");
  db.notify("+q");
  const settled = [tracked(drained), tracked(taken)];
  await new Promise((resolve) => setImmediate(resolve));
  expect(settled.map((each) => each())).toEqual([false, true]);
  expect((await taken)?.item).toBe("a");
  await queue.close();
  expect(String(await drained)).toMatch(/refused: the queue "q" was closed$/); // the drain ends with the close
});

test.each([
  ["passed", 900],
  ["reached", 1_000],
])(
  "a take whose views name a next event the clock has %s looks again at once, without arming a timer for then",
  async (_, nextEvent) => {
    const db = silent();
    db.state.nextEvent = nextEvent;
    db.state.afterViews = () => db.queued.push("a"); // found by the next look
    const clock = new VirtualClock(1_000);
    const queue = new PostgresWorkQueue({ pool: db.pool, name: "q", maxRetries: 3, clock, pollMs: 3_600_000 });
    const taken = queue.take();
    const settled = tracked(taken);
    await db.asleep();
    expect(settled()).toBe(true);
    expect((await taken)?.item).toBe("a");
    await queue.close();
  },
);

test("on the database's clock, a take whose views name a next event to come sleeps until a wake", async () => {
  const db = silent();
  db.state.nextEvent = Date.now() + 3_600_000;
  const queue = new PostgresWorkQueue({ pool: db.pool, name: "q", maxRetries: 3, pollMs: 3_600_000 });
  const taken = queue.take();
  const settled = tracked(taken);
  await db.asleep();
  expect(settled()).toBe(false);
  db.queued.push("a");
  db.notify("+q");
  await expect(taken).resolves.toMatchObject({ item: "a" });
  await queue.close();
});

test.each([
  ["the database's clock", false],
  ["an injected clock", true],
])("a take woken on %s leaves no timer armed and no abort listener behind", async (_, injected) => {
  vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] }); // setImmediate stays real: the pool's turns use it
  try {
    const db = silent();
    const clock = injected ? new VirtualClock(1_000) : undefined;
    db.state.nextEvent = (clock?.now() ?? Date.now()) + 3_600_000;
    const queue = new PostgresWorkQueue({ pool: db.pool, name: "q", maxRetries: 3, clock, pollMs: 3_600_000 });
    const { signal } = new AbortController();
    const added = vi.spyOn(signal, "addEventListener");
    const removed = vi.spyOn(signal, "removeEventListener");
    const taken = queue.take({ signal });
    await db.asleep();
    expect([vi.getTimerCount(), clock?.pending ?? 0]).toEqual(injected ? [1, 1] : [2, 0]); // the poll, the event
    db.queued.push("a");
    db.notify("+q");
    expect(await settledNow(taken)).toBe(true);
    expect((await taken)?.item).toBe("a");
    expect([vi.getTimerCount(), clock?.pending ?? 0]).toEqual([0, 0]);
    expect(added.mock.calls).toEqual([["abort", expect.any(Function)]]);
    expect(removed.mock.calls).toEqual(added.mock.calls);
    await queue.close();
  } finally {
    vi.useRealTimers();
  }
});

test("on the database's clock, a sleeping take looks again when the views' next event comes, not before", async () => {
  vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] }); // setImmediate stays real: the pool's turns use it
  try {
    const db = silent();
    db.state.nextEvent = Date.now() + 60_000;
    const queue = new PostgresWorkQueue({ pool: db.pool, name: "q", maxRetries: 3, pollMs: 3_600_000 });
    const taken = queue.take().catch((e: unknown) => e);
    await db.asleep();
    const looks = () => db.statements.filter((each) => each === "views").length;
    expect(looks()).toBe(1);
    vi.advanceTimersByTime(50_000);
    await new Promise((resolve) => setImmediate(resolve));
    expect(looks()).toBe(1);
    vi.advanceTimersByTime(10_001);
    await db.asleep(2);
    expect(looks()).toBe(2);
    await queue.close();
    expect(await settledNow(taken)).toBe(true);
  } finally {
    vi.useRealTimers();
  }
});

test("a take whose signal aborts during its look rejects with the reason at once, without sleeping", async () => {
  const db = silent();
  const controller = new AbortController();
  db.state.afterViews = () => controller.abort(new Error("withdrawn during the look"));
  const queue = new PostgresWorkQueue({ pool: db.pool, name: "q", maxRetries: 3, pollMs: 3_600_000 });
  const taken = queue.take({ signal: controller.signal }).catch((e: unknown) => e);
  expect(await settledNow(taken)).toBe(true);
  expect(await taken).toEqual(new Error("withdrawn during the look"));
  expect(db.statements.filter((each) => each === "views")).toHaveLength(1);
  await queue.close();
});

test("a take sleeping on an injected clock, whose views name no next event, arms no timer on that clock", async () => {
  const db = silent();
  const clock = new VirtualClock(1_000);
  const queue = new PostgresWorkQueue({ pool: db.pool, name: "q", maxRetries: 3, clock, pollMs: 3_600_000 });
  const taken = queue.take();
  await db.asleep();
  expect(clock.pending).toBe(0);
  await queue.shutDown();
  expect(await settledNow(taken)).toBe(true);
  await queue.close();
});
