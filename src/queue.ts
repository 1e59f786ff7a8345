import { Fifo } from "./fifo.js";
import { assertItem, assertMaxRetries, expected } from "./validate.js";

/** Options for {@link WorkQueue}. */
export interface WorkQueueOptions {
  /**
   * How many failures `retry` accepts for an item: the `retry` that brings the item's failure count to
   * `maxRetries` gives up (docs/spec.md §7). `0` gives up on the first failure; `Infinity` never gives up.
   * Required: a queue that bounds retries should say where the bound is.
   */
  readonly maxRetries: number;
}

/** The states of an item in {@link WorkQueue}'s map (docs/spec.md §2). */
const QUEUED = 0;
const IN_FLIGHT = 1;
const IN_FLIGHT_DIRTY = 2;
/** A tombstone: the item is absent, but its entry is kept for the next `add` of it (see `WorkQueue.#sweep`). */
const ABSENT = 3;
type State = typeof QUEUED | typeof IN_FLIGHT | typeof IN_FLIGHT_DIRTY | typeof ABSENT;

/**
 * A keyed work queue: it collapses repeated `add`s of an item into one pending dispatch, never hands an item to a
 * second worker while the first still holds it, and gives up on an item after `maxRetries` failures.
 *
 * The caller's protocol (docs/spec.md §2): `get` an item, work on it, then call `forget` on success or `retry` on
 * failure, and finally `done`, exactly once. The queue does not wait, time or delay anything: `get` answers at
 * once, and `retry` requeues without a backoff.
 *
 * @remarks
 * Every operation is O(1) amortised. Items are compared as `Map` keys (SameValueZero); `undefined` and `null` are
 * not items. Misuse that docs/spec.md §11 calls safe (a `done` of an item that is not in flight, a `forget` of an
 * item that never failed) changes nothing; a bad argument throws before any state changes.
 *
 * @typeParam T - The item type, usually a string key such as `namespace/name`.
 *
 * @example
 * ```ts
 * import { WorkQueue } from "workqueue-spec";
 *
 * const queue = new WorkQueue<string>({ maxRetries: 2 });
 * queue.add("a");
 * queue.get(); // "a", now in flight
 * queue.add("a"); // a second change arrives: "a" is only marked dirty
 * queue.get(); // undefined: "a" is still in flight, so it is not handed out again
 * queue.done("a"); // the worker finished: the dirty mark requeues "a"
 * queue.get(); // "a"
 * ```
 */
export class WorkQueue<T> {
  /** The failure count at which `retry` gives up. Validated at construction; never changes. */
  readonly maxRetries: number;

  /**
   * Every item that is queued or in flight, with its state, plus tombstones (`ABSENT`) of items that were done.
   * Invariants: an item maps to `QUEUED` exactly when it is in `#queue`; an item with no entry or a tombstone is
   * absent; there are never more tombstones than live entries once a `done` returns (`#sweep`).
   * One map answers both "is it queued?" (dedup) and "is it in flight?" with a single lookup.
   */
  readonly #states = new Map<T, State>();
  /** The queued items, oldest first. Invariant: no duplicates, and each maps to `QUEUED` in `#states`. */
  readonly #queue = new Fifo<T>();
  /** Invariant: the number of entries of `#states` that are `IN_FLIGHT` or `IN_FLIGHT_DIRTY`. */
  #inFlight = 0;
  /** Failure counts. Invariant: only positive counts are stored; `forget` deletes the entry. */
  readonly #failures = new Map<T, number>();

  /**
   * Creates an empty queue.
   *
   * @throws TypeError when `options` is not an object.
   * @throws RangeError when `options.maxRetries` is not a non-negative integer or `Infinity`.
   */
  constructor(options: WorkQueueOptions) {
    if (typeof options !== "object" || options === null) {
      throw new TypeError(expected("options", "an object such as { maxRetries: 5 }", options));
    }
    assertMaxRetries(options.maxRetries);
    this.maxRetries = options.maxRetries;
  }

  /** The number of queued items, waiting for `get`. Items in flight are not counted, dirty or not. */
  get size(): number {
    return this.#queue.length;
  }

  /** The number of items in flight: handed out by `get` and not yet `done`. */
  get inFlight(): number {
    return this.#inFlight;
  }

