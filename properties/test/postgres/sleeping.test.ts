/**
 * How a waiting `take` or drain of `PostgresWorkQueue` sleeps between its looks (docs/spec.md §14, §13 and §20.10):
 * what it still waits for while the queue shuts down, which clock wake-up it asks for, that a close while it
 * connects is refused by name, and that a sleep it no longer needs leaves no timer and no reference behind.
 */
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { expect, test, vi } from "vitest";
import { VirtualClock } from "../../../src/index.js";
import { type PoolLike, PostgresWorkQueue } from "../../../src/postgres/index.js";
import { channelOf } from "../../../src/postgres/schema.js";
import { freshName, freshSchema } from "./database.js";
import { tracked } from "./tracked.js";

const { pool, schema } = freshSchema("sleeping");

test("a take while shutting down waits for an item that is waiting (§17.7), asking the clock to wake it at its due time", async () => {
  const clock = new VirtualClock(1_000);
  const schedule = vi.spyOn(clock, "schedule");
  const queue = new PostgresWorkQueue({ pool, schema, name: freshName(), maxRetries: 3, clock, pollMs: 60_000 });
  await queue.addAfter("a", 100);
  await queue.shutDown();
  const taken = queue.take();
  const settled = tracked(taken);
  await vi.waitFor(() => expect(schedule).toHaveBeenCalledWith(1_100, expect.any(Function)));
  expect(settled()).toBe(false);
  clock.advance(100);
  await expect(taken).resolves.toMatchObject({ item: "a" });
  await queue.close();
});

