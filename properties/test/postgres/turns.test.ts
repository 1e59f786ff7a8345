/**
 * The turns of a queue object with prefetched leases (docs/spec.md §20.18), without a database: shared turns run
 * together, a turn alone runs by itself, and turns start in the order they were asked for, so that a stream of
 * shared turns never starves one alone.
 *
 * The test ends each turn's work by hand and looks at what started after each step, once the callbacks ran (a
 * macrotask): a turn that never starts, or never answers, fails the step at once instead of leaving the test waiting.
 */
import { expect, test } from "vitest";
import { Turns } from "../../../src/postgres/turns.js";

/** Lets every callback already due run: the turns here settle within microtasks. */
const settle = () => new Promise((resolve) => setImmediate(resolve));

/** Turns whose work logs its start (`name+`) and waits until the test ends it (`name-`), answering or throwing. */
function byHand() {
  const turns = new Turns();
  const log: string[] = [];
  /** How each turn answered, in the order they did: its name, or its error's message. */
  const answers: string[] = [];
  const ends = new Map<string, (fail: boolean) => void>();
  const ask = (kind: "shared" | "alone", name: string) => {
    const work = () => {
      log.push(`${name}+`);
      return new Promise<string>((resolve, reject) => {
        ends.set(name, (fail) => {
          log.push(`${name}-`);
          if (fail) reject(new Error(`${name} failed`));
          else resolve(name);
        });
      });
    };
    turns[kind](work).then(
      (answer) => answers.push(answer),
      (error: unknown) => answers.push((error as Error).message),
    );
  };
  /** Ends the work of `name`, which must have started, then lets the turns after it start. */
  const end = async (name: string, fail = false) => {
    const ending = ends.get(name);
    if (ending === undefined) throw new Error(`${name} has not started`);
    ending(fail);
    await settle();
  };
  return { ask, end, log, answers };
}

test("shared turns run together; a turn alone waits for them and runs by itself; shared turns asked for after it wait for it", async () => {
  const { ask, end, log, answers } = byHand();
  ask("shared", "s1");
  ask("shared", "s2");
  ask("alone", "a");
  ask("shared", "s3");
  ask("shared", "s4");
  ask("alone", "b");
  await settle();
  expect(log).toEqual(["s1+", "s2+"]);
  await end("s1");
  expect(log.slice(2)).toEqual(["s1-"]); // a waits for s2 too
  await end("s2");
  expect(log.slice(3)).toEqual(["s2-", "a+"]); // s3 and s4 wait for a
  await end("a");
  expect(log.slice(5)).toEqual(["a-", "s3+", "s4+"]);
  await end("s4");
  expect(log.slice(8)).toEqual(["s4-"]); // b waits for s3 too
  await end("s3");
  expect(log.slice(9)).toEqual(["s3-", "b+"]);
  await end("b");
  expect(log.slice(11)).toEqual(["b-"]);
  expect(answers).toEqual(["s1", "s2", "a", "s4", "s3", "b"]);
});

test("a turn alone that starts at once runs by itself: a shared turn asked for meanwhile waits for it", async () => {
  const { ask, end, log, answers } = byHand();
  ask("alone", "a");
  ask("shared", "s");
  await settle();
  expect(log).toEqual(["a+"]);
  await end("a");
  expect(log).toEqual(["a+", "a-", "s+"]);
  await end("s");
  expect(answers).toEqual(["a", "s"]);
});

test("a turn that throws rejects with its error and ends: the turns after it run", async () => {
  const { ask, end, log, answers } = byHand();
  ask("alone", "a");
  ask("shared", "s");
  ask("alone", "b");
  await settle();
  await end("a", true);
  expect(answers).toEqual(["a failed"]);
  await end("s", true);
  expect(answers).toEqual(["a failed", "s failed"]);
  await end("b");
  expect(log).toEqual(["a+", "a-", "s+", "s-", "b+", "b-"]);
  expect(answers).toEqual(["a failed", "s failed", "b"]);
});
