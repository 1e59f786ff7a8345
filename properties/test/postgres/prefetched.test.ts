/**
 * The statements and the time of the buffer of prefetched leases (docs/spec.md §20.18), without a database: a fill
 * is one `lease_many` of the calls waiting and `size` more, a direct lease one `get` (`get_many` for several calls
 * waiting) that buffers nothing, a give-back one `release_many` with each lease's place,
 * a lease is fresh while half of `leaseMs` is left — on the queue's clock when it has one, otherwise from when its
 * fill was sent — and a lease's queue duration counts on the same time.
 */
import { expect, test, vi } from "vitest";
import { VirtualClock } from "../../../src/index.js";
import { type PrefetchingQueue, prefetchBuffer, queuedFor } from "../../../src/postgres/prefetched.js";

/** A queue object whose `lease_many` answers `rows`; it logs every statement and every wake. */
function fakeQueue(clock: VirtualClock | undefined, rows: Record<string, unknown>[]) {
  const log: unknown[] = [];
  const queue: PrefetchingQueue = {
    name: "q",
    leaseMs: 100,
    clock,
    now: () => clock?.now() ?? null,
    async call(verb, sql, values) {
      log.push([verb, sql, values]);
      return rows.splice(0);
    },
    async callClosing(verb, sql, values) {
      log.push(["closing", verb, sql, values]);
      return [];
    },
    wakeTake: () => log.push("wake"),
  };
  return { queue, log };
}

/**
 * What `next` answers, once the callbacks already due ran (a macrotask): the fake statements answer within
 * microtasks, so a fill that never answers fails here at once instead of leaving the test waiting.
 */
async function answered<T>(next: Promise<T>): Promise<T> {
  const pending = Symbol("pending");
  const outcome = await Promise.race([next, new Promise<typeof pending>((resolve) => setImmediate(resolve, pending))]);
  if (outcome === pending) throw new Error("the buffer did not answer once its statements had");
  return outcome as T;
}

const row = (item: string, token: string, expiresMs: number, queuedMs: number, position: string) => ({
  item,
  token,
  expires_ms: expiresMs,
  queued_for_ms: 7,
  queued_ms: queuedMs,
  queued_position: position,
});

test("on a clock, a fill is one lease_many of the calls waiting and size more at the clock's time; a lease is fresh until half of leaseMs is left", async () => {
  const clock = new VirtualClock(1_000);
  const { queue, log } = fakeQueue(clock, [row("a", "11", 1_100, 990, "5"), row("b", "12", 1_100, 995, "6")]);
  const buffer = prefetchBuffer(3, queue);
  const a = await answered(buffer.next("take"));
  expect(a).toEqual({
    item: "a",
    lease: { item: "a", token: 11, expiresAt: 1_100 },
    freshUntil: 1_050,
    queuedMs: 990,
    position: 5,
    queuedForMs: 7,
    answeredAt: 1_000,
  });
  expect(log[0]).toEqual(["take", "lease_many($1, $2, $3, $4)", ["q", 1_000, 100, 4]]);
  clock.advance(15);
  expect(queuedFor(a as NonNullable<typeof a>, clock)).toBe(25); // from its place on the clock
  await new Promise((resolve) => setTimeout(resolve, 0));
  expect(log.slice(1)).toEqual(["wake"]); // b is buffered: a take of the object may want it
  clock.advance(35); // 1_050: b is still fresh
  expect((await answered(buffer.next("get")))?.lease.token).toBe(12);
});

test("a give-back is one release_many of the items, tokens and places, sent also once the object is closed", async () => {
  const clock = new VirtualClock(0);
  const { queue, log } = fakeQueue(clock, [row("a", "1", 100, 0, "1"), row("b", "2", 100, 0, "2")]);
  const buffer = prefetchBuffer(1, queue);
  await answered(buffer.next("get"));
  await buffer.releaseAll();
  expect(log.at(-1)).toEqual(["closing", "release", "release_many($1, $2, $3, $4, $5)", ["q", ["b"], [2], [0], [2]]]);
});

test("on a clock, the buffer gives back a lease by itself when the clock passes its freshUntil", async () => {
  const clock = new VirtualClock(0);
  const { queue, log } = fakeQueue(clock, [row("a", "1", 100, 0, "1"), row("b", "2", 100, 0, "2")]);
  const buffer = prefetchBuffer(1, queue);
  await answered(buffer.next("get"));
  await new Promise((resolve) => setTimeout(resolve, 0));
  expect([buffer.count, clock.pending]).toEqual([1, 1]); // the timer is the clock's
  clock.advance(51); // the timer runs at its time, 50, when the lease is still fresh, and is set again
  await new Promise((resolve) => setTimeout(resolve, 0));
  clock.advance(1); // it runs again, now at 52: the lease is no longer fresh
  await new Promise((resolve) => setTimeout(resolve, 0));
  expect(buffer.count).toBe(0);
  expect((log.at(-1) as unknown[]).slice(0, 2)).toEqual(["closing", "release"]);
});

