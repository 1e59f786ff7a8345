import { expected } from "./validate.js";

/**
 * How long to wait before an item that failed is requeued ([docs/spec.md §18](../docs/spec.md#§18-backoff-and-rate-limiters)). Write your own by implementing
 * `when`; the functions of this file build client-go's.
 *
 * @remarks
 * `when` is given the item, its failure count after this failure (1 for the first) and the time. Because the
 * caller counts the failures, a per-item backoff needs no memory of its own, and nothing grows with the number of
 * items that ever failed.
 *
 * @typeParam T - The item type.
 * @public
 * @example
 * ```ts
 * const linear: RateLimiter<string> = { when: (_item, failures) => 100 * failures };
 * linear.when("a", 3, 0); // 300
 * ```
 */
export interface RateLimiter<T = unknown> {
  /**
   * The delay in milliseconds before `item` is requeued after its `failures`-th failure; ≤ 0 requeues at once.
   *
   * @param item - The item that failed.
   * @param failures - Its failure count, this failure included (at least 1).
   * @param nowMs - The queue clock's time, for limiters shared by all items.
   */
  when(item: T, failures: number, nowMs: number): number;
  /**
   * Forgets what the limiter remembers of `item`, if anything, once it succeeded.
   *
   * @param item - The item that succeeded.
   */
  forget?(item: T): void;
}

/** Throws a `RangeError` unless `value` is a non-negative finite number. */
function assertDuration(name: string, value: unknown): asserts value is number {
  if (!(Number.isFinite(value) && (value as number) >= 0)) {
    throw new RangeError(expected(name, "a non-negative finite number of milliseconds", value));
  }
}

/**
 * client-go's `ItemExponentialFailureRateLimiter` (§18.2): `baseMs · 2^(failures − 1)`, capped at `maxMs`, exact at
 * every count: the power is never one number that overflows, so a tiny base still doubles up to `maxMs`, and
 * `baseMs` 0 always gives 0.
 *
 * @param baseMs - The delay after the first failure, in milliseconds.
 * @param maxMs - The longest delay, in milliseconds.
 * @throws RangeError when `baseMs` or `maxMs` is not a non-negative finite number.
 * @example
 * ```ts
 * exponentialBackoff(5, 1_000_000).when("a", 3, 0); // 20
 * ```
 *
 * @public
 */
export function exponentialBackoff(baseMs: number, maxMs: number): RateLimiter {
  assertDuration("baseMs", baseMs);
  assertDuration("maxMs", maxMs);
  return {
    when(_item, failures) {
      // `0 · Infinity` is NaN, hence the zero test; any other base times `Infinity` is `Infinity`, which `min` caps.
      if (baseMs === 0) return 0;
      // 2^(failures − 1) as three factors of at most 2^1023 each: one power would be `Infinity` from 2^1024 on,
      // while a subnormal base (2^−1074) times 2^1024 is still 2^−50. Three reach 2^2098 past any finite max.
      const e = failures - 1;
      const delay =
        baseMs * 2 ** Math.min(e, 1023) * 2 ** Math.min(Math.max(e - 1023, 0), 1023) * 2 ** Math.max(e - 2046, 0);
      return Math.min(delay, maxMs);
    },
  };
}

/**
 * client-go's `ItemFastSlowRateLimiter` (§18.3): `fastMs` for the first `maxFast` failures, `slowMs` after.
 *
 * @param fastMs - The delay of the first `maxFast` failures, in milliseconds.
 * @param slowMs - The delay of every later failure, in milliseconds.
 * @param maxFast - How many failures get the fast delay.
 * @throws RangeError when a delay is not a non-negative finite number, or `maxFast` not a non-negative integer.
 * @example
 * ```ts
 * fastSlowBackoff(10, 60_000, 3).when("a", 4, 0); // 60000
 * ```
 *
 * @public
 */
export function fastSlowBackoff(fastMs: number, slowMs: number, maxFast: number): RateLimiter {
  assertDuration("fastMs", fastMs);
  assertDuration("slowMs", slowMs);
  if (!(Number.isInteger(maxFast) && maxFast >= 0)) {
    throw new RangeError(expected("maxFast", "a non-negative integer", maxFast));
  }
  return { when: (_item, failures) => (failures <= maxFast ? fastMs : slowMs) };
}

