/**
 * The named checks run after every step. Each states a sentence of docs/spec.md and looks at one step: the call,
 * the model after it, and what the model and the implementation answered and showed. The first check that fails
 * names the counterexample; the last one, "every answer equals the model's", catches whatever the others do not.
 */
import type { ItemState, MetricsModelReading, WorkQueueModel } from "../../model/index.js";
import { type Answer, type Operation, sameAnswer, sameItem } from "./operation.js";
import { plural, showAnswer, showCall, showValue } from "./render.js";

/**
 * The views of a queue after a step ([docs/spec.md §9](../../docs/spec.md#§9-views)); `failures` is of the step's item.
 *
 * @inline
 */
export interface Views {
  /** [§9.1](../../docs/spec.md#§9-views) */
  readonly size?: number | undefined;
  /** [§9.2](../../docs/spec.md#§9-views) */
  readonly inFlight?: number | undefined;
  /** [§9.3](../../docs/spec.md#§9-views), for the step's item. */
  readonly failures?: number | undefined;
  /** [§12.2](../../docs/spec.md#§12-shutdown) */
  readonly shuttingDown?: boolean | undefined;
  /** [§17.6](../../docs/spec.md#§17-delayed-adds) */
  readonly waiting?: number | undefined;
  /** [§19](../../docs/spec.md#§19-metrics): the metrics read right after the call, when time is checked. */
  readonly metrics?: MetricsModelReading | undefined;
}

/** Everything a check may look at. */
export interface StepFacts {
  /** The call. */
  readonly operation: Operation;
  /** The state of the item before a `done`, the only call whose checks need it; `undefined` for other calls. */
  readonly before: ItemState | undefined;
  /** The model after the call. */
  readonly model: WorkQueueModel<unknown>;
  /** What the model answered. */
  readonly expected: Answer;
  /** What the implementation answered. */
  readonly actual: Answer;
  /** What the model shows after the call. */
  readonly expectedViews: Views;
  /** What the implementation shows after the call, for the views it offers. */
  readonly actualViews: Views;
  /** Whether error messages must match, or only error names. */
  readonly compareMessages: boolean;
  /** The items that fell due during the step, in the order they were added ([§17.5](../../docs/spec.md#§17-delayed-adds)); empty but for `advance`. */
  readonly fellDue: readonly (readonly [unknown, number])[];
  /** The items given a second `addAfter` while they waited and not handed out since ([§17.3](../../docs/spec.md#§17-delayed-adds)). */
  readonly reasked: ReadonlySet<unknown>;
}

/**
 * A rule of docs/spec.md that a check keeps: the sentence, and where the spec states it. A report names the rule
 * that broke; an {@link Invariant} is a rule checked after every step, other rules are checked over whole runs.
 *
 * @inline
 */
export interface Rule {
  /**
   * A name for code to refer to it by, which stays when the sentence is reworded: `no-duplicate`, `fifo`,
   * `linearizable`, …
   */
  readonly id: string;
  /** The sentence it checks. */
  readonly name: string;
  /** Where docs/spec.md states it. */
  readonly rule: string;
}

/**
 * A named check, run after every step.
 *
 * @inline
 */
export interface Invariant extends Rule {
  /** What went wrong at this step, or `undefined` when the step keeps the invariant. @internal */
  check(facts: StepFacts): string | undefined;
}

/** The value `get` answered, if it answered one that differs from the model's. */
function wrongItem(f: StepFacts): { item: unknown } | undefined {
  if (f.operation.verb !== "get") return undefined;
  // Stryker disable next-line ConditionalExpression,LogicalOperator: an error has no value, and undefined is never an item (§1.1), so every check of the answer finds it absent
  if (f.actual.kind !== "value" || f.actual.value === undefined) return undefined;
  // Stryker disable next-line ConditionalExpression: the model's get always answers a value (§4)
  if (f.expected.kind === "value" && sameItem(f.actual.value, f.expected.value)) return undefined;
  return { item: f.actual.value };
}

/**
 * How many items more (above 0) or fewer (below 0) the size the implementation shows counts than the model's; 0 when
 * it shows none. Signed, so that each check's bound is exact: a check that fires at 0 fires on a correct queue.
 */
function sizeOff(f: StepFacts): number {
  const size = f.actualViews.size;
  return size === undefined ? 0 : size - (f.expectedViews.size as number);
}

/** The item of a call that has one, as the checks that name it only see such calls. */
function itemOf(operation: Operation): string {
  return showValue((operation as { item?: unknown }).item);
}

