import { type Clock, realClock } from "./clock.js";
import { Delays } from "./delays.js";
import { Fifo } from "./fifo.js";
import { FAILED, IN_FLIGHT, IN_FLIGHT_DIRTY, ItemTable, NO_SLOT, QUEUED } from "./item-table.js";
import { MetricsRecorder, type MetricsSink } from "./metrics.js";
import type { RateLimiter } from "./rate-limiters.js";
import { assertDelay, assertItem, assertMaxRetries, assertShape, expected, signalOf } from "./validate.js";
import { Waiters, type WaitOptions } from "./waiters.js";

/**
 * Options for {@link WorkQueue}.
 *
 * @public
 */
export interface WorkQueueOptions<T = unknown> {
  /**
   * How many failures `retry` accepts for an item: the `retry` that brings the item's failure count to
   * `maxRetries` gives up (docs/spec.md §7). `0` gives up on the first failure; `Infinity` never gives up.
   * Required: a queue that bounds retries should say where the bound is.
   */
  readonly maxRetries: number;
  /**
   * The queue's time: when delayed items fall due ([docs/spec.md §17](../docs/spec.md#§17-delayed-adds)) and the `nowMs` its rate limiter is
   * given. Pass a {@link VirtualClock} in tests. @defaultValue {@link realClock}
   */
  readonly clock?: Clock | undefined;
  /**
   * How long the requeue of each `retry` waits ([docs/spec.md §7.3](../docs/spec.md#§7)), such as
   * {@link defaultControllerRateLimiter}`()`; `forget` calls its `forget`. @defaultValue none: `retry` requeues at once
   */
  readonly rateLimiter?: RateLimiter<T> | undefined;
  /**
   * Where the queue's metrics go ([docs/spec.md §19](../docs/spec.md#§19-metrics)), timed on its `clock`: `prometheusMetrics({ name })` of
   * `workqueue-spec/prometheus`, or a {@link MetricsSink} of your own. A sink serves one queue.
   * @defaultValue none: the queue keeps no metrics and reads no clock for them
   */
  readonly metrics?: MetricsSink | undefined;
}

/**
 * A keyed work queue: it collapses repeated `add`s of an item into one pending dispatch, never hands an item to a
 * second worker while the first still holds it, and gives up on an item after `maxRetries` failures.
 *
 * The caller's protocol ([docs/spec.md §2](../docs/spec.md#§2-state-and-the-callers-protocol)): `get` or `take` an item, work on it, then call `forget` on success or
 * `retry` on failure, and finally `done`, exactly once. `runWorkers` runs that loop for you. `get` answers at once;
 * `take` waits for an item. `shutDown` stops accepting work; `shutDownWithDrain` also waits until it is finished.
 * `addAfter` asks for an item later ([docs/spec.md §17](../docs/spec.md#§17-delayed-adds)); with a `rateLimiter`, `retry` requeues after its backoff.
 *
 * @remarks
 * Every operation is O(1) amortised, the waiting ones included. Items are compared as `Map` keys (SameValueZero); `undefined` and `null` are
 * not items. Misuse that [docs/spec.md §11](../docs/spec.md#§11-misuse-and-how-it-is-answered) calls safe (a `done` of an item that is not in flight, a `forget` of an
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
 *
 * const next = queue.take(); // a promise: nothing is queued, so it waits
 * queue.done("a");
 * queue.add("b"); // handed to the waiting take at once: `await next` is "b", in flight
 * queue.shutDown(); // no more adds; what is queued or in flight can still be finished
 * ```
 *
 * @example
 * With time: a delayed add, and a backoff on retry, on a virtual clock.
 * ```ts
 * import { exponentialBackoff, VirtualClock, WorkQueue } from "workqueue-spec";
 *
 * const clock = new VirtualClock();
 * const queue = new WorkQueue<string>({ maxRetries: 5, clock, rateLimiter: exponentialBackoff(100, 10_000) });
 * queue.addAfter("a", 50); // waiting: queue.waiting is 1, queue.size is 0
 * clock.advance(50); // "a" falls due: queued
 * queue.get(); // "a"
 * queue.retry("a"); // true: the first failure waits 100 ms
 * queue.done("a");
 * clock.advance(100); // queued again
 * ```
 *
 * @public
 */
export class WorkQueue<T> {
  /** The failure count at which `retry` gives up. Validated at construction; never changes. */
  readonly maxRetries: number;

