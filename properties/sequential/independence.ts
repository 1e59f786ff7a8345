/**
 * Whether the queues a factory makes are independent of one another ([docs/spec.md §3.5](../../docs/spec.md#§3-construction)): the same short plan,
 * run on two fresh queues one after the other, must be answered alike by both. A queue whose instances
 * share a failure table, a queue or a set of marks answers the second run from what the first one left. Without
 * this probe such a queue is reported with a counterexample that cannot fail on a fresh queue: its calls look
 * harmless, and what fails them happened in earlier runs.
 */
import type { Plan } from "../core/commands.js";
import { type Driver, type Observation, observeRun } from "../core/driver.js";
import type { Rule } from "../core/invariants.js";
import { type Operation, sameAnswer, sameItem } from "../core/operation.js";
import { showAnswer, showCall } from "../core/render.js";
import { type VerifyOptions, type Violation, verify } from "../core/verify.js";

/**
 * The rule the probe checks. It is not among the invariants run after every step: it looks at two runs, not one.
 *
 * @internal
 */
export const independence: Rule = {
  id: "independent-queues",
  name: "each queue the factory makes starts empty and is independent of the others",
  rule: "§3.5",
};

/** The `maxRetries` of the probe's queues: its second retry of the same item gives up. */
const probeRetries = 2;

/**
 * The probe's plan, on two distinct items `a` and `b`: every kind of state a queue keeps, left behind at its end
 * (a failure count of 2, an item queued, one in flight), and each call one the contract profile allows.
 */
export function probePlan(a: unknown, b: unknown): Plan {
  return [
    { verb: "add", item: a },
    { verb: "add", item: b },
    { verb: "get" }, // a
    { verb: "add", item: a }, // a is dirty
    { verb: "retry", item: a }, // failure 1 of 2: requeue
    { verb: "done", item: a }, // a requeued: b, a
    { verb: "get" }, // b
    { verb: "done", item: b },
    { verb: "get" }, // a
    { verb: "retry", item: a }, // failure 2 of 2: give up
    { verb: "done", item: a },
    { verb: "add", item: b },
    { verb: "get" }, // b, left in flight
    { verb: "add", item: a }, // a, left queued
  ];
}

/** The first two items of `few` that are not the same item (§1.1), or `undefined` when there are not two. */
export function twoItems(few: readonly unknown[]): [unknown, unknown] | undefined {
  const [a] = few;
  const b = few.find((item) => !sameItem(item, a)); // none when `few` is empty, too
  return b === undefined ? undefined : [a, b];
}

/** What a queue answered and showed, as one line of the report. */
function showObservation({ answer, views }: Observation): string {
  const shown = (["size", "inFlight", "failures"] as const)
    .filter((view) => views[view] !== undefined)
    .map((view) => `${view} ${views[view]}`);
  return [`answered ${showAnswer(answer)}`, ...shown].join(", ");
}

/** Whether two observations of the same call agree: the same answer, error messages included, and the same views. */
function agree(a: Observation, b: Observation): boolean {
  if (!sameAnswer(a.answer, b.answer, true)) return false;
  return (["size", "inFlight", "failures", "shuttingDown", "waiting"] as const).every(
    (view) => a.views[view] === b.views[view],
  );
}

/**
 * Runs the probe's plan on a fresh queue, then again on another one. Two queues that keep to themselves answer the
 * same calls alike, whether or not they answer as the model does. Resolves, when they answer differently, with a
 * violation of §3.5 whose steps are the calls up to the first that they answered differently, on the queue that
 * strays from the model there; otherwise with `undefined` (two runs that fail alike are an ordinary bug, which the
 * survey finds and shrinks).
 *
 * @param driver - How queues are made and called.
 * @param few - The universe's few items, of which the first two distinct ones are used.
 * @param options - How answers are compared with the model's.
 */
export async function probeIndependence(
  driver: Driver,
  few: readonly unknown[],
  options: VerifyOptions,
): Promise<{ violation: Violation; plan: Plan } | undefined> {
  const items = twoItems(few);
  if (items === undefined) return undefined;
  const plan = probePlan(...items);
  const first = await observeRun(driver, probeRetries, plan);
  const second = await observeRun(driver, probeRetries, plan);
  const at = plan.findIndex((_, index) => !agree(first[index] as Observation, second[index] as Observation));
  // Stryker disable next-line ConditionalExpression: when the runs agree throughout, `at` is -1 and the prefix below is empty, so nothing can stray in it: this return only spares two empty verifications
  if (at < 0) return undefined;
  const prefix = plan.slice(0, at + 1);
  const against = (observations: Observation[]) =>
    verify({ maxRetries: probeRetries, plan: prefix }, (_, index) => observations[index] as Observation, options);
  const strayed = (await against(second)) ?? (await against(first));
  // Both runs answered as the model does up to `at` only if the views they differ in are ones the model cannot
  // tell: nothing of §3.5 to report then.
  if (strayed === undefined) return undefined;
  const call = showCall(plan[at] as Operation);
  const detail = `two fresh queues were given the same calls, and answered call ${at + 1}, ${call}, differently: the first ${showObservation(first[at] as Observation)}, the second ${showObservation(second[at] as Observation)}; ${strayed.detail} (${strayed.invariant.rule}: ${strayed.invariant.name})`;
  return { violation: { ...strayed, invariant: independence, detail }, plan };
}
