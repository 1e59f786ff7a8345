/**
 * The executable specification of waiting for work (docs/spec.md §13, §14): a queue model and the takes that wait
 * on it, in a plain array. As naive as it can be: after every call that may queue an item, the waiting takes,
 * oldest first, each get what `get` answers, so that an item is never left queued while a take waits.
 */
import { WorkQueueModel } from "./work-queue-model.js";

/** A call of `take` as the model sees it: waiting, or settled as its promise is. */
export interface Take<T> {
  /** The take's number: the first take of a model is 1. */
  readonly id: number;
  /** `waiting`, `resolved` (with `item`) or `rejected` (its signal aborted, §14.5). */
  state: "waiting" | "resolved" | "rejected";
  /** What a resolved take got: an item, or `undefined` once the queue is shut down and empty (§14.2, §14.4). */
  item: T | undefined;
}

/**
 * The model of a queue with waiting takes. The verbs that may queue an item (`add`, `retry`, `done`) and
 * `shutDown` go through it; everything else goes to {@link WaitingModel.queue} directly.
 *
 * @typeParam T - The item type.
 */
export class WaitingModel<T> {
  /** The queue the takes wait on (§2–§12). */
  readonly queue: WorkQueueModel<T>;
  /** §14.3: the waiting takes, oldest first. */
  #waiting: Take<T>[] = [];
  /** How many takes were made. */
  #takes = 0;

  /** §3: an empty queue with no take waiting. */
  constructor(options: { readonly maxRetries: number }) {
    this.queue = new WorkQueueModel<T>(options);
  }

  /** §14.1, §14.2, §14.3, and §14.5 for a signal that `aborted` already. */
  take(aborted = false): Take<T> {
    const take: Take<T> = { id: ++this.#takes, state: "waiting", item: undefined };
    if (aborted)
      take.state = "rejected"; // §14.5: takes nothing
    else this.#waiting.push(take);
    this.#serve();
    if (take.state === "waiting" && this.queue.shuttingDown) settle(take, undefined); // §14.2
    this.#waiting = this.#waiting.filter((x) => x.state === "waiting");
    return take;
  }

  /** §14.5: a waiting take is withdrawn; a settled one stays as it is. */
  abort(take: Take<T>): void {
    if (take.state !== "waiting") return;
    take.state = "rejected";
    this.#waiting = this.#waiting.filter((x) => x !== take);
  }

  /** §4, then §14.3 */
  add(item: T): void {
    this.queue.add(item);
    this.#serve();
  }

  /** §7, then §14.3 */
  retry(item: T): boolean {
    const requeued = this.queue.retry(item);
    this.#serve();
    return requeued;
  }

  /** §6, then §14.3 */
  done(item: T): void {
    this.queue.done(item);
    this.#serve();
  }

  /** §12.1, §14.4: every waiting take resolves with `undefined`. */
  shutDown(): void {
    this.queue.shutDown();
    for (const take of this.#waiting) settle(take, undefined);
    this.#waiting = [];
  }

  /** §13.1: shutting down, nothing queued, nothing in flight. */
  get drained(): boolean {
    return this.queue.shuttingDown && this.queue.size === 0 && this.queue.inFlight === 0;
  }

  /** How many takes are waiting. */
  get waiting(): number {
    return this.#waiting.length;
  }

  /** §14.3: each waiting take, oldest first, gets the oldest queued item, while any is queued. */
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