  /**
   * Every item that is queued, in flight or has a failure count, with its state and count, plus tombstones of
   * items that were done. Invariants: an item's state is `QUEUED` exactly when its slot is in `#queue`; an item the
   * table does not hold, or holds as `FAILED` or `TOMBSTONE`, is absent. One lookup answers both "is it queued?"
   * (dedup) and "is it in flight?", and finds its failure count too.
   */
  readonly #table = new ItemTable<T>();
  /**
   * The slots of the queued items, oldest first. Invariant: no duplicates, and each is `QUEUED` in `#table`. `get`
   * takes the slot from here and reaches the item and its state by index, without a lookup.
   */
  readonly #queue = new Fifo();
  /** Invariant: the number of slots of `#table` that are `IN_FLIGHT` or `IN_FLIGHT_DIRTY`. */
  #inFlight = 0;
  /** Set by `shutDown`, never cleared. Invariant: while set, `#takers` is empty unless `#delays` is not. */
  #shuttingDown = false;
  /** The queue's clock ([docs/spec.md §3.3](../docs/spec.md#§3-construction)). */
  readonly #clock: Clock;
  /** The rate limiter of `retry`, if any ([docs/spec.md §7.3](../docs/spec.md#§7)). */
  readonly #rateLimiter: RateLimiter<T> | undefined;
  /**
   * The metrics, when a sink was given ([docs/spec.md §19](../docs/spec.md#§19-metrics)). Invariant: told every transition it counts, in
   * the order they happen, so its queued items are `#queue`'s and its items in flight those of `#table`.
   */
  readonly #metrics: MetricsRecorder<T> | undefined;
  /**
   * The waiting items ([docs/spec.md §17](../docs/spec.md#§17-delayed-adds)). Invariant: each is absent or `IN_FLIGHT`, never `QUEUED` or
   * `IN_FLIGHT_DIRTY`.
   */
  readonly #delays = new Delays<T>();
  /**
   * The one timer armed on the clock, and the due time it is armed for. Invariant: armed exactly when `#delays` is
   * not empty, for its earliest due time.
   */
  #timer: { readonly due: number; readonly cancel: () => void } | undefined;
  /**
   * The `take`s waiting for an item, oldest first. Invariant: empty unless `#queue` is: an item queued while a take
   * waits is handed to it at once (`#enqueue`).
   */
  readonly #takers = new Waiters<T | undefined>();
  /** The drains waiting. Invariant: empty unless shutting down with something queued, in flight or waiting. */
  readonly #drainers = new Waiters<undefined>();

  /**
   * Creates an empty queue.
   *
   * @param options - The queue's settings: `maxRetries`, and optionally `clock` and `rateLimiter` (see {@link WorkQueueOptions}).
   * @throws TypeError when `options` is not an object, `clock` is not a {@link Clock} or `rateLimiter` not a {@link RateLimiter}.
   * @throws RangeError when `options.maxRetries` is not a non-negative integer or `Infinity`.
   */
  constructor(options: WorkQueueOptions<T>) {
    if (typeof options !== "object" || options === null) {
      throw new TypeError(expected("options", "an object such as { maxRetries: 5 }", options));
    }
    assertMaxRetries(options.maxRetries);
    const { clock = realClock, rateLimiter, metrics } = options;
    // Stryker disable next-line ArrayDeclaration: equivalent: a clock has no optional method, and a name no clock has is as absent as none
    assertShape("clock", clock, "undefined or a Clock such as realClock", ["now", "schedule"], []);
    if (rateLimiter !== undefined) {
      assertShape(
        "rateLimiter",
        rateLimiter,
        "undefined or a RateLimiter such as exponentialBackoff(5, 1000)",
        ["when"],
        ["forget"],
      );
    }
    if (metrics !== undefined) {
      assertShape(
        "metrics",
        metrics,
        'undefined or a MetricsSink such as prometheusMetrics({ name: "pods" })',
        ["add", "retry", "observeQueueDuration", "observeWorkDuration"],
        ["connect"],
      );
    }
    this.maxRetries = options.maxRetries;
    this.#clock = clock;
    this.#rateLimiter = rateLimiter;
    this.#metrics = metrics === undefined ? undefined : new MetricsRecorder<T>({ sink: metrics, clock });
  }

  /** The number of queued items, waiting for `get`. Items in flight are not counted, dirty or not. */
  get size(): number {
    return this.#queue.length;
  }

  /** The number of items in flight: handed out by `get` or `take` and not yet `done`. */
  get inFlight(): number {
    return this.#inFlight;
  }

  /** The number of waiting items: asked for by `addAfter` or a delayed `retry`, and not due yet ([docs/spec.md §17.6](../docs/spec.md#§17-delayed-adds)). */
  get waiting(): number {
    return this.#delays.size;
  }

