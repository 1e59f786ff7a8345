/**
 * The executable specification of waiting for work ([docs/spec.md §13](../docs/spec.md#§13-draining), [§14](../docs/spec.md#§14-waiting-for-work)): a queue model and the takes that wait
 * on it, in a plain array. As naive as it can be: after every call that may queue an item, the waiting takes,
 * oldest first, each get what `get` answers, so that an item is never left queued while a take waits.
 */
import { type ModelOptions, WorkQueueModel } from "./work-queue-model.js";

/**
 * A call of `take` as the model sees it: waiting, or settled as its promise is.
 *
 * @public
 */
export interface Take<T> {
  /** The take's number: the first take of a model is 1. */
  readonly id: number;
  /** `waiting`, `resolved` (with `item`) or `rejected` (its signal aborted, [§14.5](../docs/spec.md#§14-waiting-for-work)). */
  state: "waiting" | "resolved" | "rejected";
  /** What a resolved take got: an item, or `undefined` once the queue is shut down and empty ([§14.2](../docs/spec.md#§14-waiting-for-work), [§14.4](../docs/spec.md#§14-waiting-for-work)). */
  item: T | undefined;
}

/**
 * The model of a queue with waiting takes. The verbs that may queue an item (`add`, `retry`, `done`) and
 * `shutDown` go through it; everything else goes to {@link WaitingModel.queue} directly.
 *
 * @typeParam T - The item type.
 * @example
 * ```ts
 * import { WaitingModel } from "workqueue-spec/model";
 *
 * const model = new WaitingModel<string>({ maxRetries: 3 });
 * const take = model.take(); // nothing queued: it waits
 * model.add("a"); // handed to the waiting take at once
 * [take.state, take.item]; // ["resolved", "a"]
 * model.queue.inFlight; // 1
 * model.shutDown();
 * model.take().item; // undefined: shut down and nothing queued
 * ```
 *
 * @public
 */
export class WaitingModel<T> {
  /** The queue the takes wait on ([§2](../docs/spec.md#§2-state-and-the-callers-protocol)–[§12](../docs/spec.md#§12-shutdown)). */
  readonly queue: WorkQueueModel<T>;
  /** [§14.3](../docs/spec.md#§14-waiting-for-work): the waiting takes, oldest first. */
  #waiting: Take<T>[] = [];
  /** How many takes were made. */
  #takes = 0;
  /** [§20.10](../docs/spec.md#§20-leases-on-postgresql): whether a take waits, while shutting down, for the items in flight too. */
  readonly #leases: boolean;

  /**
   * [§3](../docs/spec.md#§3-construction): an empty queue with no take waiting.
   *
   * @param options - `maxRetries` and `rateLimiter`, as for `WorkQueueModel`; `leases: true` for a queue of leases
   *   ([§14.2](../docs/spec.md#§14-waiting-for-work), [§20.10](../docs/spec.md#§20-leases-on-postgresql)), whose takes, while shutting down, also wait while an item is in flight
   *   (its lease's expiry would queue it again), and resolve with `undefined` at the `done` that ends the last one.
   *   Default `false`.
   */
  constructor(options: ModelOptions<T> & { readonly leases?: boolean | undefined }) {
    this.queue = new WorkQueueModel<T>(options);
    this.#leases = options.leases === true;
  }

