/**
 * The last step of a check that failed on a size: telling apart what a wrong `size` can mean. A `size` larger than
 * the model's may be a duplicate, an item queued while in flight, an item queued that nothing asked for, or only a
 * wrong view; a smaller one, an item lost or, again, a wrong view. The steps alone cannot tell, so the
 * counterexample's calls are made once more on a fresh queue, followed by `get()`s until it answers `undefined`:
 * what it hands out is what it held, and comparing that with the model's queue names the rule that broke.
 */
import type { WorkQueueModel } from "../../model/index.js";
import type { Plan } from "../core/commands.js";
import { type Driver, observeRun } from "../core/driver.js";
import { type Invariant, type InvariantId, invariant } from "../core/invariants.js";
import { sameItem } from "../core/operation.js";
import { showValue } from "../core/render.js";
import { perform } from "../core/subject.js";
import { modelOf, type Violation } from "../core/verify.js";

/** The checks whose name a wrong size alone can earn, and which a diagnosis may therefore rename, by id. */
const vague: ReadonlySet<string> = new Set<InvariantId>(["no-duplicate", "answers"]);

/** The items shown as a list: `"a", "b"`, or `nothing`. */
function list(items: readonly unknown[]): string {
  return items.length === 0 ? "nothing" : items.map(showValue).join(", ");
}

/** The model after every call of `plan`. */
function modelAfter(plan: Plan, violation: Violation): WorkQueueModel<unknown> {
  const model = modelOf(violation.maxRetries, violation.backoff);
  for (const operation of plan) perform(model, operation);
  return model;
}

/**
 * What the queue held, by what it handed out, compared with the model's queue: the invariant that broke and why,
 * or `undefined` when it held exactly what the model holds (then only the view is wrong, as first named).
 */
function compare(drained: readonly unknown[], model: WorkQueueModel<unknown>): [Invariant, string] | undefined {
  const queued = model.snapshot().queue;
  const held = drained.find((item) => model.stateOf(item).startsWith("in flight"));
  if (held !== undefined) {
    return [invariant("no-duplicate"), `the queue held ${showValue(held)}, which is in flight`];
  }
  const twice = drained.find((item, index) => drained.findIndex((other) => sameItem(other, item)) !== index);
  if (twice !== undefined) {
    return [invariant("no-duplicate"), `the queue held ${showValue(twice)} twice`];
  }
  const lost = queued.find((item) => !drained.some((other) => sameItem(other, item)));
  if (lost !== undefined) {
    return [invariant("nothing-lost"), `the queue no longer held ${showValue(lost)}, which was queued`];
  }
  const extra = drained.find((item) => model.stateOf(item) === "absent");
  if (extra !== undefined) {
    return [
      invariant("answers"),
      `the queue held ${showValue(extra)}, which no call had queued, or which was processed since`,
    ];
  }
  if (drained.some((item, index) => !sameItem(item, queued[index]))) {
    return [invariant("fifo"), "the queue held the model's items in another order"];
  }
  return undefined;
}

/**
 * Names the rule a size-only violation broke, by draining a fresh queue that was given the same calls. Resolves
 * with the violation renamed, its detail saying what the queue held against what the model holds; or as it was,
 * when it is not about a size, when the fresh queue does not show the same size again, or when the queue held
 * exactly the model's items (the size view itself is wrong, which the detail then says).
 *
 * @param violation - The shrunk violation.
 * @param driver - How a fresh queue is made.
 */
export async function diagnose(
  violation: Violation,
  driver: Driver,
): Promise<{ violation: Violation; runs: number; commands: number }> {
  const last = violation.steps.at(-1);
  if (last === undefined || !vague.has(violation.invariant.id)) return { violation, runs: 0, commands: 0 };
  const size = last.actualViews.size;
  const expected = last.expectedViews.size as number;
  if (size === undefined || size === expected) return { violation, runs: 0, commands: 0 };
  const calls: Plan = violation.steps.map((step) => step.operation);
  const gets = Math.max(size, expected) + 1;
  const plan: Plan = [...calls, ...Array.from({ length: gets }, () => ({ verb: "get" as const }))];
  const observations = await observeRun(driver, violation.maxRetries, plan, violation.backoff);
  const again = observations[calls.length - 1];
  const drained: unknown[] = [];
  for (const { answer } of observations.slice(calls.length)) {
    // Stryker disable next-line ConditionalExpression: an error answer has no value, so the next line stops the drain at it too; this test narrows the type
    if (answer.kind !== "value") break;
    if (answer.value === undefined) break;
    drained.push(answer.value);
  }
  // Stryker disable next-line OptionalChaining: there is a last call, as a violation without steps was returned above; `?.` only narrows the type
  if (again?.views.size !== size) return { violation, runs: 1, commands: plan.length };
  const model = modelAfter(calls, violation);
  const held = `after these calls, get() on a fresh queue given the same calls hands out ${list(drained)}; the model has ${list(model.snapshot().queue)} queued`;
  const found = compare(drained, model);
  if (found === undefined) {
    const detail = `${violation.detail}; the queue holds exactly the items the model has queued, so only the size it shows is wrong (§9.1): ${held}`;
    return {
      violation: { ...violation, invariant: invariant("answers"), detail },
      runs: 1,
      commands: plan.length,
    };
  }
  const [broken, why] = found;
  return {
    violation: { ...violation, invariant: broken, detail: `${violation.detail}: ${why} (${held})` },
    runs: 1,
    commands: plan.length,
  };
}
