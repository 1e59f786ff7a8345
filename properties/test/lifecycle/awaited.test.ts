/**
 * `checkLifecycle` with `awaitCalls` (docs/spec.md §12–§14, §17.7), without a database: the reference queue and the
 * zoo of wrong queues behind a wrapper whose every call and view takes effect a turn after it is made and answers a
 * promise, as a queue over a network does. The reference queue keeps the rules, and each wrong one is still found
 * under the rule its bug breaks.
 */
import { describe, expect, test } from "vitest";
import { WorkQueue } from "../../../src/index.js";
import { flush } from "../../core/turns.js";
import { checkLifecycle, type LifecycleOptions } from "../../lifecycle/check-lifecycle.js";
import type { LifecycleRule } from "../../lifecycle/rules.js";
import type { LifecycleSubject, LifecycleWaitOptions } from "../../lifecycle/scenario.js";
import { formatReport } from "../../report/text.js";
import { runs, seed } from "../settings.js";
import { lifecycleZoo } from "../wrong/lifecycle.js";

/** `queue`, each call and view — and each step of `for await` — made a turn later and answered as a promise. */
function later(queue: WorkQueue<string>): LifecycleSubject {
  const after = async <V>(call: () => V | PromiseLike<V>): Promise<V> => {
    await flush();
    return call();
  };
  return {
    add: (item) => after(() => queue.add(item)),
    addAfter: (item, delayMs) => after(() => queue.addAfter(item, delayMs)),
    done: (item) => after(() => queue.done(item)),
    retry: (item) => after(() => queue.retry(item)),
    forget: (item) => after(() => queue.forget(item)),
    take: (options?: LifecycleWaitOptions) => after(() => queue.take(options)),
    shutDown: () => after(() => queue.shutDown()),
    shutDownWithDrain: (options?: LifecycleWaitOptions) => after(() => queue.shutDownWithDrain(options)),
    [Symbol.asyncIterator]: () => {
      const iterator = queue[Symbol.asyncIterator]();
      return {
        next: () => after(() => iterator.next()),
        return: async () => after(async () => (await iterator.return?.()) ?? { done: true, value: undefined }),
      };
    },
    size: () => after(() => queue.size),
    inFlight: () => after(() => queue.inFlight),
    shuttingDown: () => after(() => queue.shuttingDown),
    waiting: () => after(() => queue.waiting),
  };
}

// The reference queue is checked with the default `timeoutMs`, which a loaded machine needs, and without shrinking:
// a regression that leaves a take waiting costs `timeoutMs` per failing run, so shrinking it took 50 s, which
// mutation testing counted as a timeout, not a kill. The report still names the rule and replays; the untimed
// lifecycle suite (lifecycle.test.ts) shrinks the same regression in milliseconds.
for (const time of [false, true]) {
  test(`${time ? "with time, " : ""}the reference queue answering a turn later keeps the lifecycle rules when its calls are awaited`, async () => {
    const options: LifecycleOptions = { awaitCalls: true, time, seed, runs: runs(150), shrinkRuns: 0 };
    const report = await checkLifecycle((o) => later(new WorkQueue<string>(o)), options);
    expect(report.verdict, formatReport(report)).toBe("conforms");
    expect(report.unchecked).toEqual([]);
  });
}

describe.each(lifecycleZoo)("with awaitCalls, checkLifecycle rejects %s", (_, Queue, rules, time) => {
  const [rule] = rules as [LifecycleRule];
  test(`answering a turn later, naming the rule: ${rule.name} (${rule.rule})`, async () => {
    const options: LifecycleOptions = { awaitCalls: true, time, seed, runs: runs(400), timeoutMs: 50 };
    const report = await checkLifecycle((o) => later(new Queue(o)), options);
    const text = formatReport(report);
    expect(report.verdict, text).toBe("does not conform");
    expect(rules, text).toContain(report.counterexample?.rule);
  });
});
