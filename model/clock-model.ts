/**
 * The executable specification of the virtual clock ([docs/spec.md §18.9](../docs/spec.md#§18-backoff-and-rate-limiters)) and of client-go's exponential backoff
 * ([§18.2](../docs/spec.md#§18-backoff-and-rate-limiters)), as naive as they can be: the gate makes the queues it checks on this clock, with this backoff.
 */

import type { ModelRateLimiter } from "./work-queue-model.js";

/** A timer armed on a {@link ClockModel}. */
interface Timer {
  readonly atMs: number;
  readonly callback: () => void;
}

/**
 * A clock whose time moves only by {@link ClockModel.advance} ([§18.8](../docs/spec.md#§18-backoff-and-rate-limiters), [§18.9](../docs/spec.md#§18-backoff-and-rate-limiters)).
 *
 * @public
 * @example
 * ```ts
 * import { ClockModel } from "workqueue-spec/model";
 *
 * const clock = new ClockModel();
 * clock.schedule(10, () => console.log(clock.now())); // prints 10 during the advance
 * clock.advance(15);
 * clock.now(); // 15
 * ```
 */
export class ClockModel {
  /** [§18.9](../docs/spec.md#§18-backoff-and-rate-limiters): the time; it starts at 0. */
  #now = 0;
  /** [§18.9](../docs/spec.md#§18-backoff-and-rate-limiters): the armed timers. */
  #timers: Timer[] = [];
  /** During an advance, how many timers ran at its latest instant: the gate's bound on a livelock. */
  #runs = { at: Number.NaN, count: 0 };

  /** [§18.8](../docs/spec.md#§18-backoff-and-rate-limiters): the time, in milliseconds. */
  now(): number {
    return this.#now;
  }

  /** [§18.9](../docs/spec.md#§18-backoff-and-rate-limiters): how many timers are armed. */
  get pending(): number {
    return this.#timers.length;
  }

  /**
   * [§18.8](../docs/spec.md#§18-backoff-and-rate-limiters): arms a timer; the answer disarms it.
   *
   * @param atMs - When it runs ([§18.8](../docs/spec.md#§18-backoff-and-rate-limiters)).
   * @param callback - What runs.
   */
  schedule(atMs: number, callback: () => void): () => void {
    const timer = { atMs, callback };
    this.#timers.push(timer);
    return () => {
      this.#timers = this.#timers.filter((t) => t !== timer);
    };
  }

  /**
   * [§18.9](../docs/spec.md#§18-backoff-and-rate-limiters): runs every timer due by `now + ms`, earliest first, each at its own time, then reads `now + ms`.
   *
   * @param ms - How far to move: a non-negative finite number.
   */
  advance(ms: number): void {
    if (!(Number.isFinite(ms) && ms >= 0))
      throw new RangeError(`Expected \`ms\` to be a non-negative finite number, got \`${ms}\``);
    const end = this.#now + ms;
    this.#runs = { at: Number.NaN, count: 0 };
    // The timer is taken in the loop's head: every turn removes one, so the loop ends once none is due.
    for (let first = this.#takeDue(end); first !== undefined; first = this.#takeDue(end)) {
      this.#now = Math.max(this.#now, first.atMs);
      this.#count();
      first.callback();
    }
    this.#now = end;
  }

  /**
   * Counts a timer run at the current instant. More than 100,000 at one instant of one advance throw: the gate's
   * runs never arm so many, and only a timer that keeps re-arming itself for a time that has come runs them.
   */
  #count(): void {
    this.#runs =
      this.#runs.at === this.#now ? { at: this.#now, count: this.#runs.count + 1 } : { at: this.#now, count: 1 };
    if (this.#runs.count > 100_000) {
      throw new Error(
        `Expected time to move, but more than 100,000 timers ran at ${this.#now} ms in one advance(): a timer that re-arms itself for a time that has come would keep advance() from ending`,
      );
    }
  }

  /** Removes and answers the earliest timer due by `end`, the first armed among equals (`#timers` is in armed order), if any. */
  #takeDue(end: number): Timer | undefined {
    const due = this.#timers.filter((t) => t.atMs <= end);
    const first = due.reduce<Timer | undefined>((a, t) => (a === undefined || t.atMs < a.atMs ? t : a), undefined);
    this.#timers = this.#timers.filter((t) => t !== first);
    return first;
  }
}

/**
 * [§18.2](../docs/spec.md#§18-backoff-and-rate-limiters): client-go's per-item exponential backoff, `min(maxMs, baseMs · 2^(failures − 1))`.
 *
 * @param baseMs - The first delay.
 * @param maxMs - The cap.
 * @public
 * @example
 * ```ts
 * import { backoffModel } from "workqueue-spec/model";
 *
 * const limiter = backoffModel(5, 100);
 * [1, 2, 3, 10].map((n) => limiter.when("a", n, 0)); // [5, 10, 20, 100]
 * ```
 */
export function backoffModel(baseMs: number, maxMs: number): ModelRateLimiter<unknown> {
  return {
    when(_item, failures) {
      // §18.2 as written: the base, doubled failures − 1 times (none for fewer than two failures: a negative
      // length makes an empty list). Doubling is exact, and 2,098 doublings take the smallest positive number
      // (2^−1074) past every finite max, so more change nothing. A list, not a counted loop: it always ends.
      const doublings = Array.from({ length: Math.min(failures, 2100) - 1 }, () => 2);
      const delay = doublings.reduce((d, two) => d * two, baseMs);
      return Math.min(maxMs, delay);
    },
  };
}
