/**
 * Delayed adds (docs/spec.md §17): what `addAfter` and an item falling due cost with 10³, 10⁵ and 10⁶ items
 * waiting, on the virtual clock, so that only the queue's own work is timed. The heap makes both O(log n), so the
 * cost grows by a few comparisons from 10³ to 10⁶, not a thousandfold.
 */
import { measure } from "mitata";
import { VirtualClock, WorkQueue } from "../src/index.js";
import type { Timing } from "./queues.js";

/** The numbers of waiting items measured. */
export const waitingDepths = [1_000, 100_000, 1_000_000] as const;

const keys = Array.from({ length: waitingDepths.at(-1) ?? 0 }, (_, i) => `namespace-${i % 97}/object-${i}`);

/** A queue with `n` items waiting, due at distinct times spread over 1 to `n` ms from now, in a shuffled order. */
function waiting(n: number): { queue: WorkQueue<string>; clock: VirtualClock } {
  const clock = new VirtualClock();
  const queue = new WorkQueue<string>({ maxRetries: 5, clock });
  for (let i = 0; i < n; i++) queue.addAfter(keys[i] as string, 1 + ((i * 7919) % n));
  return { queue, clock };
}

/**
 * The steady state with `n` items waiting: a new request waits (`addAfter`, a heap insert), then an `add` of it
 * ends its wait (a heap removal from the middle). Per pair.
 */
export async function redelay(n: number): Promise<Timing> {
  const { queue } = waiting(n);
  let i = 0;
  const stats = await measure(
    () => {
      const key = `extra-${i++ & 1023}`;
      queue.addAfter(key, 1 + (i % n));
      queue.add(key);
      queue.get();
      queue.done(key);
    },
    { min_cpu_time: 300e6, min_samples: 3, warmup_samples: 2 },
  );
  return { median: stats.p50, min: stats.min, max: stats.max };
}

/** `n` items fall due in one `advance` and are handed out: per item, the heap removal of the earliest and the add. */
export async function fallDue(n: number): Promise<Timing> {
  const samples: number[] = [];
  for (let s = 0; s < 3; s++) {
    const { queue, clock } = waiting(n);
    const start = performance.now();
    clock.advance(n);
    const elapsed = performance.now() - start;
    if (queue.size !== n) throw new Error(`expected ${n} items to fall due, got ${queue.size}`);
    samples.push((elapsed * 1e6) / n);
  }
  samples.sort((a, b) => a - b);
  return { median: samples[1] as number, min: samples[0] as number, max: samples[2] as number };
}
