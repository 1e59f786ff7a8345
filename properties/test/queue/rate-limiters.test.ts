/**
 * The rate limiters (docs/spec.md §18): client-go's formulas and defaults, checked by worked examples and against
 * naive re-statements of each formula.
 */
import * as fc from "fast-check";
import { describe, expect, test } from "vitest";
import { backoffModel } from "../../../model/index.js";
import {
  defaultControllerRateLimiter,
  exponentialBackoff,
  fastSlowBackoff,
  maxOf,
  type RateLimiter,
  tokenBucket,
  withMaxWait,
} from "../../../src/index.js";

const seed = process.env.WORKQUEUE_SEED === undefined ? undefined : Number(process.env.WORKQUEUE_SEED);
const params = (count: number) => ({
  numRuns: Math.max(1, Math.round(count * Number(process.env.WORKQUEUE_RUNS_SCALE ?? 1))),
  ...(seed === undefined ? {} : { seed }),
});

// Subnormal and huge values too: a base of 5e-324 doubles 2,098 times before it passes the largest max.
const ms = fc.oneof(
  fc.double({ min: 0, max: 1e9, noNaN: true }),
  fc.double({ min: 0, max: Number.MAX_VALUE, noNaN: true }),
);
const failures = fc.integer({ min: 1, max: 3000 });

describe("exponentialBackoff (§18.2)", () => {
  test("answers base, 2·base, 4·base … capped at max, whatever the count", () => {
    const limiter = exponentialBackoff(5, 1_000_000);
    expect([1, 2, 3, 4].map((n) => limiter.when("a", n, 0))).toEqual([5, 10, 20, 40]);
    expect(limiter.when("a", 18, 0)).toBe(655_360);
    expect(limiter.when("a", 19, 0)).toBe(1_000_000);
    expect(limiter.when("a", 2000, 0)).toBe(1_000_000);
    expect(exponentialBackoff(0, 1000).when("a", 2000, 0)).toBe(0);
    // Past 2^3069 the power is Infinity, and 0 · Infinity would be NaN.
    expect(exponentialBackoff(0, 1000).when("a", 1e6, 0)).toBe(0);
    expect(exponentialBackoff(50, 10).when("a", 1, 0)).toBe(10);
    expect(limiter.forget).toBeUndefined();
  });

  test("doubles a subnormal base exactly past 2^1024 failures, up to any finite max (fast-check seed 55657051)", () => {
    // 2^−1074 · 2^1024 is 2^−50, below this max: a power computed as one number is Infinity there, and answers max.
    expect(exponentialBackoff(5e-324, 8.881784197001254e-16).when("x", 1025, 0)).toBe(2 ** -50);
    // 2^−1074 · 2^2047 is 2^973, finite: the third factor of the power is needed to reach it.
    expect(exponentialBackoff(5e-324, Number.MAX_VALUE).when("x", 2048, 0)).toBe(2 ** 973);
    expect(exponentialBackoff(5e-324, Number.MAX_VALUE).when("x", 2099, 0)).toBe(Number.MAX_VALUE);
    expect(exponentialBackoff(5e-324, 1).when("x", 1e15, 0)).toBe(1);
  });

  test("is min(max, base · 2^(failures − 1)) by repeated doubling, never NaN or Infinity", () => {
    fc.assert(
      fc.property(ms, ms, failures, (base, max, n) => {
        let naive = base;
        for (let i = 1; i < n && naive < max; i++) naive *= 2;
        const delay = exponentialBackoff(base, max).when("x", n, 0);
        expect(delay).toBe(Math.min(naive, max));
        expect(Number.isFinite(delay)).toBe(true);
      }),
      params(300),
    );
  });

  test("answers what the model's backoff answers (model/clock-model.ts), at every base, max and count", () => {
    fc.assert(
      fc.property(ms, ms, failures, (base, max, n) => {
        expect(exponentialBackoff(base, max).when("x", n, 0)).toBe(backoffModel(base, max).when("x", n, 0));
      }),
      params(300),
    );
  });

  test("rejects a base or a max that is not a non-negative finite number, naming it", () => {
    expect(() => exponentialBackoff(-1, 10)).toThrow(
      new RangeError("Expected `baseMs` to be a non-negative finite number of milliseconds, got `-1` (number)"),
    );
    expect(() => exponentialBackoff(1, Number.POSITIVE_INFINITY)).toThrow(
      "Expected `maxMs` to be a non-negative finite number of milliseconds, got `Infinity` (number)",
    );
    expect(() => exponentialBackoff(Number.NaN, 1)).toThrow(RangeError);
    expect(() => exponentialBackoff("1" as unknown as number, 1)).toThrow(RangeError);
    expect(exponentialBackoff(0, 0).when("a", 1, 0)).toBe(0);
  });
});

describe("fastSlowBackoff (§18.3)", () => {
  test("answers fast for the first maxFast failures and slow after", () => {
    const limiter = fastSlowBackoff(10, 60_000, 3);
    expect([1, 2, 3, 4, 100].map((n) => limiter.when("a", n, 0))).toEqual([10, 10, 10, 60_000, 60_000]);
    expect(fastSlowBackoff(10, 20, 0).when("a", 1, 0)).toBe(20);
    expect(fastSlowBackoff(0, 0, 0).when("a", 1, 0)).toBe(0);
  });

  test("rejects bad arguments, naming them", () => {
    expect(() => fastSlowBackoff(-1, 1, 1)).toThrow("Expected `fastMs` to be a non-negative finite number");
    expect(() => fastSlowBackoff(1, Number.NaN, 1)).toThrow("Expected `slowMs` to be a non-negative finite number");
    expect(() => fastSlowBackoff(1, 1, 1.5)).toThrow(
      new RangeError("Expected `maxFast` to be a non-negative integer, got `1.5` (number)"),
    );
    expect(() => fastSlowBackoff(1, 1, -1)).toThrow(RangeError);
  });
});

