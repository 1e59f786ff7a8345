/**
 * Each timed rule (docs/spec.md §17, §18.2) is blamed by its own check, with its id and a detail true of the queue:
 * a queue that answers and shows what the model does until the last call of a plan, and there answers or shows
 * something else, is blamed on the rule that the difference breaks.
 */
import { expect, test } from "vitest";
import type { Observation } from "../../core/driver.js";
import type { InvariantId, Views } from "../../core/invariants.js";
import type { Answer, Backoff, Operation } from "../../core/operation.js";
import { perform } from "../../core/subject.js";
import { modelOf, verify } from "../../core/verify.js";

const add = (item: unknown): Operation => ({ verb: "add", item });
const addAfter = (item: unknown, delayMs: unknown): Operation => ({ verb: "addAfter", item, delayMs });
const advance = (ms: number): Operation => ({ verb: "advance", ms });
const retry = (item: unknown): Operation => ({ verb: "retry", item });
const get: Operation = { verb: "get" };
const shutDown: Operation = { verb: "shutDown" };

/**
 * The id and detail that `verify` reports for a queue that answers and shows what the model does, but at the last
 * call of `plan` answers `last.answer` and shows `last.views` instead, if given.
 */
async function blame(plan: Operation[], last: { answer?: Answer; views?: Views }, backoff?: Backoff) {
  const shadow = modelOf(5, backoff);
  const observe = (operation: Operation, index: number): Observation => {
    const answer = perform(shadow, operation) as Answer;
    const views: Views = { size: shadow.size, inFlight: shadow.inFlight, waiting: shadow.waiting };
    if (index < plan.length - 1) return { answer, views };
    return { answer: last.answer ?? answer, views: { ...views, ...last.views } };
  };
  const violation = await verify({ maxRetries: 5, plan, backoff }, observe, { compareMessages: false });
  return violation === undefined ? undefined : `${violation.invariant.id}: ${violation.detail}`;
}

const thrown = (name: string, message: string): Answer => ({ kind: "error", name, message });
const backoff = { baseMs: 1, maxMs: 4 };

const cases: [string, Operation[], { answer?: Answer; views?: Views }, Backoff | undefined, InvariantId, string][] = [
  [
    "a fractional delay refused",
    [addAfter("a", 0.5)],
    { answer: thrown("RangeError", "not whole") },
    undefined,
    "add-after-errors",
    'addAfter("a", 0.5) throws RangeError: not whole, but only an item that is undefined or null, or a delay that is not a finite number, throws',
  ],
  [
    "a NaN delay taken as an add",
    [addAfter("a", Number.NaN)],
    { answer: { kind: "value", value: undefined }, views: { size: 1 } },
    undefined,
    "add-after-errors",
    'addAfter("a", NaN) answered undefined, but a delay of NaN throws a RangeError',
  ],
  [
    "a zero delay that waits",
    [addAfter("a", 0)],
    { views: { size: 0, waiting: 1 } },
    undefined,
    "not-positive-is-add",
    'addAfter("a", 0) must be add("a"), as its delay is not positive, but size is 0 (expected 1), waiting is 1 (expected 0)',
  ],
  [
    "a retry that makes a dirty item wait",
    [add("a"), get, add("a"), retry("a")],
    { views: { waiting: 1 } },
    backoff,
    "queued-or-dirty-does-not-wait",
    'retry("a") made "a" wait (waiting is 1 (expected 0)), but it was in flight + dirty, so it does not wait: the processing its done queues serves this request',
  ],
  [
    "a retry that does not back off",
    [retry("a")],
    { views: { size: 1, waiting: 0 } },
    backoff,
    "backoff",
    'retry("a") at failure 1 queued "a" at once, but it waits until 1: it backs off for 1 ms',
  ],
  [
    "an item that falls due early",
    [addAfter("a", 1.5), advance(1)],
    { views: { size: 1, waiting: 0 } },
    undefined,
    "nothing-before-due",
    'after advance(1) to 1, size is 1 (expected 0), waiting is 0 (expected 1), but the items still waiting are not due: "a" until 1.5 first',
  ],
  [
    "ties added in the wrong order",
    [addAfter("a", 1), addAfter("b", 1), advance(1), get],
    { answer: { kind: "value", value: "b" } },
    undefined,
    "due-order",
    'get() handed out "b" before "a", but both fell due at 1, and "a"\'s due time was set first',
  ],
  [
    "a wait lost when it falls due while shutting down",
    [addAfter("a", 1), shutDown, advance(1)],
    { views: { size: 0, waiting: 0 } },
    undefined,
    "waiting-survives-shutdown",
    'advance(1) while shutting down passed the due times of "a" at 1, but size is 0 (expected 1): a wait asked for before the shutdown is added when it falls due',
  ],
];

test.each(cases)("%s is blamed on its own rule", async (_name, plan, last, runBackoff, id, detail) => {
  expect(await blame(plan, last, runBackoff)).toBe(`${id}: ${detail}`);
});
