/**
 * The checks blame the rule that broke (properties/core/invariants.ts): a queue that answers as the model does
 * but for its last call, which answers or shows one thing wrong, is caught by the rule that this one thing breaks,
 * with a detail that says what it did.
 */
import { expect, test } from "vitest";
import type { Observation } from "../../core/driver.js";
import { invariant, invariants, type Views } from "../../core/invariants.js";
import type { Answer, Operation } from "../../core/operation.js";
import { perform } from "../../core/subject.js";
import { modelOf, verify } from "../../core/verify.js";
import { linearizable } from "../../overlap/check-overlapping.js";
import { independence } from "../../sequential/independence.js";

const add = (item: unknown): Operation => ({ verb: "add", item });
const done = (item: unknown): Operation => ({ verb: "done", item });
const retry = (item: unknown): Operation => ({ verb: "retry", item });
const get: Operation = { verb: "get" };
const value = (v: unknown): Answer => ({ kind: "value", value: v });

/**
 * The rule and detail that `verify` reports for a queue that answers and shows what the model does, but at the last
 * call of `plan` answers `last.answer` and shows `last.views` instead, if given.
 */
async function blame(plan: Operation[], last: { answer?: Answer; views?: Views }, maxRetries = 3) {
  const shadow = modelOf(maxRetries, undefined);
  const observe = (operation: Operation, index: number): Observation => {
    const answer = perform(shadow, operation) as Answer;
    const item = "item" in operation ? operation.item : undefined;
    const failures = item === undefined ? undefined : shadow.failures(item);
    const views: Views = {
      size: shadow.size,
      inFlight: shadow.inFlight,
      shuttingDown: shadow.shuttingDown,
      failures,
    };
    if (index < plan.length - 1) return { answer, views };
    return {
      answer: last.answer ?? answer,
      views: { ...views, ...last.views },
    };
  };
  const violation = await verify({ maxRetries, plan }, observe, {
    compareMessages: true,
  });
  return violation === undefined ? undefined : `${violation.invariant.name}: ${violation.detail}`;
}

test("a queue that answers as the model does keeps every rule", async () => {
  expect(await blame([add("a"), add(true), get, retry("a"), done("a")], {})).toBeUndefined();
  expect(
    await blame([add("a"), add("b"), get, shutDown, retry("a"), add("c"), done("a"), get, get], {}),
  ).toBeUndefined();
});

test("a queue that shows neither size nor failures keeps every rule: a view it does not offer is not compared", async () => {
  // The retry is the one call whose failure count the model gives even when the queue shows none.
  expect(await blame([add("a"), get, retry("a")], { views: { size: undefined, failures: undefined } })).toBeUndefined();
});

test("each invariant cites the sections of docs/spec.md that state it", () => {
  for (const invariant of invariants) expect(invariant.rule).toMatch(/^§\d+(\.\d+)?((, |–)§\d+(\.\d+)?)*$/);
});

test("a retry that answers true where it gives up is blamed on the give-up rule, even when the item true is queued", async () => {
  expect(await blame([add("a"), add(true), get, retry("a")], { answer: value(true) }, 0)).toBe(
    'retry gives up exactly when the failure count reaches maxRetries: retry("a") answered true at failure count 1 against maxRetries 0',
  );
});

const shutDown: Operation = { verb: "shutDown" };
const forget = (item: unknown): Operation => ({ verb: "forget", item });