  /**
   * [§14.1](../docs/spec.md#§14-waiting-for-work), [§14.2](../docs/spec.md#§14-waiting-for-work), [§14.3](../docs/spec.md#§14-waiting-for-work), and [§14.5](../docs/spec.md#§14-waiting-for-work) for a signal that `aborted` already.
   *
   * @param aborted - Whether the take's signal has already aborted ([§14.5](../docs/spec.md#§14-waiting-for-work)): then it takes nothing.
   */
  take(aborted = false): Take<T> {
    const take: Take<T> = { id: ++this.#takes, state: "waiting", item: undefined };
    if (aborted)
      take.state = "rejected"; // §14.5: takes nothing
    else this.#waiting.push(take);
    this.#serve();
    if (take.state === "waiting" && this.#noMoreWork) settle(take, undefined); // §14.2
    this.#waiting = this.#waiting.filter((x) => x.state === "waiting");
    return take;
  }

  /**
   * [§14.5](../docs/spec.md#§14-waiting-for-work): a waiting take is withdrawn; a settled one stays as it is.
   *
   * @param take - A take this model answered.
   */
  abort(take: Take<T>): void {
    if (take.state !== "waiting") return;
    take.state = "rejected";
    this.#waiting = this.#waiting.filter((x) => x !== take);
  }

  /**
   * [§4](../docs/spec.md#§4), then [§14.3](../docs/spec.md#§14-waiting-for-work)
   *
   * @param item - The item to add ([§4](../docs/spec.md#§4), then [§14.3](../docs/spec.md#§14-waiting-for-work)).
   */
  add(item: T): void {
    this.queue.add(item);
    this.#serve();
  }

  /**
   * [§7](../docs/spec.md#§7), then [§14.3](../docs/spec.md#§14-waiting-for-work)
   *
   * @param item - The item that failed ([§7](../docs/spec.md#§7), then [§14.3](../docs/spec.md#§14-waiting-for-work)).
   */
  retry(item: T): boolean {
    const requeued = this.queue.retry(item);
    this.#serve();
    return requeued;
  }

  /**
   * [§6](../docs/spec.md#§6), then [§14.3](../docs/spec.md#§14-waiting-for-work)
   *
   * @param item - The item whose processing ended ([§6](../docs/spec.md#§6), then [§14.3](../docs/spec.md#§14-waiting-for-work)).
   */
  done(item: T): void {
    this.queue.done(item);
    this.#serve();
    this.#endIfNoMoreWork(); // §20.10: with leases, the done that ends the last item in flight
  }

  /**
   * [§17](../docs/spec.md#§17-delayed-adds), then [§14.3](../docs/spec.md#§14-waiting-for-work)
   *
   * @param item - The item to add later ([§17](../docs/spec.md#§17-delayed-adds)).
   * @param delayMs - How long it waits ([§17](../docs/spec.md#§17-delayed-adds)).
   */
  addAfter(item: T, delayMs: number): void {
    this.queue.addAfter(item, delayMs);
    this.#serve();
  }

  /**
   * [§17.5](../docs/spec.md#§17-delayed-adds), [§14.3](../docs/spec.md#§14-waiting-for-work) and [§14.4](../docs/spec.md#§14-waiting-for-work): time moves by `ms` in steps, one due time after another, and after
   * each the waiting takes are served; once shut down with nothing queued or waiting, the rest resolve with
   * `undefined`.
   *
   * @param ms - How far to move ([§18.9](../docs/spec.md#§18-backoff-and-rate-limiters)).
   */
  advance(ms: number): void {
    const end = this.queue.now + ms;
    const dues = new Set(this.queue.snapshot().waiting.map(([, due]) => due));
    for (const due of [...dues].filter((at) => at <= end).sort((a, b) => a - b)) {
      this.queue.advance(due - this.queue.now);
      this.#serve();
      this.#endIfNoMoreWork();
    }
    this.queue.advance(end - this.queue.now);
  }

  /** [§12.1](../docs/spec.md#§12-shutdown), [§14.4](../docs/spec.md#§14-waiting-for-work): every waiting take resolves with `undefined`, unless items still wait ([§17.7](../docs/spec.md#§17-delayed-adds)). */
  shutDown(): void {
    this.queue.shutDown();
    this.#endIfNoMoreWork();
  }

  /** [§13.1](../docs/spec.md#§13-draining): shutting down, nothing queued, nothing in flight, nothing waiting. */
  get drained(): boolean {
    return this.#noMoreWork && this.queue.inFlight === 0;
  }

  /**
   * [§14.2](../docs/spec.md#§14-waiting-for-work), [§17.7](../docs/spec.md#§17-delayed-adds): shutting down, nothing queued and nothing waiting — and, with leases ([§20.10](../docs/spec.md#§20-leases-on-postgresql)), nothing
   * in flight — so a take gets `undefined`.
   */
  get #noMoreWork(): boolean {
    const held = this.#leases && this.queue.inFlight > 0; // §20.10
    return this.queue.shuttingDown && this.queue.size === 0 && this.queue.waiting === 0 && !held;
  }

  /** [§14.4](../docs/spec.md#§14-waiting-for-work): once there is no more work, every waiting take resolves with `undefined`. */
  #endIfNoMoreWork(): void {
    if (!this.#noMoreWork) return;
    for (const take of this.#waiting) settle(take, undefined);
    this.#waiting = [];
  }

  /** How many takes are waiting. */
  get waiting(): number {
    return this.#waiting.length;
  }

  /** [§14.3](../docs/spec.md#§14-waiting-for-work): each waiting take, oldest first, gets the oldest queued item, while any is queued. */
  #serve(): void {
    for (const take of this.#waiting) if (this.queue.size > 0) settle(take, this.queue.get());
    this.#waiting = this.#waiting.filter((x) => x.state === "waiting");
  }
}

/** Resolves `take` with `item`. */
function settle<T>(take: Take<T>, item: T | undefined): void {
  take.state = "resolved";
  take.item = item;
}
