/**
 * Operations and answers: one call of a verb on a queue, and what it answered. The same words as docs/spec.md.
 */

/**
 * A verb of the queue that takes an item.
 *
 * @inline
 */
export type ItemVerb = "add" | "done" | "retry" | "forget";

/**
 * A call of a verb that takes an item.
 *
 * @inline
 */
export interface ItemOperation {
  /** The verb. */
  readonly verb: ItemVerb;
  /** The argument: `unknown`, because the robust profile also sends values that are not items. */
  readonly item: unknown;
}

/**
 * A call of `get`.
 *
 * @inline
 */
export interface GetOperation {
  /** The verb. */
  readonly verb: "get";
}

/**
 * A call of `shutDown` ([docs/spec.md §12.1](../../docs/spec.md#§12-shutdown)).
 *
 * @inline
 */
export interface ShutDownOperation {
  /** The verb. */
  readonly verb: "shutDown";
}

/**
 * A call of `addAfter` ([docs/spec.md §17](../../docs/spec.md#§17-delayed-adds)).
 *
 * @inline
 */
export interface AddAfterOperation {
  /** The verb. */
  readonly verb: "addAfter";
  /** The argument: `unknown`, because the robust profile also sends values that are not items. */
  readonly item: unknown;
  /** The delay, in milliseconds: `unknown`, because the robust profile also sends delays that are not numbers. */
  readonly delayMs: unknown;
}

/**
 * Moving the queue's clock forward ([docs/spec.md §18.9](../../docs/spec.md#§18-backoff-and-rate-limiters)): not a verb of the queue, but of the clock the gate made it with.
 *
 * @inline
 */
export interface AdvanceOperation {
  /** The step. */
  readonly verb: "advance";
  /** How far, in milliseconds. */
  readonly ms: number;
}

/**
 * One call of a verb ([docs/spec.md §4](../../docs/spec.md#§4)–[§8](../../docs/spec.md#§8), [§12.1](../../docs/spec.md#§12-shutdown), [§17](../../docs/spec.md#§17-delayed-adds)), or a step of the clock.
 *
 * @inline
 */
export type Operation = ItemOperation | GetOperation | ShutDownOperation | AddAfterOperation | AdvanceOperation;

/**
 * The exponential backoff ([docs/spec.md §18.2](../../docs/spec.md#§18-backoff-and-rate-limiters)) a run's queue is made with, when time is checked.
 *
 * @inline
 */
export interface Backoff {
  /** The delay after the first failure, in milliseconds. */
  readonly baseMs: number;
  /** The longest delay, in milliseconds. */
  readonly maxMs: number;
}

/**
 * A call that returned: the value, `undefined` for the verbs that answer nothing.
 *
 * @inline
 */
export interface ValueAnswer {
  /** Tells the answers apart. */
  readonly kind: "value";
  /** What the call returned, or what its promise resolved to. */
  readonly value: unknown;
}

/**
 * A call that threw, or whose promise rejected.
 *
 * @inline
 */
export interface ErrorAnswer {
  /** Tells the answers apart. */
  readonly kind: "error";
  /** The error's name, such as `TypeError`. */
  readonly name: string;
  /** The error's message. */
  readonly message: string;
}

/**
 * What a call answered.
 *
 * @inline
 */
export type Answer = ValueAnswer | ErrorAnswer;

/**
 * True when two values are the same item, as a `Map` compares keys (SameValueZero, docs/spec.md §1.1): `NaN` is
 * `NaN`, and `-0` is `0`, so a queue that keeps its items as `Map` keys may answer `0` for an added `-0`.
 */
export function sameItem(a: unknown, b: unknown): boolean {
  // biome-ignore lint/suspicious/noSelfCompare: a value that differs from itself is NaN, which is NaN here
  return a === b || (a !== a && b !== b); // SameValueZero: `===`, but NaN is NaN
}

/** True when two answers are the same: the same value (see {@link sameItem}), or errors of the same name and message. */
export function sameAnswer(a: Answer, b: Answer, compareMessages: boolean): boolean {
  if (a.kind === "value") return b.kind === "value" && sameItem(a.value, b.value);
  if (b.kind === "value") return false;
  return a.name === b.name && (!compareMessages || a.message === b.message);
}