  /**
   * Asks for `item` to be processed (docs/spec.md §4). An item that is neither queued nor in flight is appended to
   * the tail; an item already queued is left where it is; an item in flight is only marked dirty, and its `done`
   * will queue it.
   *
   * @throws TypeError when `item` is `undefined` or `null`.
   */
  add(item: T): void {
    assertItem(item);
    const state = this.#states.get(item);
    if (state === undefined || state === ABSENT) {
      this.#states.set(item, QUEUED);
      this.#queue.push(item);
    } else if (state === IN_FLIGHT) {
      this.#states.set(item, IN_FLIGHT_DIRTY);
    }
  }

  /**
   * Hands out the oldest queued item and marks it in flight (docs/spec.md §5), or returns `undefined` when nothing
   * is queued. It never blocks.
   *
   * The caller must call `done` with the item exactly once when it has finished with it, after any `retry` or
   * `forget`; until then, the item is not handed out again.
   */
  get(): T | undefined {
    if (this.#queue.length === 0) return undefined;
    const item = this.#queue.shift();
    this.#states.set(item, IN_FLIGHT);
    this.#inFlight++;
    return item;
  }

  /**
   * Ends the processing of `item` (docs/spec.md §6): it is no longer in flight, and if an `add` marked it dirty
   * meanwhile, it is appended to the tail. A `done` of an item that is not in flight changes nothing: it neither
   * requeues nor duplicates it.
   *
   * @throws TypeError when `item` is `undefined` or `null`.
   */
  done(item: T): void {
    assertItem(item);
    const state = this.#states.get(item);
    if (state === IN_FLIGHT) {
      this.#states.set(item, ABSENT);
      this.#inFlight--;
      this.#sweep();
    } else if (state === IN_FLIGHT_DIRTY) {
      // Reuses the map entry: IN_FLIGHT_DIRTY becomes QUEUED without a delete and a set.
      this.#states.set(item, QUEUED);
      this.#queue.push(item);
      this.#inFlight--;
    }
  }

  /**
   * Deletes the tombstones once they outnumber the live entries (queued or in flight).
   *
   * Why tombstones: a controller's keys come back. Deleting a done item's entry and inserting it again at the next
   * `add` churns V8's hash table, which then rehashes every live entry again and again; at a million keys that
   * made a `get → done → add` cycle about 1.6 times slower (docs/performance.md). Reusing the entry costs nothing.
   * The sweep keeps the memory bounded: at most as many done items stay referenced as there are live ones, none
   * once the queue is idle, and each sweep is paid for by the `done`s that made its tombstones, O(1) amortised.
   */
  #sweep(): void {
    // Stryker disable next-line ConditionalExpression,EqualityOperator,ArithmeticOperator: equivalent when they only sweep earlier or more often (`false`, `<`, `-`): a tombstone is an absent item either way, so no caller can tell; the variants that sweep later or never (`true`, `>`, `/`) are killed by properties/test/memory.test.ts
    if (this.#states.size <= 2 * (this.#queue.length + this.#inFlight)) return;
    for (const [item, state] of this.#states) if (state === ABSENT) this.#states.delete(item);
  }

  /**
   * Records a failure of `item` and requeues it unless it has failed too often (docs/spec.md §7). The failure
   * count goes up by one; when it reaches `maxRetries` the queue gives up and returns `false`, requeueing nothing.
   * Otherwise the requeue goes through `add`, so an item in flight is only marked dirty and comes back after its
   * `done`, and the call returns `true`.
   *
   * The caller still has to call `done`. `retry` does not reset the count; `forget` does.
   *
   * @returns `true` when a requeue was requested, `false` when the queue gave up on the item.
   * @throws TypeError when `item` is `undefined` or `null`.
   */
  retry(item: T): boolean {
    assertItem(item);
    const failures = (this.#failures.get(item) ?? 0) + 1;
    this.#failures.set(item, failures);
    if (failures >= this.maxRetries) return false;
    this.add(item);
    return true;
  }

  /**
   * Clears the failure count of `item` (docs/spec.md §8), typically after it was processed successfully.
   * It does not dequeue the item or end its processing: the caller still has to call `done`.
   *
   * @throws TypeError when `item` is `undefined` or `null`.
   */
  forget(item: T): void {
    assertItem(item);
    this.#failures.delete(item);
  }

  /**
   * The failure count of `item`: the number of `retry` calls since it was last forgotten (docs/spec.md §9).
   *
   * @throws TypeError when `item` is `undefined` or `null`.
   */
  failures(item: T): number {
    assertItem(item);
    return this.#failures.get(item) ?? 0;
  }
}
