/**
 * Queue benchmarks: the steady-state cycle, a burst, the retry path and the heap per queued key, for the reference
 * queue and the baselines. Times are nanoseconds from mitata's `measure`: the median (p50) of its samples after
 * warm-up, with the fastest and slowest sample.
 */
import { measure } from "mitata";
import { WorkQueueModel } from "../model/index.js";
import { WorkQueue } from "../src/index.js";
import { ArrayShiftQueue, type BenchQueue, SetFifoQueue } from "./baselines.js";

/** A timing: nanoseconds per operation. */
export interface Timing {
  readonly median: number;
  readonly min: number;
  readonly max: number;
}

/** The queues compared, by the name the table shows. */
export const implementations: Record<string, (maxRetries: number) => BenchQueue> = {
  reference: (maxRetries) => new WorkQueue<string>({ maxRetries }),
  model: (maxRetries) => new WorkQueueModel<string>({ maxRetries }),
  "Array#shift": (maxRetries) => new ArrayShiftQueue(maxRetries),
  "Set as FIFO": (maxRetries) => new SetFifoQueue(maxRetries),
};

/** The queue depths measured. */
export const depths = [1_000, 10_000, 100_000, 1_000_000] as const;

/** What is measured at all. */
export type Kind = "cycle" | "burst" | "memory";

/**
 * The deepest queue each baseline is measured at, per kind, where a deeper one would take minutes: the model's
 * `add` scans its arrays, so filling it is O(n²); `Array#shift` moves the whole array once it is too large for
 * V8 to trim it in place, and a `Set` used as a FIFO walks every hole left at its front, so their bursts are O(n²).
 */
export const deepest: Record<string, Record<Kind, number>> = {
  reference: { cycle: 1_000_000, burst: 1_000_000, memory: 1_000_000 },
  model: { cycle: 100_000, burst: 10_000, memory: 10_000 },
  "Array#shift": { cycle: 1_000_000, burst: 100_000, memory: 1_000_000 },
  "Set as FIFO": { cycle: 1_000_000, burst: 10_000, memory: 1_000_000 },
};

/**
 * Realistic keys, `namespace/name`, made once and shared (their own memory is not counted). They are interned, as
 * property names are (the object-key round trip does it): otherwise the model's linear scans compare characters
 * instead of pointers, and filling the model with 100,000 keys takes minutes instead of seconds.
 */
const keyPool = Array.from({ length: depths.at(-1) ?? 0 }, (_, i) => {
  const key = `namespace-${i % 97}/object-${i}`;
  return Object.keys({ [key]: 0 })[0] as string;
});

/** A queue with the first `n` keys queued. */
function filled(make: (maxRetries: number) => BenchQueue, n: number, maxRetries = 5): BenchQueue {
  const queue = make(maxRetries);
  for (let i = 0; i < n; i++) queue.add(keyPool[i] as string);
  return queue;
}

/**
 * Measures `fn`, one operation per call unless `per` says how many, for at least `ms` of CPU time and three
 * samples after warm-up (one warm-up sample for a call of many operations, which warms itself up).
 */
async function time(fn: () => unknown, ms: number, per = 1): Promise<Timing> {
  const stats = await measure(fn, { min_cpu_time: ms * 1e6, min_samples: 3, warmup_samples: per > 10_000 ? 1 : 2 });
  return { median: stats.p50 / per, min: stats.min / per, max: stats.max / per };
}

/** The steady-state cycle `get → done → add` with `n` keys queued: each cycle moves the head to the tail. */
export async function cycle(make: (maxRetries: number) => BenchQueue, n: number): Promise<Timing> {
  const queue = filled(make, n);
  return time(() => {
    const item = queue.get() as string;
    queue.done(item);
    queue.add(item);
  }, 300);
}

/** A burst: `n` adds into an empty queue, then `n` gets each followed by its done; per key. */
export async function burst(make: (maxRetries: number) => BenchQueue, n: number): Promise<Timing> {
  const keys = keyPool.slice(0, n);
  return time(
    () => {
      const queue = make(5);
      for (const key of keys) queue.add(key);
      for (let item = queue.get(); item !== undefined; item = queue.get()) queue.done(item);
    },
    300,
    n,
  );
}