test.each([
  ["reached", 1],
  ["passed", 5],
])(
  "a take whose look ran while the clock %s the item's due time looks again at once, not only when the clock moves again",
  async (_, move) => {
    const clock = new VirtualClock(1_000);
    // the clock moves while the views of the take's first look are at the database, as a gate's clock may: to the
    // item's due time, 1_001, or past it
    let moveDuringLook = false;
    const moving = new Proxy(pool, {
      get(target, key) {
        if (key !== "query") return Reflect.get(target, key, target);
        return (text: string, values?: unknown[]) => {
          const sent = target.query(text, values);
          if (moveDuringLook && /\.views\(/.test(text)) {
            moveDuringLook = false;
            clock.advance(move);
          }
          return sent;
        };
      },
    });
    let armedInPast: (at: number) => void = () => {};
    const inPast = new Promise<number>((resolve) => {
      armedInPast = resolve;
    });
    const schedule = clock.schedule.bind(clock);
    clock.schedule = (atMs, callback) => {
      if (atMs <= clock.now()) armedInPast(atMs); // would run only at the next advance (§18.9)
      return schedule(atMs, callback);
    };
    const queue = new PostgresWorkQueue({
      pool: moving,
      schema,
      name: freshName(),
      maxRetries: 3,
      clock,
      pollMs: 60_000,
    });
    await queue.addAfter("c", 1);
    moveDuringLook = true;
    const taken = queue.take();
    const first = await Promise.race([
      taken.then((lease) => lease?.item),
      inPast.then((at) => `a timer armed for ${at}`),
    ]);
    expect(first).toBe("c");
    await queue.close();
  },
);

test("a drain waits while one item is in flight and another waiting, and asks the clock to wake it at the earlier of the due time and the expiry", async () => {
  const clock = new VirtualClock(1_000);
  const schedule = vi.spyOn(clock, "schedule");
  const name = freshName();
  const queue = new PostgresWorkQueue({ pool, schema, name, maxRetries: 3, clock, leaseMs: 500, pollMs: 60_000 });
  await queue.add("a");
  const a = await queue.get();
  await queue.addAfter("b", 200);
  const drained = queue.shutDownWithDrain();
  const settled = tracked(drained);
  await vi.waitFor(() => expect(schedule).toHaveBeenCalledWith(1_200, expect.any(Function)));
  expect(settled()).toBe(false); // size 0, in flight 1, waiting 1
  await queue.done(a as never);
  clock.advance(200);
  const b = await queue.get();
  expect(b?.item).toBe("b");
  await queue.done(b as never);
  await drained;
  await queue.close();
});

test("a take woken before the lease's expiry cancels the timer it set for that expiry on the database's clock", async () => {
  const setTimer = vi.spyOn(globalThis, "setTimeout");
  const clearTimer = vi.spyOn(globalThis, "clearTimeout");
  try {
    const queue = new PostgresWorkQueue({ pool, schema, name: freshName(), maxRetries: 3, leaseMs: 600_000 });
    await queue.add("a");
    await queue.get();
    const taken = queue.take();
    const expiries = () =>
      setTimer.mock.results.filter((_, i) => {
        const delay = setTimer.mock.calls[i]?.[1] ?? 0;
        return delay > 500_000 && delay <= 600_000;
      });
    await vi.waitFor(() => expect(expiries()).toHaveLength(1));
    await queue.add("b");
    await expect(taken).resolves.toMatchObject({ item: "b" });
    const cleared = new Set(clearTimer.mock.calls.map(([handle]) => handle));
    expect(expiries().filter((timer) => !cleared.has(timer.value))).toEqual([]);
    await queue.close();
  } finally {
    vi.restoreAllMocks();
  }
});

test("a take whose queue is closed while its listening connection is made, which then succeeds, rejects as a refused take", async () => {
  let connected: () => void = () => {};
  const slow: PoolLike = {
    query: (text, values) => pool.query(text, values),
    connect: () =>
      new Promise((resolve) => {
        connected = () => resolve(pool.connect());
      }),
  };
  const queue = new PostgresWorkQueue({ pool: slow, schema, name: freshName(), maxRetries: 3 });
  const taking = queue.take().catch((e: unknown) => e);
  const closing = queue.close();
  connected();
  await closing;
  const error = await taking;
  expect(error).toBeInstanceOf(Error);
  expect((error as Error).message).toMatch(/^take refused: the queue "queue-\d+" was closed$/);
});

test("a take or a drain aborted while it looks, before it sleeps, rejects with the reason at once, not at its next poll", async () => {
  let looking: () => void = () => {};
  let hold: Promise<void> | undefined;
  const held: PoolLike = {
    // Holds the next call of the queue's functions until the test has aborted, so the abort lands during the look.
    query: async (text, values) => {
      const wait = hold;
      if (wait !== undefined && text.includes("views(")) {
        hold = undefined;
        looking();
        await wait;
      }
      return pool.query(text, values);
    },
    connect: () => pool.connect(),
  };
  // A poll an hour away: were the abort missed, the take would wait past the test's timeout.
  const queue = new PostgresWorkQueue({ pool: held, schema, name: freshName(), maxRetries: 3, pollMs: 3_600_000 });
  try {
    for (const call of ["take", "drain"] as const) {
      let release: () => void = () => {};
      hold = new Promise((resolve) => {
        release = resolve;
      });
      const looked = new Promise<void>((resolve) => {
        looking = resolve;
      });
      const controller = new AbortController();
      const signal = controller.signal;
      if (call === "drain") await queue.add("a"); // something left, so that the drain has to wait
      const waiting = call === "take" ? queue.take({ signal }) : queue.shutDownWithDrain({ signal });
      await looked;
      controller.abort(new Error(`withdrawn ${call}`));
      release();
      await expect(waiting).rejects.toThrow(`withdrawn ${call}`);
    }
  } finally {
    await queue.close();
  }
});

test("a take that was aborted while it slept leaves nothing of itself in the queue: its signal can be collected", async () => {
  setFlagsFromString("--expose-gc");
  const gc = runInNewContext("gc") as () => void;
  const name = freshName();
  const queue = new PostgresWorkQueue({ pool, schema, name, maxRetries: 3, pollMs: 60_000 });
  try {
    const signal = await (async () => {
      const controller = new AbortController();
      const taking = queue.take({ signal: controller.signal }).catch((e: unknown) => e);
      await pool.query("select pg_notify($1, $2)", [channelOf(schema), name]); // one round woken, one asleep
      await vi.waitFor(() => expect(queue.size()).resolves.toBe(0));
      await new Promise((resolve) => setTimeout(resolve, 100));
      controller.abort(new Error("withdrawn"));
      expect(((await taking) as Error).message).toBe("withdrawn");
      return new WeakRef(controller.signal);
    })();
    for (let i = 0; i < 10 && signal.deref() !== undefined; i++) {
      await new Promise((resolve) => setTimeout(resolve, 10));
      gc();
    }
    expect(signal.deref()).toBeUndefined();
  } finally {
    await queue.close();
  }
});