/** Each plan, what its last call answers or shows instead of the model's, and the rule and detail blamed. */
const cases: [string, Operation[], { answer?: Answer; views?: Views }, string][] = [
  [
    "an item handed out twice",
    [add("a"), add("b"), get, get],
    { answer: value("a") },
    'an item is never handed out while it is in flight: get() handed out "a", which is still in flight',
  ],
  [
    "an item handed out twice, marked dirty since",
    [add("a"), add("b"), get, add("a"), get],
    { answer: value("a") },
    'an item is never handed out while it is in flight: get() handed out "a", which is still in flight',
  ],
  [
    "an item handed out that nothing queued",
    [add("a"), get],
    { answer: value("z") },
    'every answer equals the model\'s: get() answered "z", expected "a"',
  ],
  [
    "an item handed out out of order",
    [add("a"), add("b"), get],
    { answer: value("b") },
    'items are handed out in the order they were queued: get() handed out "b", but "a" was queued before it',
  ],
  [
    "an add queued while shutting down",
    [add("a"), shutDown, add("b")],
    { views: { size: 2 } },
    'while shutting down, add and retry request nothing: add("b") queued "b" while shutting down',
  ],
  [
    "a retry that answers true while shutting down",
    [add("a"), get, shutDown, retry("a")],
    { answer: value(true) },
    'while shutting down, add and retry request nothing: retry("a") answered true while shutting down',
  ],
  [
    "a done that drops a dirty mark",
    [add("a"), get, add("a"), done("a")],
    { views: { size: 0 } },
    'every add while in flight leads to exactly one later dispatch after done: done("a") did not requeue "a", which was marked dirty while in flight',
  ],
  [
    "a done that requeues what nobody marked",
    [add("a"), get, done("a")],
    { views: { size: 1 } },
    'every add while in flight leads to exactly one later dispatch after done: done("a") requeued "a", which nothing had marked dirty',
  ],
  [
    "a get that answers nothing while an item is queued",
    [add("a"), get],
    { answer: value(undefined) },
    'nothing queued is lost: get hands out an item whenever one is queued: get() answered undefined, but "a" was queued and the oldest',
  ],
  [
    "an add that queues a duplicate",
    [add("a"), add("a")],
    { views: { size: 2 } },
    'the queue holds no duplicate and nothing in flight: size is 2 after add("a"), but the model has 1 item queued, each once',
  ],
  [
    "an add that loses an item",
    [add("a"), add("b")],
    { views: { size: 1 } },
    'every answer equals the model\'s: after add("b"): expected size 2, got 1',
  ],
  [
    "a failure count off by one",
    [add("a"), get, retry("a")],
    { views: { failures: 2 } },
    'a failure count counts the retries since the last forget: failures("a") is 2, expected 1',
  ],
  [
    "a forget that answers",
    [add("a"), forget("a")],
    { answer: value(1) },
    'every answer equals the model\'s: forget("a") answered 1, expected undefined',
  ],
  [
    "a wrong in-flight count",
    [add("a"), get],
    { views: { inFlight: 0 } },
    "every answer equals the model's: after get(): expected inFlight 1, got 0",
  ],
  [
    "a wrong shutting-down flag",
    [add("a"), shutDown],
    { views: { shuttingDown: false } },
    "every answer equals the model's: after shutDown(): expected shuttingDown true, got false",
  ],
  [
    "a get that does not take its item while shutting down",
    [add("a"), shutDown, get],
    { views: { size: 1 } },
    "the queue holds no duplicate and nothing in flight: size is 1 after get(), but the model has 0 items queued, each once",
  ],
  [
    "an add that answers true while shutting down",
    [add("a"), shutDown, add("b")],
    { answer: value(true) },
    'every answer equals the model\'s: add("b") answered true, expected undefined',
  ],
  [
    "a retry that throws",
    [add("a"), get, retry("a")],
    { answer: { kind: "error", name: "Error", message: "boom" } },
    'every answer equals the model\'s: retry("a") answered throws Error: boom, expected true',
  ],
  [
    "a retry of undefined that answers false",
    [retry(undefined)],
    { answer: value(false) },
    "every answer equals the model's: retry(undefined) answered false, expected throws TypeError: Expected `item` to be a value other than undefined or null, got `undefined` (undefined)",
  ],
  [
    "a done that loses another item",
    [add("a"), get, add("b"), done("a")],
    { views: { size: 0 } },
    'every answer equals the model\'s: after done("a"): expected size 1, got 0',
  ],
  [
    "a get that throws while an item is queued",
    [add("a"), get],
    { answer: { kind: "error", name: "Error", message: "boom" } },
    'every answer equals the model\'s: get() answered throws Error: boom, expected "a"',
  ],
];

test.each(cases)("%s is blamed on the rule it breaks", async (_, plan, last, expected) => {
  expect(await blame(plan, last)).toBe(expected);
});

test("each rule has an id of its own, which stays as it is, by which code finds it whatever its sentence says", () => {
  const ids = invariants.map((each) => each.id);
  expect(new Set(ids).size).toBe(invariants.length);
  // Code and users' tests refer to these: renaming one is a breaking change, made here on purpose or not at all.
  expect(ids).toEqual([
    "never-handed-out-in-flight",
    "add-after-errors",
    "not-positive-is-add",
    "queued-or-dirty-does-not-wait",
    "backoff",
    "nothing-before-due",
    "waiting-survives-shutdown",
    "waiting-never-queued",
    "earlier-due-wins",
    "falls-due-on-advance",
    "due-order",
    "fifo",
    "shutting-down-requests-nothing",
    "gives-up-at-max-retries",
    "add-while-in-flight",
    "nothing-lost",
    "no-duplicate",
    "failure-count",
    "answers",
    "metrics",
  ]);
  expect([independence.id, linearizable.id]).toEqual(["independent-queues", "linearizable"]);
  for (const each of invariants) expect(invariant(each.id as Parameters<typeof invariant>[0])).toBe(each);
  expect(invariant("no-duplicate").rule).toBe("§10.2");
  expect(() => invariant("no-such-rule" as Parameters<typeof invariant>[0])).toThrow(
    "Expected an invariant with id `no-such-rule`, got none",
  );
});
