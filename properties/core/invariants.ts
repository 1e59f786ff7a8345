/**
 * The named checks run after every step. Each states a sentence of docs/spec.md and looks at one step: the call,
 * the model after it, and what the model and the implementation answered and showed. The first check that fails
 * names the counterexample; the last one, "every answer equals the model's", catches whatever the others do not.
 */
import type { MetricsModelReading } from "../../model/index.js";
import { type Invariant, itemOf, sizeOff, wrongItem, wrongViews } from "./facts.js";
import { sameAnswer } from "./operation.js";
import { plural, showAnswer, showCall, showValue } from "./render.js";
import { timedInvariants } from "./timed-invariants.js";

export type { BackedOff, Invariant, Rule, StepFacts, Views } from "./facts.js";
export { wrongViews } from "./facts.js";

/** The metrics in the order they are compared, each with the rule that defines it. */
const metricRules = [
  ["depth", "§19.1"],
  ["adds", "§19.2"],
  ["retries", "§19.7"],
  ["queueDuration.count", "§19.3"],
  ["queueDuration.sumMs", "§19.3"],
  ["workDuration.count", "§19.4"],
  ["workDuration.sumMs", "§19.4"],
  ["unfinishedWorkMs", "§19.5"],
  ["longestRunningMs", "§19.6"],
] as const;

/** The metric at `path` (such as `queueDuration.count`) of a reading. */
function metricAt(reading: MetricsModelReading, path: (typeof metricRules)[number][0]): unknown {
  const [head, tail] = path.split(".") as [keyof MetricsModelReading, "count" | "sumMs" | undefined];
  const value: unknown = reading[head];
  return tail === undefined ? value : (value as Record<string, unknown> | null | undefined)?.[tail];
}

