/**
 * The gate's last steps on a failure (properties/engine/diagnose.ts and independence.ts): what a wrong size means,
 * told by draining a fresh queue given the same calls, and whether a factory's queues keep to themselves.
 */
import { expect, test } from "vitest";
import { WorkQueueModel } from "../../model/index.js";
import { checkConformance } from "../engine/conformance.js";
import { probePlan, twoItems } from "../engine/independence.js";
import { perform, type SubjectFactory } from "../engine/subject.js";
import { stringItems } from "../engine/universes.js";
import { runs, seed, shape } from "./settings.js";
import * as wrongQueues from "./wrong/queues.mjs";

const wrong: Record<keyof typeof wrongQueues, SubjectFactory<unknown>> = { ...wrongQueues };
const check = (factory: SubjectFactory<unknown>, profile: "contract" | "robust" = "robust") =>
  checkConformance(factory, { profile, seed, shape, runs: runs(400), items: stringItems });

test("a size that counts what is in flight is only a wrong view: the fresh queue hands out nothing, as the model", async () => {
  const report = await check(wrong.sizeCountsInFlight, "contract");
  expect(report.counterexample?.invariant.name).toBe("every answer equals the model's");
  expect(report.counterexample?.detail).toMatch(
    /; the queue holds exactly the items the model has queued, so only the size it shows is wrong \(§9\.1\): after these calls, get\(\) on a fresh queue given the same calls hands out nothing; the model has nothing queued$/,
  );
});

test("a dropped item is named lost, and the items handed out and queued are listed, comma separated", async () => {
  const report = await check(wrong.dropsPastThree, "contract");
  expect(report.counterexample?.invariant.name).toMatch(/^nothing queued is lost/);
  expect(report.counterexample?.detail).toMatch(
    /: the queue no longer held (".*"), which was queued \(after these calls, get\(\) on a fresh queue given the same calls hands out ".*", ".*", ".*"; the model has ".*", ".*", ".*", \1 queued\)$/,
  );
});

test("an item queued by a call that queues nothing is named: it was neither queued nor in flight in the model", async () => {
  const report = await check(wrong.forgetQueues);
  expect(report.counterexample?.invariant.name).toBe("every answer equals the model's");
  expect(report.counterexample?.detail).toMatch(
    /: the queue held .+, which no call had queued, or which was processed since \(/,
  );
  expect(report.counterexample?.steps.at(-1)?.operation.verb).toBe("forget");
});

test("a wrong answer with the right size is not drained: the report is the answer's", async () => {
  const report = await check(wrong.doneThrowsWhenNotInFlight);
  expect(report.counterexample?.invariant.name).toBe("every answer equals the model's");
  expect(report.counterexample?.detail).toMatch(/^done\(.+\) answered throws Error: .+, expected undefined$/);
});

test("a queue without size is not drained: nothing tells what it held", async () => {
  const noSize: SubjectFactory<unknown> = (options) => {
    const queue = wrong.doneThrowsWhenNotInFlight(options) as object;
    Object.defineProperty(queue, "size", { value: undefined });
    return queue as never;
  };
  const report = await check(noSize);
  expect(report.unchecked).toContain("size");
  expect(report.counterexample?.detail).not.toMatch(/on a fresh queue/);
});

test("the probe's plan is one the contract profile allows, and leaves every kind of state behind", () => {
  const model = new WorkQueueModel<unknown>({ maxRetries: 2 });
  const answers = probePlan("a", "b").map((operation) => {
    const held = operation.verb === "done" || operation.verb === "retry";
    if (held) expect(model.stateOf(operation.item)).toMatch(/^in flight/);
    return perform(model, operation) as { kind: string; value?: unknown };
  });
  expect(answers.filter((answer) => answer.value !== undefined)).toEqual([
    { kind: "value", value: "a" },
    { kind: "value", value: true },
    { kind: "value", value: "b" },
    { kind: "value", value: "a" },
    { kind: "value", value: false },
    { kind: "value", value: "b" },
  ]);
  expect(model.snapshot()).toMatchObject({ queue: ["a"], inFlight: ["b"] });
  expect(model.failures("a")).toBe(2);
  expect(probePlan("a", "b")).toHaveLength(14);
});

test("the probe takes the first two items that are not the same item, and needs two", () => {
  expect(twoItems([0, -0, "x"])).toEqual([0, "x"]);
  expect(twoItems(["a", "b"])).toEqual(["a", "b"]);
  expect(twoItems(["a"])).toBeUndefined();
  expect(twoItems([])).toBeUndefined();
});

test("a universe of one item skips the probe, and a queue that shares state is then found by the runs alone", async () => {
  const one = { name: "one", few: ["a"], many: (i: number) => `k${i}`, invalid: [] };
  const report = await checkConformance(wrong.failuresSharedByQueues, { seed, shape, runs: runs(400), items: one });
  expect(report.counterexample?.invariant.rule).not.toBe("§3.5");
});

test("the probe names both queues' answers and views at the first call they answered differently", async () => {
  const report = await check(wrong.failuresSharedByQueues);
  expect(report.counterexample?.detail).toMatch(
    /^two fresh queues were given the same calls, and answered call 1, add\(".*"\), differently: the first answered undefined, size 1, failures (\d+), the second answered undefined, size 1, failures (\d+); failures\(".*"\) is \2, expected 0 \(§7\.1, §8\.1: a failure count counts the retries since the last forget\)$/,
  );
});

test("queues whose error messages differ from one another are not reported as sharing state: messages are not compared", async () => {
  let made = 0;
  const numbered: SubjectFactory<unknown> = (options) => {
    const queue = wrong.naive(options) as unknown as { check(item: unknown): void };
    const n = ++made;
    queue.check = (item) => {
      if (item === undefined || item === null) throw new TypeError(`queue #${n}: not an item: ${item}`);
    };
    return queue as never;
  };
  const report = await check(numbered);
  expect(report.verdict).toBe("conforms");
});
