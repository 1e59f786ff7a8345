/**
 * When a call answered (properties/overlap/settled.ts): a value, or a native promise settled when its call returned,
 * answered before any later call; a pending promise or another thenable answers when its callback runs.
 */
import { expect, test } from "vitest";
import { showRun } from "../../overlap/runs.js";
import { settledAlready } from "../../overlap/settled.js";

test("a value and a settled promise answered at once; a pending promise and a foreign thenable did not", async () => {
  expect(settledAlready(undefined)).toBe(true);
  expect(settledAlready(3)).toBe(true);
  expect(settledAlready(Promise.resolve("a"))).toBe(true);
  const rejected = Promise.reject(new Error("no"));
  rejected.catch(() => undefined);
  expect(settledAlready(rejected)).toBe(true);
  let resolve: (value: unknown) => void = () => undefined;
  const pending = new Promise((r) => {
    resolve = r;
  });
  expect(settledAlready(pending)).toBe(false);
  resolve(1);
  await pending;
  expect(settledAlready(pending)).toBe(true);
  // biome-ignore lint/suspicious/noThenProperty: a thenable that is not a promise, as a queue may answer one
  const thenable = { then: (ok: (v: number) => void) => ok(1) };
  expect(settledAlready(thenable)).toBe(false);
});

test("a promise resolved to text that looks like a pending one is still settled; a subclass's state is read too", () => {
  expect(settledAlready(Promise.resolve("{ <pending>"))).toBe(true);
  class Sub<T> extends Promise<T> {}
  expect(settledAlready(new Sub(() => undefined))).toBe(false);
  expect(settledAlready(Sub.resolve(1))).toBe(true);
});

test("a call made after the one before it answered shows with then, though not drawn to wait for it", () => {
  const call = (text: string, invokedAt: number, answeredAt: number) => ({
    round: 1,
    call: text,
    afterPrevious: false,
    answer: { kind: "value" as const, value: undefined },
    invokedAt,
    answeredAt,
  });
  expect(showRun([call('add("a")', 0, 1), call("get()", 2, 3)])).toBe(
    '  round 1: add("a") → undefined then get() → undefined',
  );
  expect(showRun([call('add("a")', 0, 3), call("get()", 1, 2)])).toBe(
    '  round 1: add("a") → undefined  ‖  get() → undefined',
  );
});

test("a call drawn to wait shows side by side with a call made meanwhile that had not answered", () => {
  // Drawn: done("a"), then get() at once, then get() once done("a") answered; made: done at 0, the first get at 1,
  // done answered at 2, the second get made at 3 while the first was still in flight, answered at 4 and 5.
  const call = (text: string, afterPrevious: boolean, invokedAt: number, answeredAt: number) => ({
    round: 1,
    call: text,
    afterPrevious,
    answer: { kind: "value" as const, value: undefined },
    invokedAt,
    answeredAt,
  });
  expect(showRun([call('done("a")', false, 0, 2), call("get()", false, 1, 5), call("get()", true, 3, 4)])).toBe(
    '  round 1: done("a") → undefined  ‖  get() → undefined  ‖  get() → undefined',
  );
});