/** The checks, in the order they are tried. */
export const invariants: readonly Invariant[] = [
  {
    id: "never-handed-out-in-flight",
    name: "an item is never handed out while it is in flight",
    rule: "§10.1",
    check(f) {
      const wrong = wrongItem(f);
      if (wrong === undefined || !f.model.stateOf(wrong.item).startsWith("in flight")) return undefined;
      return `get() handed out ${showValue(wrong.item)}, which is still in flight`;
    },
  },
  ...timedInvariants,
  {
    id: "fifo",
    name: "items are handed out in the order they were queued",
    rule: "§10.5",
    check(f) {
      const wrong = wrongItem(f);
      if (wrong === undefined || f.model.stateOf(wrong.item) !== "queued") return undefined;
      // Stryker disable next-line ConditionalExpression: the model's get always answers a value (§4); this narrows the type
      if (f.expected.kind !== "value") return undefined;
      return `get() handed out ${showValue(wrong.item)}, but ${showValue(f.expected.value)} was queued before it`;
    },
  },
  {
    id: "shutting-down-requests-nothing",
    name: "while shutting down, add and retry request nothing",
    rule: "§12.3, §12.4",
    check(f) {
      const { verb } = f.operation;
      if ((verb !== "add" && verb !== "retry") || !f.model.shuttingDown) return undefined;
      // An error has no value.
      if (verb === "retry" && (f.actual as { value?: unknown }).value === true) {
        return `${showCall(f.operation)} answered true while shutting down`;
      }
      if (sizeOff(f) <= 0) return undefined;
      return `${showCall(f.operation)} queued ${itemOf(f.operation)} while shutting down`;
    },
  },
  {
    id: "gives-up-at-max-retries",
    name: "retry gives up exactly when the failure count reaches maxRetries",
    rule: "§10.4",
    check(f) {
      if (f.operation.verb !== "retry" || f.actual.kind !== "value" || f.expected.kind !== "value") return undefined;
      if (f.actual.value === f.expected.value) return undefined;
      const count = `failure count ${f.expectedViews.failures} against maxRetries ${f.model.maxRetries}`;
      return `${showCall(f.operation)} answered ${showValue(f.actual.value)} at ${count}`;
    },
  },
  {
    id: "add-while-in-flight",
    name: "every add while in flight leads to exactly one later dispatch after done",
    rule: "§10.3",
    check(f) {
      if (f.operation.verb !== "done") return undefined;
      const off = sizeOff(f);
      const item = itemOf(f.operation);
      if (f.before === "in flight + dirty" && off < 0) {
        return `${showCall(f.operation)} did not requeue ${item}, which was marked dirty while in flight`;
      }
      if (f.before === "in flight" && off > 0) {
        return `${showCall(f.operation)} requeued ${item}, which nothing had marked dirty`;
      }
      return undefined;
    },
  },
  {
    id: "nothing-lost",
    name: "nothing queued is lost: get hands out an item whenever one is queued",
    rule: "§4.1, §5.2",
    check(f) {
      // Stryker disable next-line ConditionalExpression,LogicalOperator: the model's get always answers a value (§4), and the only other call that does, retry, is named by the give-up rule first
      if (f.operation.verb !== "get" || f.expected.kind !== "value") return undefined;
      if (f.expected.value === undefined) return undefined;
      if (f.actual.kind !== "value" || f.actual.value !== undefined) return undefined;
      return `get() answered undefined, but ${showValue(f.expected.value)} was queued and the oldest`;
    },
  },
  {
    id: "no-duplicate",
    name: "the queue holds no duplicate and nothing in flight",
    rule: "§10.2",
    check(f) {
      if (sizeOff(f) <= 0) return undefined;
      const queued = plural(f.expectedViews.size as number, "item");
      return `size is ${f.actualViews.size} after ${showCall(f.operation)}, but the model has ${queued} queued, each once`;
    },
  },
  {
    id: "failure-count",
    name: "a failure count counts the retries since the last forget",
    rule: "§7.1, §8.1",
    check(f) {
      const { failures } = f.actualViews;
      if (failures === undefined || failures === f.expectedViews.failures) return undefined;
      return `failures(${itemOf(f.operation)}) is ${failures}, expected ${f.expectedViews.failures}`;
    },
  },
  {
    id: "answers",
    name: "every answer equals the model's",
    rule: "§4–§9",
    check(f) {
      if (!sameAnswer(f.expected, f.actual, f.compareMessages)) {
        return `${showCall(f.operation)} answered ${showAnswer(f.actual)}, expected ${showAnswer(f.expected)}`;
      }
      const [view] = wrongViews(f.expectedViews, f.actualViews);
      if (view === undefined) return undefined;
      return `after ${showCall(f.operation)}: expected ${view} ${f.expectedViews[view]}, got ${f.actualViews[view]}`;
    },
  },
  {
    id: "metrics",
    name: "the metrics equal the model's",
    rule: "§10.7, §19",
    check(f) {
      const actual = f.actualViews.metrics;
      const expected = f.expectedViews.metrics;
      if (actual === undefined || expected === undefined) return undefined;
      const wrong = metricRules.find(([path]) => !Object.is(metricAt(actual, path), metricAt(expected, path)));
      if (wrong === undefined) return undefined;
      const [path, rule] = wrong;
      return `after ${showCall(f.operation)} at ${f.model.now}: the metric ${path} is ${showValue(metricAt(actual, path))}, but ${rule} makes it ${metricAt(expected, path)}`;
    },
  },
];

/** The ids of {@link invariants}. */
export type InvariantId = (typeof invariantIds)[number];

/** Every id of {@link invariants}, so that code names an invariant by an id the compiler knows. */
export const invariantIds = [
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
] as const;

/**
 * The invariant with id `id`.
 *
 * @throws Error when no invariant has that id (the list and {@link InvariantId} disagree).
 */
export function invariant(id: InvariantId): Invariant {
  const found = invariants.find((candidate) => candidate.id === id);
  if (found === undefined) throw new Error(`Expected an invariant with id \`${id}\`, got none`);
  return found;
}
