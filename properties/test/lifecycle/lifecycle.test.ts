/**
 * The reference queue's lifecycle under random interleavings (docs/spec.md §12–§14, §17.7), through the public gate
 * `checkLifecycle`: producers, consumers that take or loop with `for await`, shutdown, drains, aborts and, with
 * time, delayed adds and steps of the clock, at moments fast-check's scheduler chooses, checked against the model of
 * the lifecycle before every step.
 */
import { assert, expect, test } from "vitest";
import { WorkQueue } from "../../../src/index.js";
import { checkLifecycle, type LifecycleReport } from "../../lifecycle/check-lifecycle.js";
import { formatReport } from "../../report/text.js";
import { runs, seed } from "../settings.js";

/** Fails with the broken rule, the interleaving, the seed and the replay, unless the report conforms. */
function expectKeeps(report: LifecycleReport, title: string): void {
  const text = formatReport(report, (token) => `WORKQUEUE_REPLAY=${token} npm test -- -t "${title}"`);
  if (report.verdict !== "conforms") assert.fail(text);
}

test("takes, for await, shutdown, drains and aborts answer as the model of the lifecycle does, under every interleaving", async (ctx) => {
  const report = await checkLifecycle((options) => new WorkQueue<string>(options), { runs: runs(300), seed });
  expectKeeps(report, ctx.task.name);
  expect(report.unchecked).toEqual([]);
});

test("with time, drains and takes wait for the waiting items, under every interleaving", async (ctx) => {
  const report = await checkLifecycle((options) => new WorkQueue<string>(options), {
    runs: runs(200),
    seed,
    time: true,
  });
  expectKeeps(report, ctx.task.name);
  expect([report.time, report.unchecked]).toEqual([true, []]);
});

test("a queue without shutDown, shutDownWithDrain or for await is checked without them, and they are listed", async () => {
  const factory = (options: { maxRetries: number }) => {
    const queue = new WorkQueue<string>(options);
    return {
      add: (item: string) => queue.add(item),
      done: (item: string) => queue.done(item),
      retry: (item: string) => queue.retry(item),
      forget: (item: string) => queue.forget(item),
      take: (options?: { signal?: AbortSignal | undefined }) => queue.take(options),
      size: () => queue.size,
    };
  };
  const report = await checkLifecycle(factory, { runs: runs(50), seed });
  expect([report.verdict, report.unchecked]).toEqual([
    "conforms",
    ["shutDown", "shutDownWithDrain", "for await", "inFlight", "shuttingDown"],
  ]);
});