  /** Whether `shutDown` or `shutDownWithDrain` has been called ([docs/spec.md §12.2](../docs/spec.md#§12-shutdown)). */
  get shuttingDown(): boolean {
    return this.#shuttingDown;
  }

  /**
   * Asks for `item` to be processed ([docs/spec.md §4](../docs/spec.md#§4)). An item that is neither queued nor in flight is appended to
   * the tail, or handed to the oldest waiting `take`; an item already queued is left where it is; an item in flight
   * is only marked dirty, and its `done` will queue it. An item waiting since an `addAfter` stops waiting
   * ([docs/spec.md §17.4](../docs/spec.md#§17-delayed-adds)). While the queue is shutting down, it changes nothing.
   *
   * @param item - The item to process: any value but `undefined` and `null`.
   * @throws TypeError when `item` is `undefined` or `null`, shutting down or not.
   */
  add(item: T): void {
    assertItem(item);
    if (this.#shuttingDown) return;
    // Stryker disable next-line ConditionalExpression: equivalent: with nothing waiting, #unwait changes nothing; the guard only spares the lookup
    if (this.#delays.size !== 0) this.#unwait(item);
    this.#enter(item);
  }

  /**
   * Asks for `item` to be processed `delayMs` from now ([docs/spec.md §17](../docs/spec.md#§17-delayed-adds)): until then it is waiting, and
   * then it is added as `add` adds it. A delay that is not positive is an `add`. An item that is queued, or in
   * flight and marked dirty, does not wait: the processing already due serves this request too. An item that
   * waits already keeps the earlier due time. While the queue is shutting down, it changes nothing; items that
   * waited before the shutdown still fall due.
   *
   * @param item - The item to process: any value but `undefined` and `null`.
   * @param delayMs - How long to wait, in milliseconds on the queue's clock: a finite number.
   * @throws TypeError when `item` is `undefined` or `null`, or `delayMs` is not a number.
   * @throws RangeError when `delayMs` is `NaN`, `Infinity` or `-Infinity`.
   */
  addAfter(item: T, delayMs: number): void {
    assertItem(item);
    assertDelay(delayMs);
    if (delayMs <= 0) {
      this.add(item);
      return;
    }
    if (this.#shuttingDown) return;
    this.#wait(item, delayMs);
  }

  /** Makes `item` wait `delayMs` > 0 unless a processing is already due ([docs/spec.md §17.2](../docs/spec.md#§17-delayed-adds), [§17.3](../docs/spec.md#§17-delayed-adds)). */
  #wait(item: T, delayMs: number): void {
    const state = this.#table.state(this.#table.find(item));
    if (state === QUEUED || state === IN_FLIGHT_DIRTY) return;
    this.#delays.request(item, this.#clock.now() + delayMs);
    this.#arm();
  }

  /** Ends the wait of `item`, if it waits ([docs/spec.md §17.4](../docs/spec.md#§17-delayed-adds)). */
  #unwait(item: T): void {
    this.#delays.cancel(item);
    this.#arm();
  }

  /** Arms the one timer for the earliest due time, if it is not armed for it already, or disarms it when nothing waits. */
  #arm(): void {
    const due = this.#delays.nextDue;
    if (due === this.#timer?.due) return;
    this.#timer?.cancel();
    this.#timer = due === undefined ? undefined : { due, cancel: this.#clock.schedule(due, () => this.#fallDue()) };
  }

  /**
   * The timer ran: every waiting item due by now is added, earliest first, ties in request order
   * ([docs/spec.md §17.5](../docs/spec.md#§17-delayed-adds)), also while shutting down ([§17.7](../docs/spec.md#§17-delayed-adds)); then the timer is armed for the next due time.
   */
  #fallDue(): void {
    this.#timer = undefined;
    for (const item of this.#delays.takeDue(this.#clock.now())) this.#enter(item);
    this.#arm();
    // §14.4: no more work to come. A drain cannot end here: what fell due is queued or in flight now.
    // While takes wait nothing is queued, and what fell due went to them (#enqueue): so nothing is queued now either.
    if (this.#shuttingDown && this.#delays.size === 0) this.#takers.resolveAll(undefined);
  }

  /** What an accepted `add` does to `item` ([docs/spec.md §4](../docs/spec.md#§4)), and what an item falling due does ([§17.5](../docs/spec.md#§17-delayed-adds)). */
  #enter(item: T): void {
    const table = this.#table;
    const slot = table.find(item);
    if (slot === NO_SLOT) {
      this.#metrics?.added();
      this.#enqueue(item, table.insert(item, QUEUED));
    } else this.#enterAt(item, slot);
  }

  /** What {@link WorkQueue.#enter} does to `item`, which `#table` holds in `slot`. */
  #enterAt(item: T, slot: number): void {
    const table = this.#table;
    const state = table.state(slot);
    if (state >= FAILED) {
      this.#metrics?.added();
      table.revive(slot);
      this.#enqueue(item, slot);
    } else if (state === IN_FLIGHT) {
      this.#metrics?.added();
      table.set(slot, IN_FLIGHT_DIRTY);
    }
  }

