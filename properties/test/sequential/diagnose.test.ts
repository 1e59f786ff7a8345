/**
 * The gate's last steps on a failure (properties/sequential/diagnose.ts and independence.ts): what a wrong size means,
 * told by draining a fresh queue given the same calls, and whether a factory's queues keep to themselves.
 */
import { expect, test } from "vitest";
import { WorkQueueModel } from "../../../model/index.js";
import type { Plan } from "../../core/commands.js";
import { inProcess } from "../../core/driver.js";
import { type Invariant, invariants } from "../../core/invariants.js";
import { perform, type SubjectFactory } from "../../core/subject.js";
import { stringItems } from "../../core/universes.js";
import { type Violation, verifyStarted } from "../../core/verify.js";
import { checkConformance } from "../../sequential/check-conformance.js";
import { diagnose } from "../../sequential/diagnose.js";
import { probeIndependence, probePlan, twoItems } from "../../sequential/independence.js";
import { runs, seed, shape } from "../settings.js";
import * as wrongQueues from "../wrong/all.mjs";

const wrong: Record<keyof typeof wrongQueues, SubjectFactory<unknown>> = { ...wrongQueues };
const check = (factory: SubjectFactory<unknown>, profile: "contract" | "robust" = "robust") =>
  checkConformance(factory, { profile, seed, shape, runs: runs(400), items: stringItems });

/** The naive queue of properties/test/wrong/naive.mjs, with the fields its tests reach into. */
type NaiveQueue = { queue: unknown[]; counts: Map<unknown, number> };

/** The naive queue made by `factory`, changed by `change`: a wrong queue of the test's own. */
const changed =
  (factory: SubjectFactory<unknown>, change: (queue: NaiveQueue) => void): SubjectFactory<unknown> =>
  (options) => {
    const queue = factory(options) as unknown as NaiveQueue;
    change(queue);
    return queue as never;
  };

/** A view that a getter computes from the queue. */
const view = (queue: NaiveQueue, name: string, get: () => unknown) =>
  Object.defineProperty(queue, name, { get, configurable: true });

/** The violation a queue of `driver` shows on `plan`, found step by step as the gate finds it. */
async function violationOf(driver: ReturnType<typeof inProcess>, plan: Plan, maxRetries = 3): Promise<Violation> {
  const violation = await verifyStarted(
    driver.start(maxRetries, plan),
    { maxRetries, plan },
    { compareMessages: false },
  );
  expect(violation).toBeDefined();
  return violation as Violation;
}

const adds = (...items: string[]): Plan => items.map((item) => ({ verb: "add", item }));

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

test("a queue that holds the model's items but shows fewer is drained to the end: every item it holds is listed, and only the view is named", async () => {
  // A ring buffer of three slots that tells full from empty by its head and tail alone: full, it shows size 0. The
  // drain must go past the smaller of the two sizes to find that it holds all three.
  const ring = changed(wrong.naive, (queue) => view(queue, "size", () => queue.queue.length % 3));
  const driver = inProcess(ring);
  const violation = await violationOf(driver, adds("a", "b", "c"));
  expect(violation.invariant.rule).toBe("§4–§9");
  const diagnosed = await diagnose(violation, driver);
  expect(diagnosed.violation.invariant.name).toBe("every answer equals the model's");
  expect(diagnosed.violation.detail).toBe(
    'after add("c"): expected size 3, got 0; the queue holds exactly the items the model has queued, so only the size it shows is wrong (§9.1): after these calls, get() on a fresh queue given the same calls hands out "a", "b", "c"; the model has "a", "b", "c" queued',
  );
  expect(diagnosed).toMatchObject({ runs: 1, commands: 3 + 4 });
});

