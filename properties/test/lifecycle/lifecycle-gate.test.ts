/**
 * The public surface of the lifecycle check: the vitest helper registers a test that fails with the rule, the
 * interleaving, the seed and a replay command that works when pasted (`WORKQUEUE_REPLAY`); a replay token under the
 * other `time`, a token that is not one, and a queue without a verb the check needs are refused as usage errors; and
 * a shrinking budget that runs out still answers a counterexample that its token replays.
 */
import { afterEach, expect, test, vi } from "vitest";
import { WorkQueue } from "../../../src/index.js";
import { OptionError } from "../../core/errors.js";
import { checkLifecycle } from "../../lifecycle/check-lifecycle.js";
import { lifecycleRules } from "../../lifecycle/rules.js";
import { lifecycleTests } from "../../report/lifecycle-tests.js";
import { seed } from "../settings.js";
import { EarlyDrain, NewestTakeFirst } from "../wrong/lifecycle.js";

afterEach(() => {
  vi.unstubAllEnvs();
});

/** Registers the helper's tests with a runner that keeps them, and runs one. */
async function registered(factory: Parameters<typeof lifecycleTests>[1], options = {}) {
  const tests: [string, () => Promise<void>][] = [];
  lifecycleTests((name, fn) => tests.push([name, fn]), factory, { seed, ...options });
  const [name, fn] = tests[0] as [string, () => Promise<void>];
  const error = await fn().then(
    () => undefined,
    (e: unknown) => e as Error,
  );
  return { names: tests.map(([n]) => n), name, error };
}

test("lifecycleTests registers one test that passes for the reference queue, named with time when time is checked", async () => {
  const plain = await registered((options) => new WorkQueue<string>(options), { runs: 20 });
  const timed = await registered((options) => new WorkQueue<string>(options), { runs: 20, time: true });
  // Each name ends with the file and line of the lifecycleTests call, in `registered`.
  expect([plain.names, plain.error, timed.names, timed.error]).toEqual([
    [expect.stringMatching(/^the queue keeps the lifecycle rules of workqueue-spec \[lifecycle-gate\.test\.ts:\d+\]$/)],
    undefined,
    [
      expect.stringMatching(
        /^the queue keeps the lifecycle rules of workqueue-spec \(with time\) \[lifecycle-gate\.test\.ts:\d+\]$/,
      ),
    ],
    undefined,
  ]);
});

test("a failing lifecycle test names the rule, and its printed replay, pasted, fails the same way", async () => {
  const factory = (options: { maxRetries: number }) => new NewestTakeFirst(options);
  const { name, error } = await registered(factory);
  const message = error?.message ?? "";
  expect(message).toContain(`${lifecycleRules.fifo.name} (docs/spec.md ${lifecycleRules.fifo.rule})`);
  const replay = /replay: WORKQUEUE_REPLAY=(\S+) npx vitest run -t '(.+)'$/m.exec(message);
  // vitest reads the pattern as a regular expression: it must select this test's name.
  expect(new RegExp(replay?.[2] ?? "^$").test(name)).toBe(true);
  vi.stubEnv("WORKQUEUE_REPLAY", replay?.[1] ?? "");
  const again = (await registered(factory)).error?.message ?? "";
  expect(again).toContain(`${lifecycleRules.fifo.name} (docs/spec.md ${lifecycleRules.fifo.rule})`);
  expect(again).toMatch(/^ {2}found after 1 run, /m);
  expect(again.slice(0, again.indexOf("\n  found after"))).toBe(message.slice(0, message.indexOf("\n  found after")));
});

test("WORKQUEUE_SEED fixes the seed of lifecycleTests given none; checkLifecycle reads only its options", async () => {
  vi.stubEnv("WORKQUEUE_SEED", "42");
  const { error } = await registered((options) => new NewestTakeFirst(options), { seed: undefined });
  expect(error?.message).toMatch(/\(seed 42\b/);
  const direct = await checkLifecycle((options) => new WorkQueue<string>(options), { runs: 5 });
  expect(direct.seed).not.toBe(42);
});

test("a replay token under the other time, or one that is not a lifecycle token, is refused with an OptionError", async () => {
  const factory = (options: { maxRetries: number }) => new WorkQueue<string>(options);
  const token = "lifecycle-1:5:untimed:0:1";
  await expect(checkLifecycle(factory, { replay: token, time: true })).rejects.toThrow(
    new OptionError("The replay token was made with `time: false`; this check runs with `time: true`"),
  );
  await expect(checkLifecycle(factory, { replay: "abc" })).rejects.toThrow(OptionError);
  vi.stubEnv("WORKQUEUE_REPLAY", "a-conformance-token"); // another helper's token: not this one's to read
  expect((await registered(factory, { runs: 5 })).error).toBeUndefined();
});

test("a queue without take, or without addAfter when time is checked, is refused up front with the verb named", async () => {
  const queue = new WorkQueue<string>({ maxRetries: 1 });
  const noTake = { add: () => {}, done: () => {}, retry: () => false, forget: () => {} };
  await expect(checkLifecycle(() => noTake as never)).rejects.toThrow(
    new OptionError("The queue has no `take` method, which the lifecycle check needs"),
  );
  const noAddAfter = { ...noTake, take: () => queue.take() };
  await expect(checkLifecycle(() => noAddAfter, { time: true })).rejects.toThrow(/no `addAfter` method/);
});

test("when the shrinking budget runs out, the counterexample says it may not be minimal, and its token replays it", async () => {
  const factory = (options: { maxRetries: number }) => new EarlyDrain(options);
  const report = await checkLifecycle(factory, { seed, shrinkTimeMs: 0 });
  const example = report.counterexample;
  expect([report.verdict, example?.minimal, example?.rule]).toEqual([
    "does not conform",
    false,
    lifecycleRules.drainExact,
  ]);
  const again = await checkLifecycle(factory, { replay: example?.replay });
  expect([again.counterexample?.detail, again.counterexample?.log]).toEqual([example?.detail, example?.log]);
});
