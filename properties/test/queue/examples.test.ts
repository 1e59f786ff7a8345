/**
 * Worked examples of docs/spec.md, run on the reference queue and on the model alike: the seed's example verbatim,
 * the errors and their messages, and what the queue must not keep alive.
 */
import * as fc from "fast-check";
import { describe, expect, test } from "vitest";
import { WorkQueueModel } from "../../../model/index.js";
import { WorkQueue } from "../../../src/index.js";
import { params } from "../settings.js";

const implementations = [
  ["the reference queue", (options: { maxRetries: number }) => new WorkQueue<unknown>(options)],
  ["the model", (options: { maxRetries: number }) => new WorkQueueModel<unknown>(options)],
] as const;

describe.each(implementations)("%s", (_, make) => {
  test("keeps the seed's worked example verbatim: an add while in flight is applied by done", () => {
    const wq = make({ maxRetries: 2 });
    wq.add("a");
    expect(wq.get()).toBe("a");
    wq.add("a");
    expect(wq.get()).toBeUndefined();
    wq.done("a");
    expect(wq.get()).toBe("a");
  });

  test("collapses repeated adds into one dispatch and keeps the first place (§4.2)", () => {
    const wq = make({ maxRetries: 2 });
    for (const x of ["a", "b", "a", "a"]) wq.add(x);
    expect([wq.size, wq.get(), wq.get(), wq.get()]).toEqual([2, "a", "b", undefined]);
  });

  test("requeues a dirty item at the tail when done runs, not when it was added (§10.5)", () => {
    const wq = make({ maxRetries: 2 });
    wq.add("a");
    wq.get();
    wq.add("a");
    wq.add("b");
    wq.done("a");
    expect([wq.get(), wq.get()]).toEqual(["b", "a"]);
  });

  test.each([
    [0, [false, false]],
    [2, [true, false, false]],
    [3, [true, true, false]],
  ])("with maxRetries %i, retry answers %j and keeps counting (§7)", (maxRetries, answers) => {
    const wq = make({ maxRetries });
    const got = answers.map(() => wq.retry("a"));
    expect(got).toEqual(answers);
    expect(wq.failures("a")).toBe(answers.length);
    wq.forget("a");
    expect(wq.failures("a")).toBe(0);
  });

  test("never gives up with maxRetries Infinity (§7.2)", () => {
    const wq = make({ maxRetries: Number.POSITIVE_INFINITY });
    for (let i = 0; i < 100; i++) expect(wq.retry("a")).toBe(true);
    expect([wq.failures("a"), wq.size]).toEqual([100, 1]);
  });

  test("keeps FIFO order in a queue thousands deep, across growth and wrap-around", () => {
    const wq = make({ maxRetries: 1 });
    for (let i = 0; i < 10; i++) wq.add(`w${i}`);
    for (let i = 0; i < 10; i++) wq.done(wq.get());
    const keys = Array.from({ length: 3000 }, (_, i) => `k${i}`);
    for (const key of keys) wq.add(key);
    const out: unknown[] = [];
    for (let x = wq.get(); x !== undefined; x = wq.get()) out.push(x);
    expect(out).toEqual(keys);
    expect([wq.size, wq.inFlight]).toEqual([0, 3000]);
  });

  test("names the value in the error for an item that is undefined or null, and changes nothing (§1.2)", () => {
    const wq = make({ maxRetries: 1 });
    wq.add("a");
    for (const verb of ["add", "done", "retry", "forget", "failures"] as const) {
      expect(() => wq[verb](undefined)).toThrow(
        new TypeError("Expected `item` to be a value other than undefined or null, got `undefined` (undefined)"),
      );
      expect(() => wq[verb](null)).toThrow(
        new TypeError("Expected `item` to be a value other than undefined or null, got `null` (null)"),
      );
    }
    expect([wq.size, wq.inFlight, wq.get()]).toEqual([1, 0, "a"]);
  });

  test.each<[unknown, string]>([
    [-1, "`-1` (number)"],
    [1.5, "`1.5` (number)"],
    [Number.NaN, "`NaN` (number)"],
    [Number.NEGATIVE_INFINITY, "`-Infinity` (number)"],
    ["3", '`"3"` (string)'],
    [undefined, "`undefined` (undefined)"],
    [null, "`null` (null)"],
    [3n, "`3` (bigint)"],
    [Symbol("s"), "`Symbol(s)` (symbol)"],
    [Object.create(null), "`[object Object]` (object)"],
  ])("rejects maxRetries %s with a RangeError that names it (§3.1)", (maxRetries, shown) => {
    expect(() => make({ maxRetries } as never)).toThrow(
      new RangeError(`Expected \`maxRetries\` to be a non-negative integer or Infinity, got ${shown}`),
    );
  });

  test("rejects options that are not an object with a TypeError that names them (§3.2)", () => {
    for (const [options, shown] of [
      [undefined, "`undefined` (undefined)"],
      [null, "`null` (null)"],
      [5, "`5` (number)"],
    ] as const) {
      expect(() => make(options as never)).toThrow(
        new TypeError(`Expected \`options\` to be an object such as { maxRetries: 5 }, got ${shown}`),
      );
    }
  });

  test("accepts every non-negative integer maxRetries and Infinity (§3.1)", () => {
    fc.assert(
      fc.property(fc.oneof(fc.nat(), fc.constant(Number.POSITIVE_INFINITY), fc.constant(-0)), (maxRetries) => {
        expect(make({ maxRetries }).maxRetries).toBe(maxRetries);
      }),
      params(),
    );
  });
});

test("the reference queue and the model reject the same maxRetries with the same error", () => {
  fc.assert(
    fc.property(fc.anything({ maxDepth: 1, withBigInt: true, withNullPrototype: true }), (maxRetries) => {
      const attempt = (make: (typeof implementations)[number][1]) => {
        try {
          return make({ maxRetries } as never).maxRetries;
        } catch (error) {
          return error;
        }
      };
      expect(attempt(implementations[0][1])).toEqual(attempt(implementations[1][1]));
    }),
    params(),
  );
});