  /**
   * Hands out the oldest queued item and marks it in flight ([docs/spec.md §5](../docs/spec.md#§5)), or returns `undefined` when nothing
   * is queued. It never blocks.
   *
   * The caller must call `done` with the item exactly once when it has finished with it, after any `retry` or
   * `forget`; until then, the item is not handed out again.
   */
  get(): T | undefined {
    const queue = this.#queue;
    if (queue.length === 0) return undefined;
    const table = this.#table;
    const slot = queue.shift();
    table.set(slot, IN_FLIGHT);
    this.#inFlight++;
    const item = table.item(slot);
    this.#metrics?.handedOut(item, this.#clock.now());
    return item;
  }

  /**
   * Answers a promise of the next item, marked in flight as `get` marks it ([docs/spec.md §14](../docs/spec.md#§14-waiting-for-work)): the oldest queued
   * item at once; otherwise the first item queued from now on, served to waiting takes in the order they were
   * called; or `undefined` once the queue is shut down and nothing is queued.
   *
   * The caller must `done` the item it resolves with, exactly once, even if its signal aborted in the meantime: an
   * item is marked in flight only for a take that resolves with it. A take that rejects took nothing.
   *
   * @param options - `signal`, an `AbortSignal` that withdraws the take (see {@link WaitOptions}).
   * @throws TypeError when `options` is not an object or its `signal` is not an `AbortSignal`.
   */
  take(options?: WaitOptions): Promise<T | undefined> {
    const signal = signalOf(options);
    if (signal?.aborted) return Promise.reject(signal.reason);
    const item = this.get();
    if (item !== undefined || (this.#shuttingDown && this.#delays.size === 0)) return Promise.resolve(item);
    return this.#takers.wait(signal);
  }

  /**
   * Takes items one by one with `take` until it answers `undefined` ([docs/spec.md §14.7](../docs/spec.md#§14-waiting-for-work)):
   * `for await (const item of queue)` ends once the queue is shut down and nothing is queued. The loop's body must
   * `done` each item. Leaving the loop early takes nothing more.
   */
  async *[Symbol.asyncIterator](): AsyncGenerator<T, void, undefined> {
    for (let item = await this.take(); item !== undefined; item = await this.take()) yield item;
  }

  /**
   * Stops accepting work ([docs/spec.md §12](../docs/spec.md#§12-shutdown)): from now on `add`, and the requeue of `retry`, change nothing, while
   * `get`, `take` and `done` go on, so what is queued or in flight can still be finished — a `done` still requeues
   * an item marked dirty before the shutdown. Every waiting `take` resolves with `undefined`, unless items are
   * waiting ([docs/spec.md §17.7](../docs/spec.md#§17-delayed-adds)): they still fall due, and the takes get them. A second call changes nothing.
   * It does not wait for anything: {@link WorkQueue.shutDownWithDrain} does.
   */
  shutDown(): void {
    this.#shuttingDown = true;
    if (this.#delays.size === 0) this.#takers.resolveAll(undefined);
  }

  /**
   * Shuts the queue down and answers a promise that resolves once nothing is queued, in flight or waiting
   * ([docs/spec.md §13](../docs/spec.md#§13-draining)). Every caller's promise resolves; an abort of `options.signal` rejects only its own, with the
   * signal's reason, and the queue stays shut down.
   *
   * The items in flight must be `done` by whoever holds them, or the drain never resolves.
   *
   * @param options - `signal`, an `AbortSignal` that stops this caller's wait (see {@link WaitOptions}).
   * @throws TypeError when `options` is not an object or its `signal` is not an `AbortSignal`; the queue is then not
   * shut down.
   */
  shutDownWithDrain(options?: WaitOptions): Promise<void> {
    const signal = signalOf(options);
    this.shutDown();
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (this.#queue.length === 0 && this.#inFlight === 0 && this.#delays.size === 0) return Promise.resolve();
    return this.#drainers.wait(signal);
  }

  /**
   * Ends the processing of `item` (docs/spec.md §6): it is no longer in flight, and if an `add` marked it dirty
   * meanwhile, it is appended to the tail. A `done` of an item that is not in flight changes nothing: it neither
   * requeues nor duplicates it.
   *
   * @param item - The item whose processing ended: the caller got it from `get` or `take`.
   * @throws TypeError when `item` is `undefined` or `null`.
   */
  done(item: T): void {
    assertItem(item);
    const table = this.#table;
    const slot = table.find(item);
    const state = table.state(slot);
    if (state !== IN_FLIGHT && state !== IN_FLIGHT_DIRTY) return;
    this.#metrics?.finished(item, this.#clock.now());
    this.#inFlight--;
    // An item marked dirty is queued again in the slot it has: no delete and set.
    if (state === IN_FLIGHT_DIRTY) this.#enqueue(item, slot);
    else {
      table.vacate(slot);
      // The only call that can empty a shut-down queue: nothing else ends a flight without queueing.
      if (this.#inFlight === 0 && this.#queue.length === 0 && this.#delays.size === 0)
        this.#drainers.resolveAll(undefined);
    }
  }

  /**
   * Queues `item`, or, when a `take` is waiting, hands it straight to the oldest one ([docs/spec.md §14.3](../docs/spec.md#§14-waiting-for-work)): the item
   * is marked in flight now, in the caller's call, so a later abort of that take cannot un-take it, and a take
   * withdrawn earlier is no longer in `#takers` to be chosen.
   */
  #enqueue(item: T, slot: number): void {
    const metrics = this.#metrics;
    metrics?.queued(item, this.#clock.now());
    if (this.#takers.length === 0) {
      this.#table.set(slot, QUEUED);
      this.#queue.push(slot);
    } else {
      this.#table.set(slot, IN_FLIGHT);
      this.#inFlight++;
      metrics?.handedOut(item, this.#clock.now());
      this.#takers.resolveOldest(item);
    }
  }

  /**
   * Records a failure of `item` and requeues it unless it has failed too often ([docs/spec.md §7](../docs/spec.md#§7)). The failure
   * count goes up by one; when it reaches `maxRetries`, or while the queue is shutting down, the queue gives up and
   * returns `false`, requeueing nothing. Otherwise the requeue goes through `add` — or, with a `rateLimiter`,
   * through `addAfter` with the limiter's delay for this failure — so an item in flight is only marked dirty (or
   * waits) and comes back after its `done`, and the call returns `true`.
   *
   * The caller still has to call `done`. `retry` does not reset the count; `forget` does.
   *
   * @param item - The item that failed, usually one the caller holds.
   * @returns `true` when a requeue was requested, `false` when the queue gave up on the item.
   * @throws TypeError when `item` is `undefined` or `null`.
   * @throws RangeError when the rate limiter answers a delay that is not a finite number; the count is then unchanged.
   */
  retry(item: T): boolean {
    assertItem(item);
    const table = this.#table;
    const failures = table.failures(table.find(item)) + 1;
    const givesUp = failures >= this.maxRetries || this.#shuttingDown;
    const delay = givesUp ? 0 : (this.#rateLimiter?.when(item, failures, this.#clock.now()) ?? 0);
    if (!Number.isFinite(delay)) {
      throw new RangeError(expected("rateLimiter.when(item, failures, nowMs)", "a finite number", delay));
    }
    // Found again: the rate limiter may have called the queue, which may have swept the slot or given it one.
    let slot = table.find(item);
    if (slot === NO_SLOT) slot = table.insert(item, FAILED);
    table.fail(slot, failures);
    if (givesUp) return false;
    this.#metrics?.retried();
    if (delay > 0) this.#wait(item, delay);
    else {
      // As `add` requeues it, without looking it up again (`givesUp` covers shutting down).
      // Stryker disable next-line ConditionalExpression: equivalent: with nothing waiting, #unwait changes nothing; the guard only spares the lookup
      if (this.#delays.size !== 0) this.#unwait(item);
      this.#enterAt(item, slot);
    }
    return true;
  }

  /**
   * Clears the failure count of `item` ([docs/spec.md §8](../docs/spec.md#§8)), typically after it was processed successfully.
   * It does not dequeue the item or end its processing: the caller still has to call `done`.
   *
   * @param item - The item whose failure count is cleared.
   * @throws TypeError when `item` is `undefined` or `null`.
   */
  forget(item: T): void {
    assertItem(item);
    this.#table.forget(this.#table.find(item));
    this.#rateLimiter?.forget?.(item);
  }

  /**
   * The failure count of `item`: the number of `retry` calls since it was last forgotten ([docs/spec.md §9](../docs/spec.md#§9-views)).
   *
   * @param item - The item whose count is read.
   * @throws TypeError when `item` is `undefined` or `null`.
   */
  failures(item: T): number {
    assertItem(item);
    return this.#table.failures(this.#table.find(item));
  }
}
