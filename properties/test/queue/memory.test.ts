/**
 * What the reference queue keeps alive. A queue in a long-running controller sees millions of items come and go;
 * holding on to one that was handed out and done is a leak. Checked with weak references and a forced collection.
 */
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { expect, test } from "vitest";
import { WorkQueue } from "../../../src/index.js";

setFlagsFromString("--expose-gc");
const collectGarbage = runInNewContext("gc") as () => void;

/** Whether every object behind `refs` has been collected, after the current job ends and a full collection runs. */
async function collected(refs: readonly WeakRef<object>[]): Promise<boolean> {
  await new Promise((resolve) => setTimeout(resolve, 0));
  collectGarbage();
  return refs.every((ref) => ref.deref() === undefined);
}

/** Puts `count` fresh objects through `add` → `get` → `done` after `warmup` string items; returns weak refs to them. */
function cycle(queue: WorkQueue<object | string>, count: number, warmup: number): WeakRef<object>[] {
  for (let i = 0; i < warmup; i++) queue.add(`w${i}`);
  for (let i = 0; i < warmup; i++) queue.done(queue.get() as string);
  const items = Array.from({ length: count }, (_, i) => ({ i }));
  for (const item of items) queue.add(item);
  for (let item = queue.get(); item !== undefined; item = queue.get()) queue.done(item);
  return items.map((item) => new WeakRef(item));
}

test("an item that was handed out and done is not kept alive by the queue", async () => {
  const queue = new WorkQueue<object | string>({ maxRetries: 3 });
  const refs = cycle(queue, 3, 0);
  expect(await collected(refs)).toBe(true);
  expect([queue.size, queue.inFlight]).toEqual([0, 0]);
});

test("items are not kept alive after the queue grew while wrapped around", async () => {
  const queue = new WorkQueue<object | string>({ maxRetries: 3 });
  const refs = cycle(queue, 100, 7);
  expect(await collected(refs)).toBe(true);
});

test("a forgotten item's failure count does not keep it alive", async () => {
  const queue = new WorkQueue<object>({ maxRetries: 3 });
  const refs = (() => {
    const item = { failing: true };
    queue.retry(item);
    queue.done(queue.get() as object);
    queue.forget(item);
    return [new WeakRef(item)];
  })();
  expect(await collected(refs)).toBe(true);
});

test("the weak-reference check itself sees an item the queue still holds", async () => {
  const queue = new WorkQueue<object>({ maxRetries: 3 });
  const refs = (() => {
    const item = { queued: true };
    queue.add(item);
    return [new WeakRef(item)];
  })();
  expect(await collected(refs)).toBe(false);
  expect(queue.size).toBe(1);
});

test("at most as many done items stay referenced as there are live items", async () => {
  const queue = new WorkQueue<object | string>({ maxRetries: 3 });
  queue.add("live");
  const refs = (() => {
    const items = Array.from({ length: 10 }, (_, i) => ({ i }));
    for (const item of items) queue.add(item);
    queue.done(queue.get() as string);
    queue.add("live");
    for (let item = queue.get(); item !== "live"; item = queue.get()) queue.done(item as object);
    return items.map((item) => new WeakRef(item));
  })();
  await collected([]);
  expect(refs.filter((ref) => ref.deref() !== undefined).length).toBeLessThanOrEqual(queue.size + queue.inFlight);
  expect([queue.size, queue.inFlight]).toEqual([0, 1]);
});

/** The bytes in use, V8's heap and the array buffers, after the current job ends and a full collection runs. */
async function bytesInUse(): Promise<number> {
  await collected([]);
  const { heapUsed, arrayBuffers } = process.memoryUsage();
  return heapUsed + arrayBuffers;
}

test("a queue that many distinct items pass through, one at a time, stays as small as its largest backlog", async () => {
  const queue = new WorkQueue<string>({ maxRetries: 3 });
  const passThrough = (from: number, count: number) => {
    for (let i = from; i < from + count; i++) {
      queue.add(`item-${i}`);
      queue.done(queue.get() as string);
    }
  };
  passThrough(0, 200_000); // the same code runs before the first reading, so that its compilation is not counted
  const before = await bytesInUse();
  passThrough(200_000, 200_000);
  const grown = (await bytesInUse()) - before;
  // A queue that kept a few bytes for each item it ever held would have grown by megabytes here.
  expect(grown).toBeLessThan(1_000_000);
  expect([queue.size, queue.inFlight]).toEqual([0, 0]);
});