describe("tokenBucket (§18.4)", () => {
  test("starts full, then each token costs 1000/qps ms of debt, refilled by time up to burst", () => {
    const bucket = tokenBucket(10, 2);
    expect(bucket.when("a", 1, 0)).toBe(0);
    expect(bucket.when("b", 1, 0)).toBe(0);
    expect(bucket.when("c", 1, 0)).toBe(100);
    expect(bucket.when("d", 1, 0)).toBe(200);
    expect(bucket.when("e", 1, 250)).toBeCloseTo(50, 9); // debt 2 − 2.5 refilled = −0.5 … then −1 taken
    expect(bucket.when("f", 1, 10_000)).toBe(0); // refilled to burst, not beyond
    expect(bucket.when("g", 1, 10_000)).toBe(0);
    expect(bucket.when("h", 1, 10_000)).toBe(100);
    expect(bucket.forget).toBeUndefined();
  });

  test("agrees with golang.org/x/time/rate's Reserve().Delay(), restated naively", () => {
    const qps = fc.double({ min: 0.01, max: 1000, noNaN: true });
    const gaps = fc.array(fc.double({ min: 0, max: 5000, noNaN: true }), { maxLength: 30 });
    fc.assert(
      fc.property(qps, fc.integer({ min: 1, max: 5 }), gaps, (q, burst, steps) => {
        const bucket = tokenBucket(q, burst);
        let tokens = burst;
        let last: number | undefined;
        let now = 0;
        for (const gap of steps) {
          now += gap;
          if (last !== undefined) tokens = Math.min(burst, tokens + ((now - last) * q) / 1000);
          last = now;
          tokens -= 1;
          expect(bucket.when("x", 1, now)).toBe(tokens < 0 ? (-tokens * 1000) / q : 0);
        }
      }),
      params(300),
    );
  });

  test("rejects a qps that is not positive and finite, or a burst that is not a positive integer", () => {
    expect(() => tokenBucket(0, 1)).toThrow(
      new RangeError("Expected `qps` to be a positive finite number, got `0` (number)"),
    );
    expect(() => tokenBucket(Number.POSITIVE_INFINITY, 1)).toThrow(RangeError);
    expect(() => tokenBucket(1, 0)).toThrow(
      new RangeError("Expected `burst` to be a positive integer, got `0` (number)"),
    );
    expect(() => tokenBucket(1, 1.5)).toThrow(RangeError);
    expect(tokenBucket(1e-9, 1).when("a", 1, 0)).toBe(0);
  });
});

describe("maxOf, withMaxWait and the default controller limiter (§18.5–§18.7)", () => {
  const recording = (delay: number, log: string[], name: string): RateLimiter<string> => ({
    when: (item, n, now) => {
      log.push(`${name}.when(${item},${n},${now})`);
      return delay;
    },
    forget: (item) => {
      log.push(`${name}.forget(${item})`);
    },
  });

  test("maxOf asks every limiter and answers the longest delay; forget forgets in each", () => {
    const log: string[] = [];
    const limiter = maxOf(recording(5, log, "a"), recording(-3, log, "b"), { when: () => 7 });
    expect(limiter.when("x", 2, 9)).toBe(7);
    limiter.forget?.("x");
    expect(log).toEqual(["a.when(x,2,9)", "b.when(x,2,9)", "a.forget(x)", "b.forget(x)"]);
    expect(maxOf().when("x", 1, 0)).toBe(0);
    expect(maxOf({ when: () => -4 }).when("x", 1, 0)).toBe(0);
  });

  test("withMaxWait caps the delay and passes forget through", () => {
    const log: string[] = [];
    const capped = withMaxWait(recording(500, log, "a"), 100);
    expect(capped.when("x", 1, 3)).toBe(100);
    expect(withMaxWait(recording(50, log, "b"), 100).when("y", 2, 4)).toBe(50);
    capped.forget?.("x");
    expect(log).toEqual(["a.when(x,1,3)", "b.when(y,2,4)", "a.forget(x)"]);
    expect(withMaxWait({ when: () => 1 }, 0).forget).toBeUndefined();
    expect(withMaxWait({ when: () => 1 }, 0).when("x", 1, 0)).toBe(0);
    expect(() => withMaxWait({ when: () => 1 }, -1)).toThrow(
      "Expected `maxWaitMs` to be a non-negative finite number of milliseconds, got `-1` (number)",
    );
  });

  test("the default controller limiter is 5 ms doubling to 1000 s, and at most 10 a second after 100", () => {
    const limiter = defaultControllerRateLimiter();
    expect([1, 2, 3].map((n) => limiter.when("a", n, 0))).toEqual([5, 10, 20]);
    expect(limiter.when("a", 30, 0)).toBe(1_000_000);
    for (let i = 4; i < 100; i++) limiter.when(`k${i}`, 1, 0);
    expect(limiter.when("b", 1, 0)).toBe(100); // the 101st reservation at t = 0 waits a tenth of a second
    expect(defaultControllerRateLimiter().when("b", 1, 0)).toBe(5); // each call makes a new bucket
  });
});
