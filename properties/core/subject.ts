/**
 * The implementation under test, as the properties see it: the five verbs and the views, each of which may answer
 * a plain value or a promise of one (a queue backed by a database is asynchronous).
 */
import type { MetricsModelReading } from "../../model/index.js";
import { ProtocolBreach } from "./breach.js";
import type { Answer, Backoff, Operation } from "./operation.js";

/**
 * A value, or a promise of it.
 *
 * @inline
 */
export type MaybePromise<V> = V | PromiseLike<V>;

/**
 * What an implementation must offer to be checked: the verbs of [docs/spec.md §4](../../docs/spec.md#§4)–[§8](../../docs/spec.md#§8) and the `size` view ([§9.1](../../docs/spec.md#§9-views)).
 * `inFlight` (§9.2) and `failures` (§9.3) are optional; when present they are checked after every step too.
 * `shutDown` (§12.1) and `shuttingDown` (§12.2) are optional as well: sequences call `shutDown` only when the check
 * is told that the implementation offers it (`ConformanceOptions.shutDown`).
 *
 * @example
 * ```ts
 * import { checkConformance, type Subject } from "workqueue-spec/properties";
 *
 * class MyQueue implements Subject<string> {
 *   // add, get, done, retry, forget and size, as docs/spec.md §4–§9 say; each may answer a promise.
 * }
 * await checkConformance(({ maxRetries }) => new MyQueue(maxRetries));
 * ```
 *
 * @typeParam T - The item type.
 * @public
 */
export interface Subject<T> {
  /**
   * [docs/spec.md §4](../../docs/spec.md#§4).
   *
   * @param item - The item the gate passes: in the robust profile, sometimes `undefined` or `null`, which must throw.
   */
  add(item: T): MaybePromise<void>;
  /** [docs/spec.md §5](../../docs/spec.md#§5): the oldest queued item, or `undefined` when nothing is queued. */
  get(): MaybePromise<T | undefined>;
  /**
   * [docs/spec.md §6](../../docs/spec.md#§6).
   *
   * @param item - The item the gate passes: in the robust profile, sometimes `undefined` or `null`, which must throw.
   */
  done(item: T): MaybePromise<void>;
  /**
   * [docs/spec.md §7](../../docs/spec.md#§7): `true` when a requeue was requested, `false` on give-up.
   *
   * @param item - The item the gate passes: in the robust profile, sometimes `undefined` or `null`, which must throw.
   */
  retry(item: T): MaybePromise<boolean>;
  /**
   * [docs/spec.md §8](../../docs/spec.md#§8).
   *
   * @param item - The item the gate passes: in the robust profile, sometimes `undefined` or `null`, which must throw.
   */
  forget(item: T): MaybePromise<void>;
  /** [docs/spec.md §9.1](../../docs/spec.md#§9-views): the number of queued items, as a property, a getter or a method. */
  readonly size: MaybePromise<number> | (() => MaybePromise<number>);
  /** [docs/spec.md §9.2](../../docs/spec.md#§9-views): the number of items in flight, as a property, a getter or a method. */
  readonly inFlight?: MaybePromise<number> | (() => MaybePromise<number>);
  /**
   * [docs/spec.md §9.3](../../docs/spec.md#§9-views): the failure count of an item.
   *
   * @param item - The item whose failure count is read.
   */
  failures?(item: T): MaybePromise<number>;
  /** [docs/spec.md §12.1](../../docs/spec.md#§12-shutdown): stop accepting work. */
  shutDown?(): MaybePromise<void>;
  /** [docs/spec.md §12.2](../../docs/spec.md#§12-shutdown): whether `shutDown` was called, as a property, a getter or a method. */
  readonly shuttingDown?: MaybePromise<boolean> | (() => MaybePromise<boolean>);
  /**
   * [docs/spec.md §17](../../docs/spec.md#§17-delayed-adds): process `item` once `delayMs` have passed on the queue's clock. Required when time is checked.
   *
   * @param item - The item the gate passes: in the robust profile, sometimes `undefined` or `null`, which must throw.
   * @param delayMs - The delay the gate passes: in the robust profile, sometimes not a finite number, which must throw.
   */
  addAfter?(item: T, delayMs: number): MaybePromise<void>;
  /** [docs/spec.md §17.6](../../docs/spec.md#§17-delayed-adds): the number of waiting items, as a property, a getter or a method. */
  readonly waiting?: MaybePromise<number> | (() => MaybePromise<number>);
  /**
   * [docs/spec.md §19](../../docs/spec.md#§19-metrics): the queue's metrics at its clock's time, in milliseconds, in the shape of `WorkQueueMetrics`
   * (for the reference queue, what its sink's `connect` was given). Read after every call when time is checked.
   */
  metrics?(): MaybePromise<MetricsModelReading>;
}

