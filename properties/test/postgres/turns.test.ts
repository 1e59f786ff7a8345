/**
 * The turns of a queue object with prefetched leases (docs/spec.md §20.18), without a database: shared turns run
 * together, a turn alone runs by itself, and turns start in the order they were asked for, so that a stream of
 * shared turns never starves one alone.
 */
import { expect, test } from "vitest";
import { Turns } from "../../../src/postgres/turns.js";

/** A turn's work: logs its start and end around a macrotask; `fail` makes it throw. */
function work(log: string[], name: string, fail = false) {
  return async () => {
    log.push(`${name}+`);
    await new Promise((resolve) => setTimeout(resolve, 1));
    log.push(`${name}-`);
    if (fail) throw new Error(`${name} failed`);
    return name;
  };
}

test("shared turns run together; a turn alone waits for them and runs by itself; shared turns asked for after it wait for it", async () => {
  const turns = new Turns();
  const log: string[] = [];
  const answers = await Promise.all([
    turns.shared(work(log, "s1")),
    turns.shared(work(log, "s2")),
    turns.alone(work(log, "a")),
    turns.shared(work(log, "s3")),
    turns.shared(work(log, "s4")),
    turns.alone(work(log, "b")),
  ]);
  expect(answers).toEqual(["s1", "s2", "a", "s3", "s4", "b"]);
  expect(log).toEqual(["s1+", "s2+", "s1-", "s2-", "a+", "a-", "s3+", "s4+", "s3-", "s4-", "b+", "b-"]);
});

test("a turn alone that starts at once runs by itself: a shared turn asked for meanwhile waits for it", async () => {
  const turns = new Turns();
  const log: string[] = [];
  await Promise.all([turns.alone(work(log, "a")), turns.shared(work(log, "s"))]);
  expect(log).toEqual(["a+", "a-", "s+", "s-"]);
});

test("a turn that throws rejects with its error and ends: the turns after it run", async () => {
  const turns = new Turns();
  const log: string[] = [];
  const failed = turns.alone(work(log, "a", true)).catch((error: unknown) => (error as Error).message);
  const shared = turns.shared(work(log, "s", true)).catch((error: unknown) => (error as Error).message);
  const after = turns.alone(work(log, "b"));
  expect(await Promise.all([failed, shared, after])).toEqual(["a failed", "s failed", "b"]);
  expect(log).toEqual(["a+", "a-", "s+", "s-", "b+", "b-"]);
});
