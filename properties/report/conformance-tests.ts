/**
 * The one-line helper that adds the conformance check to someone else's test suite.
 */
import { basename } from "node:path";
import type { Profile } from "../core/commands.js";
import type { SubjectFactory } from "../core/subject.js";
import { checkConformance } from "../sequential/check-conformance.js";
import type { ConformanceOptions } from "../sequential/options.js";
import { formatReport } from "./text.js";

/**
 * A test-registering function such as vitest's, jest's or `node:test`'s `test(name, fn)`.
 *
 * @inline
 */
export type TestFunction = (name: string, fn: () => Promise<void>, timeout?: number) => unknown;

/**
 * The timeout each test asks for, in milliseconds, from runners that take one as a third argument (vitest, jest):
 * a check of deep runs takes seconds, more than their 5-second default on a busy machine. `node:test` ignores it.
 */
const timeoutMs = 120_000;

/**
 * The command that replays `token` in the test named `name`, to paste into a shell. Vitest reads `-t` as a regular
 * expression: the name's metacharacters (the parentheses of "(contract profile)") are escaped, or the pattern would
 * match nothing and the command would skip every test and pass; the end is anchored, so that a test whose name
 * only begins the same ("… (with time)") does not run too; single quotes keep the shell off the pattern.
 *
 * @internal
 */
export function vitestReplay(name: string, token: string): string {
  const pattern = `${name.replace(/[\\^$.*+?()[\]{}|]/g, "\\$&")}$`;
  return `WORKQUEUE_REPLAY=${token} npx vitest run -t '${pattern.replaceAll("'", "'\\''")}'`;
}

/**
 * What the test helpers take besides the check's own options.
 *
 * @inline
 */
export interface TestsOptions {
  /**
   * Ends each test's name, in brackets, so that the name is unique to the call and a printed replay runs that test
   * alone. @defaultValue the file and line of the call, as `my-queue.test.ts:12`, which moves when the line does:
   * give a label for a name that stays.
   */
  readonly label?: string | undefined;
}

/**
 * The replay token in the environment variable `WORKQUEUE_REPLAY`, which the command a helper prints sets, or
 * `undefined` when it is unset or empty. The test helpers are the only readers of the environment: a check called
 * directly reads its options alone.
 *
 * @internal
 */
export function replayInEnvironment(): string | undefined {
  const token = process.env.WORKQUEUE_REPLAY;
  return token === "" ? undefined : token;
}

/**
 * The file and line that called `helper`, as `my-queue.test.ts:12` (the runner's source maps apply), or
 * `undefined` when the stack does not say.
 *
 * @internal
 */
export function callSite(helper: (...args: never[]) => unknown): string | undefined {
  const holder: { stack?: string } = {};
  Error.captureStackTrace(holder, helper);
  const frame = holder.stack?.split("\n")[1] ?? "";
  const place = /\(?([^\s()]+):(\d+):\d+\)?$/.exec(frame);
  return place === null ? undefined : `${basename(place[1] as string)}:${place[2]}`;
}

/**
 * `name`, ended by `label` in brackets when there is one.
 *
 * @internal
 */
export function labelled(name: string, label: string | undefined): string {
  return label === undefined ? name : `${name} [${label}]`;
}

/**
 * Registers one test per profile that checks the queues `factory` makes against the model, and fails with the
 * counterexample and its replay token. Works with any runner whose `test(name, fn)` awaits `fn`.
 *
 * Each test asks for a 120-second timeout (vitest and jest take it as the third argument of `test`); a much larger
 * `runs` may need more.
 *
 * @param test - The runner's `test(name, fn)`.
 * @param factory - Makes a fresh, empty queue from `{ maxRetries }`, once per run.
 * @param options - What to check, as for `checkConformance`, but the profile: each test checks one; and `label`,
 * which ends each test's name (see its `label` option).
 * @example
 * ```ts
 * import { test } from "vitest";
 * import { conformanceTests } from "workqueue-spec/properties";
 *
 * conformanceTests(test, (options) => new MyQueue(options));
 * // "the queue conforms to workqueue-spec (contract profile) [my-queue.test.ts:4]", and the robust profile's
 * conformanceTests(test, (options) => new MyQueue(options), { label: "MyQueue" });
 * // "the queue conforms to workqueue-spec (contract profile) [MyQueue]", …
 * ```
 *
 * @public
 */
export function conformanceTests<T>(
  test: TestFunction,
  factory: SubjectFactory<T>,
  options: Omit<ConformanceOptions, "profile"> & TestsOptions = {},
): void {
  const { label = callSite(conformanceTests), ...check } = options;
  for (const profile of ["contract", "robust"] satisfies Profile[]) {
    const name = labelled(`the queue conforms to workqueue-spec (${profile} profile)`, label);
    test(
      name,
      async () => {
        const report = await checkConformance(factory, {
          ...check,
          replay: check.replay ?? replayInEnvironment(),
          profile,
        });
        if (report.verdict !== "conforms") {
          // The token carries the profile, so only the test of that profile may run it: `-t` picks that one.
          throw new Error(formatReport(report, (token) => vitestReplay(name, token)));
        }
      },
      timeoutMs,
    );
  }
}
