/**
 * The controller loop with backoff on the virtual clock (docs/spec.md §15, §7.3, §17): a key that fails is handled
 * again exactly its backoff later, never by two workers at once, and given up after `maxRetries` handlings; keys
 * added for later are handled when they fall due; the drain after a shutdown waits for the keys still backing off.
 */
import * as fc from "fast-check";
import { expect, test } from "vitest";
import { exponentialBackoff, runWorkers, VirtualClock, WorkQueue } from "../../../src/index.js";
import { params } from "../settings.js";
import { flush, track } from "../turns.js";

/** One key's story: how many times its handler fails before it succeeds, and when it is first asked for. */
const story = fc.record({ failures: fc.nat(6), at: fc.constantFrom(0, 0, 3, 17) });

test("runWorkers with backoff: each key is handled at its due time and each retry exactly its backoff later, alone, until it succeeds or is given up", async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.array(story, { minLength: 1, maxLength: 6 }),
      fc.integer({ min: 1, max: 5 }),
      fc.constantFrom(1, 2, 5),
      fc.constantFrom(4, 40),
      fc.integer({ min: 1, max: 3 }),
      async (stories, maxRetries, baseMs, maxMs, concurrency) => {
        const clock = new VirtualClock();
        const rateLimiter = exponentialBackoff(baseMs, maxMs);
        const queue = new WorkQueue<string>({ maxRetries, clock, rateLimiter });
        const handled = new Map<string, number[]>();
        const active = new Set<string>();
        const overlaps: string[] = [];
        const workers = runWorkers(
          queue,
          async (key) => {
            if (active.has(key)) overlaps.push(key); // an expect here would be caught by the loop as a failure
            active.add(key);
            const times = handled.get(key) ?? [];
            times.push(clock.now());
            handled.set(key, times);
            await flush();
            active.delete(key);
            const story = stories[Number(key.slice(1))] as { failures: number };
            if (times.length <= story.failures) throw new Error(`${key} fails`);
          },
          { concurrency },
        );
        for (const [i, { at }] of stories.entries()) queue.addAfter(`k${i}`, at);
        // The horizon: every key's last handling is due by then.
        const horizon = 17 + 6 * maxMs + 1;
        for (let t = 0; t <= horizon; t++) {
          for (let turn = 0; turn < 4 * stories.length + 4; turn++) await flush(); // enough turns for every worker to settle
          if (t < horizon) clock.advance(1);
        }
        const drained = track(queue.shutDownWithDrain());
        const stopped = track(workers);
        for (let turn = 0; turn < 20; turn++) await flush(); // bounded: a drain or a worker that hangs fails here
        expect([drained.state, stopped.state]).toEqual(["resolved", "resolved"]);
        for (const [i, { failures, at }] of stories.entries()) {
          const expected: number[] = [at];
          const handlings = Math.min(failures + 1, maxRetries);
          for (let n = 1; n < handlings; n++) {
            expected.push((expected.at(-1) as number) + rateLimiter.when(`k${i}`, n, 0));
          }
          expect(handled.get(`k${i}`), `k${i}`).toEqual(expected);
        }
        expect(overlaps, "keys handled by two workers at once").toEqual([]);
        expect([queue.size, queue.inFlight, queue.waiting, clock.pending]).toEqual([0, 0, 0, 0]);
      },
    ),
    params(60),
  );
});

test("a shutdown while keys back off: the workers handle them when they fall due, and the drain waits for them", async () => {
  const clock = new VirtualClock();
  const queue = new WorkQueue<string>({ maxRetries: 3, clock, rateLimiter: exponentialBackoff(10, 100) });
  const seen: [string, number][] = [];
  let first = true;
  const workers = runWorkers(queue, async (key) => {
    seen.push([key, clock.now()]);
    if (first) {
      first = false;
      throw new Error("not yet");
    }
  });
  queue.add("a");
  await flush();
  const drain = track(queue.shutDownWithDrain());
  await flush();
  expect([drain.state, queue.waiting]).toEqual(["pending", 1]);
  clock.advance(10);
  const stopped = track(workers);
  for (let turn = 0; turn < 10; turn++) await flush();
  expect([drain.state, stopped.state]).toEqual(["resolved", "resolved"]);
  expect(seen).toEqual([
    ["a", 0],
    ["a", 10],
  ]);
});