test("without a clock, the database's time is used, a lease is fresh for half of leaseMs from when its fill was sent, and its queue duration adds the process's time since the fill", async () => {
  const { queue, log } = fakeQueue(undefined, [row("a", "1", 123_456, 0, "1"), row("b", "2", 123_456, 0, "2")]);
  const before = performance.now();
  const buffer = prefetchBuffer(1, queue);
  const a = await answered(buffer.next("get"));
  const after = performance.now();
  expect((log[0] as unknown[])[2]).toEqual(["q", null, 100, 2]);
  if (a === undefined) throw new Error("nothing handed out");
  expect(a.freshUntil).toBeGreaterThanOrEqual(before + 50);
  expect(a.freshUntil).toBeLessThanOrEqual(after + 50);
  expect(a.answeredAt).toBeGreaterThanOrEqual(before);
  expect(a.answeredAt).toBeLessThanOrEqual(after);
  const duration = queuedFor(a, undefined);
  expect(duration).toBeGreaterThanOrEqual(7);
  expect(duration).toBeLessThanOrEqual(7 + performance.now() - a.answeredAt);
  await buffer.releaseAll(); // b: the timer is stopped
});

test("without a clock, the buffer gives back a lease by itself once half of leaseMs passed", async () => {
  const { queue, log } = fakeQueue(undefined, [row("a", "1", 0, 0, "1"), row("b", "2", 0, 0, "2")]);
  const buffer = prefetchBuffer(1, queue);
  await answered(buffer.next("get"));
  expect(buffer.count).toBe(1);
  const deadline = performance.now() + 5_000; // a bounded wait: the give-back is due 50 ms after the fill
  while (buffer.count > 0 && performance.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
  expect(buffer.count).toBe(0);
  expect((log.at(-1) as unknown[]).slice(0, 2)).toEqual(["closing", "release"]);
});

test("without a clock, the timer is set for when the head stops being fresh, at most setTimeout's longest delay, and cleared when the buffer is given back", async () => {
  const delays: number[] = [];
  const spy = vi.spyOn(globalThis, "setTimeout");
  const cleared = vi.spyOn(globalThis, "clearTimeout");
  try {
    for (const leaseMs of [100, 2 ** 33]) {
      const { queue } = fakeQueue(undefined, [row("a", "1", 0, 0, "1"), row("b", "2", 0, 0, "2")]);
      const buffer = prefetchBuffer(1, { ...queue, leaseMs });
      spy.mockClear();
      await answered(buffer.next("get"));
      await new Promise((resolve) => setImmediate(resolve));
      delays.push(...spy.mock.calls.map((call) => call[1] as number));
      const timer = spy.mock.results[0]?.value;
      cleared.mockClear();
      await buffer.releaseAll();
      expect(cleared).toHaveBeenCalledWith(timer);
    }
  } finally {
    spy.mockRestore();
    cleared.mockRestore();
  }
  expect(delays).toHaveLength(2);
  expect(delays[0]).toBeGreaterThan(40); // half of 100 ms from the fill, less the time the fill took
  expect(delays[0]).toBeLessThanOrEqual(50);
  expect(delays[1]).toBe(2 ** 31 - 1);
});

test("on a clock, a direct lease for a call alone is one get at the clock's time, buffers nothing, and its queue duration counts from the clock's time less queued_for_ms", async () => {
  const clock = new VirtualClock(1_000);
  const { queue, log } = fakeQueue(clock, [row("a", "11", 1_100, 0, "5")]);
  const buffer = prefetchBuffer(3, queue);
  const a = await answered(buffer.next("take", true));
  expect(log[0]).toEqual(["take", "get($1, $2, $3)", ["q", 1_000, 100]]);
  expect(a).toEqual({
    item: "a",
    lease: { item: "a", token: 11, expiresAt: 1_100 },
    freshUntil: 1_000,
    queuedMs: 993, // queued 7 ms before the clock's time of the get
    position: Number.NaN, // never buffered, so never given back
    queuedForMs: 7,
    answeredAt: 1_000,
  });
  expect(buffer.count).toBe(0);
  clock.advance(15);
  expect(queuedFor(a as NonNullable<typeof a>, clock)).toBe(22);
});

test("a direct lease for several calls waiting is one get_many of as many, each answered in order; without a clock it is at the database's time and has no place", async () => {
  const { queue, log } = fakeQueue(undefined, [row("a", "1", 0, 0, "1"), row("b", "2", 0, 0, "2")]);
  const buffer = prefetchBuffer(3, queue);
  let endTurn = () => {};
  const turn = buffer.shared(() => new Promise<void>((resolve) => (endTurn = resolve)));
  await new Promise((resolve) => setImmediate(resolve)); // the shared turn runs: the direct statement waits for it
  const calls = [buffer.next("get", true), buffer.next("get", true)];
  endTurn();
  await turn;
  const [a, b] = await Promise.all(calls.map(answered));
  expect(log).toEqual([["get", "get_many($1, $2, $3, $4)", ["q", null, 100, 2]]]);
  expect([a?.item, b?.item]).toEqual(["a", "b"]);
  expect([a?.queuedMs, a?.position, a?.queuedForMs]).toEqual([Number.NaN, Number.NaN, 7]);
  expect(buffer.count).toBe(0);
});
