/**
 * The one-line helper that adds the conformance check to someone else's test suite.
 */
import type { Profile } from "../engine/commands.js";
import { type ConformanceOptions, checkConformance } from "../engine/conformance.js";
import type { SubjectFactory } from "../engine/subject.js";
import { formatReport } from "./text.js";

/**
 * A test-registering function such as vitest's, jest's or `node:test`'s `test(name, fn)`.
 *
 * @public
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
 * Registers one test per profile that checks the queues `factory` makes against the model, and fails with the
 * counterexample and its replay token. Works with any runner whose `test(name, fn)` awaits `fn`.
 *
 * Each test asks for a 120-second timeout (vitest and jest take it as the third argument of `test`); a much larger
 * `runs` may need more.
 *
 * @param test - The runner's `test(name, fn)`.
 * @param factory - Makes a fresh, empty queue from `{ maxRetries }`, once per run.
 * @param options - What to check, as for `checkConformance`, but the profile: each test checks one.
 * @example
 * ```ts
 * import { test } from "vitest";
 * import { conformanceTests } from "workqueue-spec/properties";
 *
 * conformanceTests(test, (options) => new MyQueue(options));
 * ```
 *
 * @public
 */
export function conformanceTests<T>(
  test: TestFunction,
  factory: SubjectFactory<T>,
  options: Omit<ConformanceOptions, "profile"> = {},
): void {
  for (const profile of ["contract", "robust"] satisfies Profile[]) {
    const name = `the queue conforms to workqueue-spec (${profile} profile)`;
    test(
      name,
      async () => {
        const report = await checkConformance(factory, { ...options, profile });
        if (report.verdict !== "conforms") {
          // The token carries the profile, so only the test of that profile may run it: `-t` picks that one.
          throw new Error(formatReport(report, (token) => vitestReplay(name, token)));
        }
      },
      timeoutMs,
    );
  }
}
