/**
 * The one-line helper that adds the lifecycle check to someone else's test suite.
 */
import { isLifecycleReplay } from "../core/replay.js";
import { checkLifecycle, type LifecycleOptions } from "../lifecycle/check-lifecycle.js";
import type { LifecycleFactory } from "../lifecycle/scenario.js";
import {
  callSite,
  labelled,
  replayInEnvironment,
  type TestFunction,
  type TestsOptions,
  vitestReplay,
} from "./conformance-tests.js";
import { formatReport } from "./text.js";

/** The timeout each test asks for, in milliseconds, from runners that take one (see `conformanceTests`). */
const timeoutMs = 120_000;

/**
 * The options that the environment adds to a lifecycle check's own: the replay in `WORKQUEUE_REPLAY` when it is a
 * lifecycle token (a conformance token there is the other helper's), and the seed in `WORKQUEUE_SEED`.
 */
function fromEnvironment(options: LifecycleOptions): LifecycleOptions {
  const token = replayInEnvironment();
  const seed = process.env.WORKQUEUE_SEED;
  return {
    ...options,
    replay: options.replay ?? (token !== undefined && isLifecycleReplay(token) ? token : undefined),
    seed: options.seed ?? (seed === undefined ? undefined : Number(seed)),
  };
}

/**
 * Registers one test that checks the lifecycle of the queues `factory` makes (see {@link checkLifecycle}), and
 * fails with the broken rule, the interleaving, the seed and the command that replays it. With `time`, the test's
 * name says so, so that a project can register both.
 *
 * @param test - The runner's `test(name, fn)`.
 * @param factory - Makes a fresh, empty queue from `{ maxRetries }` (and `clock`, with `time`), once per run.
 * @param options - What to check, as for `checkLifecycle`; and `label`, which ends the test's name: the file and line of
 * the call by default, or a label that stays when the line moves.
 * @example
 * ```ts
 * import { test } from "vitest";
 * import { lifecycleTests } from "workqueue-spec/properties";
 *
 * lifecycleTests(test, (options) => new MyQueue(options));
 * lifecycleTests(test, (options) => new MyQueue(options), { time: true });
 * ```
 *
 * @public
 */
export function lifecycleTests(
  test: TestFunction,
  factory: LifecycleFactory,
  options: LifecycleOptions & TestsOptions = {},
): void {
  const { label = callSite(lifecycleTests), ...check } = options;
  const timed = check.time === true ? " (with time)" : "";
  const name = labelled(`the queue keeps the lifecycle rules of workqueue-spec${timed}`, label);
  test(
    name,
    async () => {
      const report = await checkLifecycle(factory, fromEnvironment(check));
      if (report.verdict !== "conforms") {
        throw new Error(formatReport(report, (token) => vitestReplay(name, token)));
      }
    },
    timeoutMs,
  );
}