test("a queue that holds the model's items in another order is named for the order, with both orders listed", async () => {
  // A stack, whose size never shows more than 2: the size is the first thing found wrong, at the third add.
  const stack = changed(wrong.lifo, (queue) => view(queue, "size", () => Math.min(queue.queue.length, 2)));
  const driver = inProcess(stack);
  const violation = await violationOf(driver, adds("a", "b", "c"));
  const diagnosed = await diagnose(violation, driver);
  expect(diagnosed.violation.invariant.name).toBe("items are handed out in the order they were queued");
  expect(diagnosed.violation.detail).toBe(
    'after add("c"): expected size 3, got 2: the queue held the model\'s items in another order (after these calls, get() on a fresh queue given the same calls hands out "c", "b", "a"; the model has "a", "b", "c" queued)',
  );
});

test("a wrong size that a fresh queue given the same calls does not show again is left as first named, after one run", async () => {
  // Only the factory's first queue counts what is in flight in its size.
  let made = 0;
  const driver = inProcess((options) => (made++ === 0 ? wrong.sizeCountsInFlight(options) : wrong.naive(options)));
  const violation = await violationOf(driver, [{ verb: "add", item: "a" }, { verb: "get" }]);
  expect(violation.invariant.rule).toBe("§10.2");
  const diagnosed = await diagnose(violation, driver);
  expect(diagnosed.violation).toBe(violation);
  // The two calls, then max(1, 0) + 1 gets.
  expect(diagnosed).toMatchObject({ runs: 1, commands: 4 });
});

test("a violation without steps has no size to tell apart: it is returned as it was, and no queue is made", async () => {
  const violation: Violation = {
    invariant: invariants.find((invariant) => invariant.rule === "§4–§9") as Invariant,
    detail: "no step",
    maxRetries: 3,
    steps: [],
  };
  const noQueue = {
    start(): never {
      throw new Error("a queue was made");
    },
  };
  expect(await diagnose(violation, noQueue)).toEqual({ violation, runs: 0, commands: 0 });
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
  // The model rejects none of the calls: a call it rejected would leave nothing behind to probe.
  expect(answers.filter((answer) => answer.kind !== "value")).toEqual([]);
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

test("the probe compares the answers too: queues sharing a failure table, without a failures view, differ first at the retry they answer differently", async () => {
  const table = new Map<unknown, number>();
  const shared = changed(wrong.naive, (queue) => {
    queue.counts = table;
    Object.defineProperty(queue, "failures", { value: undefined });
  });
  const found = await probeIndependence(inProcess(shared), ["a", "b"], { compareMessages: false });
  expect(found?.violation.invariant.rule).toBe("§3.5");
  expect(found?.violation.detail).toMatch(
    /^two fresh queues were given the same calls, and answered call 5, retry\("a"\), differently: the first answered true, size 1, the second answered false, size 1; /,
  );
  expect(found?.violation.steps).toHaveLength(5);
});

test("the probe tells two queues apart by an error message too: queues whose get throws, numbering its errors across queues, differ at the first get", async () => {
  let errors = 0;
  const counting = changed(wrong.naive, (queue) => {
    Object.defineProperty(queue, "get", {
      value: () => {
        throw new Error(`get failed (error ${++errors})`);
      },
    });
  });
  const found = await probeIndependence(inProcess(counting), ["a", "b"], { compareMessages: false });
  expect(found?.violation.invariant.rule).toBe("§3.5");
  expect(found?.violation.detail).toMatch(
    /^two fresh queues were given the same calls, and answered call 3, get\(\), differently: the first answered throws Error: get failed \(error 1\), size 2, the second answered throws Error: get failed \(error 5\), size 2; /,
  );
});

test("queues that differ only in a view one of them does not show are not reported as sharing state, though both stray alike later", async () => {
  // Every other queue shows `waiting`, as the model does (0); both give up one retry too late, at call 10.
  let made = 0;
  const some = changed(wrong.offByOneGiveUp, (queue) => {
    if (made++ % 2 === 1) Object.defineProperty(queue, "waiting", { value: 0 });
  });
  const driver = inProcess(some);
  expect(await probeIndependence(driver, ["a", "b"], { compareMessages: false })).toBeUndefined();
  // The queues do stray from the model: the survey's business, not the probe's.
  expect((await violationOf(driver, probePlan("a", "b"), 2)).steps).toHaveLength(10);
});