/**
 * The clock the gate hands a queue when it checks time ([docs/spec.md §18.8](../../docs/spec.md#§18-backoff-and-rate-limiters)): the same shape as `Clock` of `workqueue-spec`.
 *
 * @inline
 */
export interface SubjectClock {
  /** The time in milliseconds: 0 when the queue is made, moved only by the gate. */
  now(): number;
  /**
   * Runs `callback` once when the gate's time reaches `atMs`, unless the answered function is called first.
   *
   * @param atMs - When to run it.
   * @param callback - What to run.
   */
  schedule(atMs: number, callback: () => void): () => void;
}

/**
 * What the gate makes each fresh queue with.
 *
 * @example
 * ```ts
 * import { checkConformance, type SubjectOptions } from "workqueue-spec/properties";
 *
 * const make = ({ maxRetries, clock, backoff }: SubjectOptions) => new MyQueue({ maxRetries, clock, backoff });
 * await checkConformance(make, { time: true }); // with `time`, the queue must use `clock`
 * ```
 *
 * @public
 */
export interface SubjectOptions {
  /** [docs/spec.md §3.1](../../docs/spec.md#§3-construction) */
  readonly maxRetries: number;
  /**
   * When time is checked: the clock the queue must use ([docs/spec.md §18.8](../../docs/spec.md#§18-backoff-and-rate-limiters)), which the gate advances. Time starts at 0
   * and moves only when the gate moves it; a queue that reads another clock fails the timed checks.
   */
  readonly clock?: SubjectClock | undefined;
  /**
   * When time is checked, in some runs: the exponential backoff ([docs/spec.md §18.2](../../docs/spec.md#§18-backoff-and-rate-limiters)) `retry` must requeue with (§7.3),
   * such as `exponentialBackoff(baseMs, maxMs)`; absent, `retry` requeues at once.
   */
  readonly backoff?: Backoff | undefined;
}

/**
 * Makes a fresh, empty implementation with the given `maxRetries`.
 *
 * @inline
 */
export type SubjectFactory<T> = (options: SubjectOptions) => MaybePromise<Subject<T>>;

/** True when `value` has a `then` method, so must be awaited. */
export function isThenable(value: unknown): value is PromiseLike<unknown> {
  return typeof (value as { then?: unknown } | null)?.then === "function";
}

/**
 * Turns a thrown value into an error answer. A `ProtocolBreach` is rethrown: it says that the transport to the
 * implementation broke (a malformed reply, none in time), not what the queue answered.
 */
function errorAnswer(error: unknown): Answer {
  if (error instanceof ProtocolBreach) throw error;
  const e = error instanceof Error ? error : new Error(String(error));
  return { kind: "error", name: e.name, message: e.message };
}

/**
 * Calls `thunk` and captures its answer, or the error it threw or rejected with. Answers synchronously when the
 * thunk does, so a synchronous queue pays for no promise.
 */
export function capture(thunk: () => unknown): MaybePromise<Answer> {
  let result: unknown;
  try {
    result = thunk();
  } catch (error) {
    return errorAnswer(error);
  }
  if (!isThenable(result)) return { kind: "value", value: result };
  return Promise.resolve(result).then((value): Answer => ({ kind: "value", value }), errorAnswer);
}

/**
 * Calls `operation` on `subject` and captures the answer (see {@link capture}); `watch`, if given, is shown what the
 * call returned, before it is captured (a promise as the queue made it).
 */
export function perform<T>(
  subject: Subject<T>,
  operation: Operation,
  watch?: (returned: unknown) => void,
): MaybePromise<Answer> {
  if (watch === undefined) return capture(() => call(subject, operation));
  return capture(() => {
    const returned = call(subject, operation);
    watch(returned);
    return returned;
  });
}

/** Calls the verb that `operation` names. */
function call<T>(subject: Subject<T>, operation: Operation): unknown {
  if (operation.verb === "get") return subject.get();
  if (operation.verb === "shutDown") return subject.shutDown?.();
  if (operation.verb === "addAfter") return subject.addAfter?.(operation.item as T, operation.delayMs as number);
  if (operation.verb === "advance") return (subject as { advance?(ms: number): void }).advance?.(operation.ms);
  return subject[operation.verb](operation.item as T);
}

/** What a view answers: `shuttingDown` a boolean, the others a number. */
type ViewValue<K> = K extends "shuttingDown" ? boolean : number;

/** Reads a view of `subject`, whether a value, a getter or a method; `undefined` if absent. */
export function readView<T, K extends "size" | "inFlight" | "shuttingDown" | "waiting">(
  subject: Subject<T>,
  name: K,
): MaybePromise<ViewValue<K>> | undefined {
  const view: unknown = subject[name];
  return (typeof view === "function" ? view.call(subject) : view) as MaybePromise<ViewValue<K>> | undefined;
}