/** The retry path with 10,000 keys queued: `get → retry → done`, which requeues the item through its dirty mark. */
export async function retryPath(make: (maxRetries: number) => BenchQueue): Promise<Timing> {
  const queue = filled(make, 10_000, Number.POSITIVE_INFINITY);
  return time(() => {
    const item = queue.get() as string;
    queue.retry(item);
    queue.done(item);
  }, 300);
}

/**
 * Bytes per queued key, key strings excluded: the V8 heap and the array buffers (where typed arrays keep their
 * elements, outside the heap) together, after a full collection, before and after filling a queue with `n` keys;
 * the median of three fills.
 */
export function bytesPerKey(make: (maxRetries: number) => BenchQueue, n: number): number {
  const fills = 3;
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc === undefined) throw new Error("run with --expose-gc to measure memory");
  const used = () => {
    gc();
    const { heapUsed, arrayBuffers } = process.memoryUsage();
    return heapUsed + arrayBuffers;
  };
  const samples = Array.from({ length: fills }, () => {
    const before = used();
    const queue = filled(make, n);
    const after = used();
    if (queue.size !== n) throw new Error(`expected ${n} queued keys, got ${queue.size}`);
    return (after - before) / n;
  });
  return samples.sort((a, b) => a - b)[Math.floor(fills / 2)] as number;
}

/**
 * The floor under any keyed queue: one `Map.get` per operation over `n` keys, in the order they were inserted (the
 * order the cycle visits them). A cycle needs at least one such lookup that the cache does not hold; how much more
 * it costs at 1,000,000 keys than at 1,000 is the machine's memory, not the queue.
 */
export async function lookupFloor(n: number): Promise<Timing> {
  const map = new Map<string, number>();
  for (let i = 0; i < n; i++) map.set(keyPool[i] as string, i);
  let next = 0;
  return time(() => {
    const value = map.get(keyPool[next] as string);
    next = next + 1 === n ? 0 : next + 1;
    return value;
  }, 300);
}

/**
 * The floor under the cycle at depth `n`: exactly two `Map.get` of each key, one after the other, over a bare `Map`
 * of the same `n` keys visited in the same order as the cycle visits them — what a queue pays when its `done` and
 * its `add` each find the item once and nothing else costs anything. Both results are used, so neither lookup can
 * be dropped by the compiler.
 */
function twoLookups(n: number): () => number {
  const map = new Map<string, number>();
  for (let i = 0; i < n; i++) map.set(keyPool[i] as string, i);
  let next = 0;
  return () => {
    const key = keyPool[next] as string;
    const first = map.get(key) as number; // as done finds the item
    const second = map.get(key) as number; // as add finds it again
    next = next + 1 === n ? 0 : next + 1;
    return first + second;
  };
}

/** The reference's cycle at depth `n` and its floor of two lookups, each the median of three alternating rounds. */
export interface CycleAndFloor {
  readonly cycle: Timing;
  readonly floor: Timing;
}

/**
 * Measures `make`'s cycle with `n` keys queued and the floor of two `Map.get` per cycle ({@link twoLookups}) in
 * turn, three times, and keeps each one's median round: drift on a shared machine touches both alike, so their
 * ratio is what one run can vouch for.
 */
export async function cycleAndFloor(make: (maxRetries: number) => BenchQueue, n: number): Promise<CycleAndFloor> {
  const queue = filled(make, n);
  const floor = twoLookups(n);
  const cycles: Timing[] = [];
  const floors: Timing[] = [];
  for (let round = 0; round < 3; round++) {
    floors.push(await time(floor, 300));
    cycles.push(
      await time(() => {
        const item = queue.get() as string;
        queue.done(item);
        queue.add(item);
      }, 300),
    );
  }
  const median = (timings: Timing[]) => timings.sort((a, b) => a.median - b.median)[1] as Timing;
  return { cycle: median(cycles), floor: median(floors) };
}
