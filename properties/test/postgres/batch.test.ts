/**
 * The batcher under `PostgresWorkQueue`'s `add` and `done` (docs/spec.md §20.1), without a database: the first call
 * goes out at once, the calls made while a statement is in flight go out together after it, each call is answered
 * by its own result or by its statement's error, and the batcher is idle again once nothing waits.
 */
import { expect, test } from "vitest";
import { Batcher } from "../../../src/postgres/batch.js";

/** A batcher whose statements answer each input doubled, a macrotask later, recording what each statement carried. */
function doubling(fail?: (inputs: readonly number[]) => boolean) {
  const sent: (readonly number[])[] = [];
  const batcher = new Batcher<number, number>(async (inputs) => {
    sent.push(inputs);
    await new Promise((resolve) => setTimeout(resolve, 1));
    if (fail?.(inputs)) throw new Error(`refused ${inputs.join(",")}`);
    return inputs.map((input) => input * 2);
  });
  return { batcher, sent };
}

test("a call alone goes out at once; the calls made while it is in flight go out together after it, each answered by its own result", {
  timeout: 2_000,
}, async () => {
  const { batcher, sent } = doubling();
  const first = batcher.call(1);
  expect(sent).toEqual([[1]]); // at once, before anything else happens
  const answers = await Promise.all([first, batcher.call(2), batcher.call(3)]);
  expect(answers).toEqual([2, 4, 6]);
  expect(sent).toEqual([[1], [2, 3]]);
  await new Promise((resolve) => setTimeout(resolve, 20));
  expect(sent).toEqual([[1], [2, 3]]); // nothing more goes out once nothing waits
});

test("a call made once the batcher is idle again goes out at once, alone", { timeout: 2_000 }, async () => {
  const { batcher, sent } = doubling();
  expect(await batcher.call(1)).toBe(2);
  const second = batcher.call(5);
  expect(sent).toEqual([[1], [5]]);
  expect(await second).toBe(10);
});

test("a statement that fails rejects every call it carried, and the calls after it go out and are answered", {
  timeout: 2_000,
}, async () => {
  const { batcher, sent } = doubling((inputs) => inputs.includes(2));
  const outcomes = await Promise.allSettled([batcher.call(1), batcher.call(2), batcher.call(3)]);
  expect(outcomes).toEqual([
    { status: "fulfilled", value: 2 },
    { status: "rejected", reason: new Error("refused 2,3") },
    { status: "rejected", reason: new Error("refused 2,3") },
  ]);
  expect(await batcher.call(4)).toBe(8);
  expect(sent).toEqual([[1], [2, 3], [4]]);
});
