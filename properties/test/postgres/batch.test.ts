/**
 * The batcher under `PostgresWorkQueue`'s `add` and `done` (docs/spec.md §20.1), without a database: the first call
 * goes out at once, the calls made while a statement is in flight go out together after it, each call is answered
 * by its own result or by its statement's error, and the batcher is idle again once nothing waits. Under a queue
 * object, over a pool that answers by hand: a done or a forget alone is its own function's statement, and a finish
 * (forget and done, §20.12) always one `finish_many`, whose answer names the refused verb.
 *
 * The test answers each statement by hand and looks at what went out and what was answered after each step, once
 * the callbacks ran (a macrotask): a call that never goes out, or is never answered, fails the step at once instead
 * of leaving the test waiting.
 */
import { expect, test } from "vitest";
import { Batcher } from "../../../src/postgres/batch.js";
import { PostgresWorkQueue } from "../../../src/postgres/index.js";

/** Lets every callback already due run: the batcher settles within microtasks once its statement answered. */
const settle = () => new Promise((resolve) => setImmediate(resolve));

/**
 * A batcher whose statements the test answers by hand, with each input doubled or with an error; it records what
 * each statement carried and how each call was answered, in the order they were.
 */
function byHand() {
  const sent: (readonly number[])[] = [];
  const pending: ((fail: boolean) => void)[] = [];
  const answers: unknown[] = [];
  const batcher = new Batcher<number, number>(
    (inputs) =>
      new Promise((resolve, reject) => {
        sent.push(inputs);
        pending.push((fail) => {
          if (fail) reject(new Error(`refused ${inputs.join(",")}`));
          else resolve(inputs.map((input) => input * 2));
        });
      }),
  );
  const call = (input: number) => {
    batcher.call(input).then(
      (output) => answers.push(output),
      (error: unknown) => answers.push((error as Error).message),
    );
  };
  /** Answers the oldest statement not yet answered, then lets what follows from it run. */
  const answer = async (fail = false) => {
    const next = pending.shift();
    if (next === undefined) throw new Error("no statement is in flight");
    next(fail);
    await settle();
  };
  return { call, answer, sent, answers };
}

test("a call alone goes out at once; the calls made while it is in flight go out together after it, each answered by its own result", async () => {
  const { call, answer, sent, answers } = byHand();
  call(1);
  expect(sent).toEqual([[1]]); // at once, before anything else happens
  call(2);
  call(3);
  await settle();
  expect(sent).toEqual([[1]]); // 2 and 3 wait for the statement in flight
  await answer();
  expect(answers).toEqual([2]);
  expect(sent).toEqual([[1], [2, 3]]);
  await answer();
  expect(answers).toEqual([2, 4, 6]);
  expect(sent).toEqual([[1], [2, 3]]); // nothing more goes out once nothing waits
});

test("a call made once the batcher is idle again goes out at once, alone", async () => {
  const { call, answer, sent, answers } = byHand();
  call(1);
  await answer();
  expect(answers).toEqual([2]);
  call(5);
  expect(sent).toEqual([[1], [5]]);
  await answer();
  expect(answers).toEqual([2, 10]);
});

test("a statement that fails rejects every call it carried, and the calls after it go out and are answered", async () => {
  const { call, answer, sent, answers } = byHand();
  call(1);
  call(2);
  call(3);
  await answer();
  await answer(true);
  expect(answers).toEqual([2, "refused 2,3", "refused 2,3"]);
  call(4);
  await answer();
  expect(answers).toEqual([2, "refused 2,3", "refused 2,3", 8]);
  expect(sent).toEqual([[1], [2, 3], [4]]);
});

test("a finish is one finish_many statement, even alone, where a done or forget alone is done or forget; refused, it names forget when its forget was refused, and done when the forget was applied and the done refused", async () => {
  const statements: string[] = [];
  let row: Record<string, unknown> = {};
  const answer = async (text: string) => {
    statements.push(text.slice(text.indexOf(".") + 1, text.indexOf("(")));
    return { rows: [row] };
  };
  const pool = {
    query: answer,
    connect: async () => ({ query: answer, on: () => undefined, release: () => undefined }),
  };
  const queue = new PostgresWorkQueue({ pool, name: "q", maxRetries: 3 });
  const lease = { item: "a", token: 7, expiresAt: 0 };
  row = { forgot: "stale", answer: null, worked_ms: null }; // as finish_many answers a refused forget
  await expect(queue.finish(lease)).rejects.toThrow(
    'forget("a") refused: the lease with token 7 expired, was done or was superseded; nothing changed',
  );
  // reachable only when the lease expires between the forget and the done of one statement
  row = { forgot: "ok", answer: "stale", worked_ms: null };
  await expect(queue.finish(lease)).rejects.toThrow('done("a") refused: the lease with token 7');
  row = { forgot: "ok", answer: "ok", worked_ms: 3 };
  await queue.finish(lease);
  await queue.done(lease); // a done or a forget alone is its own function's statement (one row, named answer)
  await queue.forget(lease);
  expect(statements).toEqual(["finish_many", "finish_many", "finish_many", "done", "forget"]);
});
