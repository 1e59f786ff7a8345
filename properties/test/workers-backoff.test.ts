/**
 * The controller loop with backoff on the virtual clock (docs/spec.md §15, §7.3, §17): a key that fails is handled
 * again exactly its backoff later, never by two workers at once, and given up after `maxRetries` handlings; keys
 * added for later are handled when they fall due; the drain after a shutdown waits for the keys still backing off.
 */
import * as fc from "fast-check";
import { expect, test } from "vitest";
import { exponentialBackoff, runWorkers, VirtualClock, WorkQueue } from "../../src/index.js";
import { params } from "./settings.js";
import { flush } from "./turns.js";

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
        const workers = runWorkers(
          queue,
          async (key) => {
            expect(active.has(key), `${key} is already being handled`).toBe(false);
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
        const drained = queue.shutDownWithDrain();
        await drained;
        await workers;
        for (const [i, { failures, at }] of stories.entries()) {
          const expected: number[] = [at];
          const handlings = Math.min(failures + 1, maxRetries);
          for (let n = 1; n < handlings; n++) {
            expected.push((expected.at(-1) as number) + rateLimiter.when(`k${i}`, n, 0));
          }
          expect(handled.get(`k${i}`), `k${i}`).toEqual(expected);
        }
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
  let drained = false;
  const drain = queue.shutDownWithDrain().then(() => {
    drained = true;
  });
  await flush();
  expect([drained, queue.waiting]).toEqual([false, 1]);
  clock.advance(10);
  await drain;
  await workers;
  expect(seen).toEqual([
    ["a", 0],
    ["a", 10],
  ]);
});
