/**
 * What the named checks look at after a step (the call, the model after it, what the model and the implementation
 * answered and showed, and what the run has seen so far), and the small readings of it that several checks share.
 */
import type { ItemState, MetricsModelReading, WorkQueueModel } from "../../model/index.js";
import { type Answer, type Operation, sameItem } from "./operation.js";
import { showValue } from "./render.js";

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

/** A wait that a `retry` set by backing off ([docs/spec.md §7.3](../../docs/spec.md#§7), [§18.2](../../docs/spec.md#§18-backoff-and-rate-limiters)). */
export interface BackedOff {
  /** The failure count the retry backed off after. */
  readonly failures: number;
  /** The backoff: how long the item waits. */
  readonly delayMs: number;
  /** When it falls due. */
  readonly due: number;
}

/** Everything a check may look at. */
export interface StepFacts {
  /** The call. */
  readonly operation: Operation;
  /** The state of the item before a `done`, a `retry` or an `addAfter`, the calls whose checks need it; `undefined` for other calls. */
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
  /** The items that fell due and have not been handed out since, with the due time they fell due at ([§17.5](../../docs/spec.md#§17-delayed-adds)). */
  readonly fellAt: ReadonlyMap<unknown, number>;
  /**
   * The waiting items whose due time a `retry` set by backing off ([§7.3](../../docs/spec.md#§7), [§18.2](../../docs/spec.md#§18-backoff-and-rate-limiters)), with the failure count it backed off
   * after and the due time; an item leaves it when it falls due or another call sets its due time.
   */
  readonly backedOff: ReadonlyMap<unknown, BackedOff>;
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
export function wrongItem(f: StepFacts): { item: unknown } | undefined {
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
export function sizeOff(f: StepFacts): number {
  const size = f.actualViews.size;
  return size === undefined ? 0 : size - (f.expectedViews.size as number);
}

/** The item of a call that has one, as the checks that name it only see such calls. */
export function itemOf(operation: Operation): string {
  return showValue((operation as { item?: unknown }).item);
}

/** The views, compared in this order, that the implementation shows and that differ from the model's. */
export function wrongViews(expected: Views, actual: Views): ("size" | "inFlight" | "shuttingDown" | "waiting")[] {
  return (["size", "inFlight", "shuttingDown", "waiting"] as const).filter(
    (view) => actual[view] !== undefined && actual[view] !== expected[view],
  );
}