/**
 * client-go's `BucketRateLimiter` ([§18.4](../docs/spec.md#§18-backoff-and-rate-limiters)): one token bucket shared by every item that
 * refills at `qps` tokens a second up to `burst`, starts full, and answers each `when` as golang.org/x/time/rate's
 * `Reserve().Delay()` does: it takes a token, which may leave the bucket in debt, and answers how long until the
 * debt is paid. Time is the `nowMs` each call is given.
 *
 * @param qps - Tokens added per second.
 * @param burst - How many tokens the bucket holds, and holds at the start.
 * @throws RangeError when `qps` is not a positive finite number or `burst` not a positive integer.
 * @example
 * ```ts
 * const bucket = tokenBucket(10, 1);
 * bucket.when("a", 1, 0); // 0: the bucket had a token
 * bucket.when("b", 1, 0); // 100: the next token comes in a tenth of a second
 * ```
 *
 * @public
 */
export function tokenBucket(qps: number, burst: number): RateLimiter {
  if (!(Number.isFinite(qps) && qps > 0)) throw new RangeError(expected("qps", "a positive finite number", qps));
  if (!(Number.isInteger(burst) && burst > 0)) throw new RangeError(expected("burst", "a positive integer", burst));
  let tokens = burst; // may be negative: a debt
  let lastMs = Number.NEGATIVE_INFINITY; // no reservation yet: the bucket is full
  return {
    when(_item, _failures, nowMs) {
      const elapsed = nowMs - lastMs; // Infinity at the first call
      tokens = Math.min(burst, tokens + (elapsed * qps) / 1000) - 1;
      lastMs = nowMs;
      return tokens < 0 ? (-tokens * 1000) / qps : 0;
    },
  };
}

/**
 * client-go's `MaxOfRateLimiter` ([§18.5](../docs/spec.md#§18-backoff-and-rate-limiters)): asks every limiter (so each counts, or takes a token) and answers the
 * longest delay; `forget` forgets in each.
 *
 * @param limiters - The limiters asked, every one at every failure.
 * @example
 * ```ts
 * maxOf(exponentialBackoff(5, 1000), tokenBucket(10, 100)).when("a", 1, 0); // 5
 * ```
 *
 * @public
 */
export function maxOf<T>(...limiters: readonly RateLimiter<T>[]): RateLimiter<T> {
  return {
    when: (item, failures, nowMs) => Math.max(0, ...limiters.map((l) => l.when(item, failures, nowMs))),
    forget: (item) => {
      for (const l of limiters) l.forget?.(item);
    },
  };
}

/**
 * client-go's `WithMaxWaitRateLimiter` (§18.6): the delay of `limiter`, but never more than `maxWaitMs`.
 *
 * @param limiter - The limiter whose delays are capped.
 * @param maxWaitMs - The longest delay, in milliseconds.
 * @throws RangeError when `maxWaitMs` is not a non-negative finite number.
 * @example
 * ```ts
 * withMaxWait(exponentialBackoff(5, 1_000_000), 1000).when("a", 20, 0); // 1000
 * ```
 *
 * @public
 */
export function withMaxWait<T>(limiter: RateLimiter<T>, maxWaitMs: number): RateLimiter<T> {
  assertDuration("maxWaitMs", maxWaitMs);
  const forget = limiter.forget?.bind(limiter);
  return {
    when: (item, failures, nowMs) => Math.min(limiter.when(item, failures, nowMs), maxWaitMs),
    ...(forget === undefined ? {} : { forget }),
  };
}

/**
 * client-go's `DefaultControllerRateLimiter` (§18.7): `maxOf(exponentialBackoff(5, 1_000_000), tokenBucket(10, 100))`,
 * 5 ms doubling per failure up to 1000 s, and overall at most 10 requeues a second after a burst of 100. Each call
 * makes a new bucket.
 *
 * @example
 * ```ts
 * const limiter = defaultControllerRateLimiter();
 * limiter.when("a", 2, 0); // 10
 * ```
 *
 * @public
 */
export function defaultControllerRateLimiter(): RateLimiter {
  return maxOf(exponentialBackoff(5, 1_000_000), tokenBucket(10, 100));
}