/** The views, compared in this order, that the implementation shows and that differ from the model's. */
export function wrongViews(expected: Views, actual: Views): ("size" | "inFlight" | "shuttingDown" | "waiting")[] {
  return (["size", "inFlight", "shuttingDown", "waiting"] as const).filter(
    (view) => actual[view] !== undefined && actual[view] !== expected[view],
  );
}

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
  {
    id: "nothing-before-due",
    name: "nothing is handed out or queued before it is due",
    rule: "§17.2, §17.5, §7.3",
    check(f) {
      const wrong = wrongItem(f);
      const due = (item: unknown) => f.model.dueOf(item);
      if (wrong !== undefined && due(wrong.item) !== undefined && f.model.stateOf(wrong.item) === "absent") {
        return `get() handed out ${showValue(wrong.item)} at ${f.model.now}, but it waits until ${due(wrong.item)}`;
      }
      const { verb } = f.operation;
      if (verb !== "addAfter" && verb !== "retry") return undefined;
      const item = (f.operation as { item: unknown }).item;
      if (sizeOff(f) <= 0 || due(item) === undefined) return undefined;
      return `${showCall(f.operation)} queued ${showValue(item)} at ${f.model.now}, but it is due at ${due(item)}`;
    },
  },
  {
    id: "waiting-survives-shutdown",
    name: "items that wait when the queue shuts down still fall due",
    rule: "§17.7",
    check(f) {
      const { waiting } = f.actualViews;
      if (f.operation.verb !== "shutDown" || waiting === undefined || waiting >= (f.expectedViews.waiting as number)) {
        return undefined;
      }
      return `shutDown() left ${plural(waiting, "item")} waiting, but ${f.expectedViews.waiting} were asked for before it and must still fall due`;
    },
  },
  {
    id: "waiting-never-queued",
    name: "a waiting item is never also queued, and an add ends its wait",
    rule: "§17.4, §10.6",
    check(f) {
      const { waiting } = f.actualViews;
      if (waiting === undefined || waiting <= (f.expectedViews.waiting as number)) return undefined;
      if (f.operation.verb !== "add" && f.operation.verb !== "addAfter" && f.operation.verb !== "retry") {
        return undefined;
      }
      if (f.model.stateOf((f.operation as { item: unknown }).item) === "absent") return undefined;
      const item = itemOf(f.operation);
      return `after ${showCall(f.operation)}, ${item} is ${f.model.stateOf((f.operation as { item: unknown }).item)} and still counted waiting (waiting ${waiting}, expected ${f.expectedViews.waiting})`;
    },
  },
  {
    id: "earlier-due-wins",
    name: "of two due times asked for one item, the earlier wins",
    rule: "§17.3",
    check(f) {
      const wrong = wrongItem(f);
      if (wrong !== undefined && f.expected.kind === "value" && f.model.stateOf(wrong.item) === "queued") {
        const twice = [f.expected.value, wrong.item].find((item) => f.reasked.has(item));
        if (twice === undefined) return undefined;
        return `get() handed out ${showValue(wrong.item)} before ${showValue(f.expected.value)}, but ${showValue(twice)} was asked for twice while it waited, and its earlier due time decides when it was queued`;
      }
      if (f.operation.verb !== "advance" || sizeOff(f) >= 0) {
        return undefined;
      }
      const moved = f.fellDue.find(([item]) => f.reasked.has(item));
      if (moved === undefined) return undefined;
      return `${showValue(moved[0])} was asked for twice while it waited, the earlier due time being ${moved[1]}, but ${showCall(f.operation)} to ${f.model.now} did not add it`;
    },
  },
  {
    id: "falls-due-on-advance",
    name: "an item falls due in the advance that passes its due time",
    rule: "§17.5",
    check(f) {
      const { size, waiting } = f.actualViews;
      if (f.operation.verb !== "advance" || f.fellDue.length === 0) return undefined;
      const short = sizeOff(f) < 0;
      const lingering = waiting !== undefined && waiting > (f.expectedViews.waiting as number);
      if (!short && !lingering) return undefined;
      const due = f.fellDue.map(([item, at]) => `${showValue(item)} at ${at}`).join(", ");
      return `${showCall(f.operation)} moved the time to ${f.model.now}, past the due times of ${due}, but size is ${size ?? "?"} (expected ${f.expectedViews.size}) and waiting ${waiting ?? "?"} (expected ${f.expectedViews.waiting})`;
    },
  },
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
      // `before` is set for a done only.
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
const invariantIds = [
  "never-handed-out-in-flight",
  "nothing-before-due",
  "waiting-survives-shutdown",
  "waiting-never-queued",
  "earlier-due-wins",
  "falls-due-on-advance",
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
