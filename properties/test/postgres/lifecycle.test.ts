/**
 * `PostgresWorkQueue`'s lifecycle through `checkLifecycle` (docs/spec.md §12–§14, §17.7, §20.10): takes, `for await`,
 * shutdown, drains and aborts, with and without time (the check's virtual clock, injected, §20.6), every call
 * awaited (`awaitCalls`) and takes waiting for the leases in flight while shutting down (`leases`). Each run has a
 * queue of its own in this suite's schema; the one before it is closed first, so that its listening connection
 * goes back. And the check fails a wrong PostgreSQL-backed queue under the rule it breaks — and the queue itself
 * without the adapter's line of takes (lifecycle-adapter.ts), whose instance serves its own waiting takes in the
 * order they look again (§20.10, §20.11).
 */
import { afterAll, assert, expect, test } from "vitest";
import type { Clock } from "../../../src/clock.js";
import { PostgresWorkQueue } from "../../../src/postgres/index.js";
import type { SubjectOptions } from "../../core/subject.js";
import { checkLifecycle, type LifecycleOptions, type LifecycleReport } from "../../lifecycle/check-lifecycle.js";
import type { LifecycleSubject } from "../../lifecycle/scenario.js";
import { formatLifecycleReport } from "../../report/lifecycle-text.js";
import { replay, runs, seed } from "../settings.js";
import { freshName, freshSchema } from "./database.js";
import { lifecycleSubject, watched } from "./lifecycle-adapter.js";

const { pool: plain, schema } = freshSchema("lifecycle");
const { pool, idle } = watched(plain);

/** The queues made so far: each run's is closed when the next is made, the last after the suite. */
const made: PostgresWorkQueue[] = [];
afterAll(async () => {
  for (const queue of made) await queue.close();
});

/** A fresh queue on `clock` (the check's, with time) polling every minute only, so that only wakes serve takes. */
async function queueOn(maxRetries: number, clock: Clock | undefined): Promise<PostgresWorkQueue> {
  await made.at(-1)?.close();
  const queue = new PostgresWorkQueue({ pool, schema, name: freshName(), maxRetries, clock, pollMs: 60_000 });
  made.push(queue);
  return queue;
}

const postgres = async ({ maxRetries, clock }: SubjectOptions) =>
  lifecycleSubject(await queueOn(maxRetries, clock), idle);

/** The seed: fixed, unless `WORKQUEUE_SEED` gives one. */
const fixed = seed ?? 20261206;

/** The options of every check here: awaited calls, leases, few runs (each call is a round trip). */
const options = (time: boolean): LifecycleOptions => ({
  awaitCalls: true,
  leases: true,
  time,
  seed: fixed,
  replay,
  runs: runs(40),
});

/** Fails with the broken rule, the interleaving, the seed and the replay, unless the report conforms. */
function expectKeeps(report: LifecycleReport, title: string): void {
  const text = formatLifecycleReport(report, (token) => `WORKQUEUE_REPLAY=${token} npm test -- -t "${title}"`);
  if (report.verdict !== "conforms") assert.fail(text);
}

for (const time of [false, true]) {
  const title = `${time ? "with time, " : ""}PostgreSQL's takes, for await, shutdown, drains and aborts answer as the model of the lifecycle does`;
  test(title, async (ctx) => {
    const report = await checkLifecycle(postgres, options(time));
    expectKeeps(report, ctx.task.name);
    expect([report.time, report.unchecked]).toEqual([time, []]);
  }, 120_000);
}

/**
 * The check on a wrong queue: few shrinks; `timeoutMs`, the wait for a take that should have settled, short for a
 * queue whose bug is a take that never does (a take or drain that settled wrongly is compared at once).
 */
const wrong = (time: boolean, timeoutMs = 5000): LifecycleOptions => ({
  ...options(time),
  runs: 40,
  replay: undefined,
  shrinkRuns: 20,
  timeoutMs,
});

test("a PostgreSQL queue whose take never wakes on a due item is found: its take still waits where the model's resolved", async () => {
  // The queue's clock never fires a timer: a take or drain sleeping until a due time sleeps until its poll.
  const deaf = async ({ maxRetries, clock }: SubjectOptions) => {
    const now = clock as Clock;
    const never: Clock = { now: () => now.now(), schedule: () => () => {} };
    return lifecycleSubject(await queueOn(maxRetries, never), idle);
  };
  const report = await checkLifecycle(deaf, wrong(true, 500));
  expect(report.verdict).toBe("does not conform");
  expect(report.counterexample?.detail).toMatch(/still waits, but in the model it resolved with "[abc]"/);
  expect(["fifo", "iteration"]).toContain(report.counterexample?.rule.id);
}, 120_000);

test("a PostgreSQL queue whose drain resolves while a lease is in flight is found under the drain's rule", async () => {
  const hasty = async (options: SubjectOptions): Promise<LifecycleSubject> => {
    const queue = await queueOn(options.maxRetries, options.clock);
    return {
      ...lifecycleSubject(queue, idle),
      async shutDownWithDrain(wait) {
        await queue.shutDown();
        if ((await queue.size()) + (await queue.waiting()) === 0) return; // the leases in flight are forgotten
        await queue.shutDownWithDrain(wait);
      },
    };
  };
  const report = await checkLifecycle(hasty, wrong(false));
  expect(report.verdict).toBe("does not conform");
  expect(report.counterexample?.rule.id).toBe("drainExact");
  expect(report.counterexample?.detail).toMatch(/resolved with undefined, but in the model it still waits/);
}, 120_000);

test("without the adapter's line, the check finds that one instance serves its waiting takes in the order they look again, not called (§14.3; §20.10, §20.11)", async () => {
  const own = async ({ maxRetries, clock }: SubjectOptions) =>
    lifecycleSubject(await queueOn(maxRetries, clock), idle, false);
  const report = await checkLifecycle(own, wrong(false));
  expect(report.verdict).toBe("does not conform");
  expect(["fifo", "iteration"]).toContain(report.counterexample?.rule.id);
}, 120_000);
