/**
 * Options for `WorkQueue.take` and `WorkQueue.shutDownWithDrain`.
 *
 * @public
 */
export interface WaitOptions {
  /**
   * Stops the wait: when it aborts, the promise rejects with `signal.reason`. An already aborted signal rejects at
   * once ([docs/spec.md §13.3](../docs/spec.md#§13-draining), [§14.5](../docs/spec.md#§14-waiting-for-work)). `AbortSignal.timeout(ms)` bounds a wait in time.
   *
   * @defaultValue `undefined`: wait as long as it takes.
   */
  readonly signal?: AbortSignal | undefined;
}

/** A waiting promise: how to settle it, and its neighbours in the list. */
interface Waiter<V> {
  /** The older neighbour, `undefined` for the oldest. */
  older: Waiter<V> | undefined;
  /** The newer neighbour, `undefined` for the newest. */
  newer: Waiter<V> | undefined;
  /** Unlinks the waiter, removes its abort listener and resolves its promise with `value`. */
  resolve(value: V): void;
}

/**
 * A first-in, first-out list of waiting promises — the `take`s waiting for an item, or the drains waiting for the
 * queue to empty — each of which an `AbortSignal` may withdraw.
 *
 * @remarks
 * A doubly linked list, so that every operation is O(1): appending a waiter, settling the oldest, and withdrawing
 * one from anywhere when its signal aborts. (An array would shift on every settle and search on every abort; a
 * `Set` would walk past the holes its deletions leave at the front, see `Fifo`.) A waiter is unlinked, and its abort
 * listener removed, the moment its promise settles, so a settled waiter leaves nothing behind: not in the list, not
 * on the signal.
 *
 * @typeParam V - What a waiter's promise resolves with.
 * @internal
 */
export class Waiters<V> {
  /** The oldest waiter. Invariant: `undefined` exactly when `#length` is 0. */
  #oldest: Waiter<V> | undefined;
  /** The newest waiter. Invariant: `undefined` exactly when `#length` is 0. */
  #newest: Waiter<V> | undefined;
  /** Invariant: the number of waiters linked from `#oldest` through `newer`. */
  #length = 0;

  /** The number of waiting promises. */
  get length(): number {
    return this.#length;
  }

  /**
   * Appends a waiter and answers its promise: it resolves with what {@link Waiters.resolveOldest} or
   * {@link Waiters.resolveAll} give it, or rejects with `signal.reason` when `signal` aborts first, withdrawing it.
   *
   * @remarks The caller must check that `signal` has not aborted yet: an aborted signal fires no more events.
   */
  wait(signal: AbortSignal | undefined): Promise<V> {
    return new Promise<V>((resolve, reject) => {
      const abort = () => {
        this.#unlink(waiter);
        reject((signal as AbortSignal).reason); // only a signal can call `abort`
      };
      const waiter: Waiter<V> = {
        older: this.#newest,
        newer: undefined,
        resolve: (value) => {
          this.#unlink(waiter);
          signal?.removeEventListener("abort", abort);
          resolve(value);
        },
      };
      if (this.#newest === undefined) this.#oldest = waiter;
      else this.#newest.newer = waiter;
      this.#newest = waiter;
      this.#length++;
      signal?.addEventListener("abort", abort, { once: true });
    });
  }

  /** Resolves the oldest waiter's promise with `value`. The caller must check that one is waiting. */
  resolveOldest(value: V): void {
    (this.#oldest as Waiter<V>).resolve(value);
  }

  /** Resolves every waiting promise with `value`, oldest first. */
  resolveAll(value: V): void {
    for (let count = this.#length; count > 0; count--) this.resolveOldest(value);
  }

  /** Takes `waiter` out of the list, wherever it is. */
  #unlink(waiter: Waiter<V>): void {
    if (waiter.older === undefined) this.#oldest = waiter.newer;
    else waiter.older.newer = waiter.newer;
    if (waiter.newer === undefined) this.#newest = waiter.older;
    else waiter.newer.older = waiter.older;
    this.#length--;
  }
}
