/**
 * Helpers that wait without a clock: a turn of the event loop, and a promise's settlement read synchronously.
 * The lifecycle check and the tests bound their waits in turns, never in milliseconds.
 */

/** One turn of the event loop: every pending microtask runs, and Node reports unhandled rejections. Not a timer. */
export function flush(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** A promise's settlement, readable synchronously once it happened. */
export interface Tracked<V> {
  /** Where the promise stands. */
  state: "pending" | "resolved" | "rejected";
  /** What it resolved with. */
  value?: V;
  /** What it rejected with. */
  reason?: unknown;
}

/** Follows `promise` (which handles its rejection) and calls `onSettle` once it settled. */
export function track<V>(promise: Promise<V>, onSettle: (tracked: Tracked<V>) => void = () => {}): Tracked<V> {
  const tracked: Tracked<V> = { state: "pending" };
  promise.then(
    (value) => onSettle(Object.assign(tracked, { state: "resolved", value })),
    (reason: unknown) => onSettle(Object.assign(tracked, { state: "rejected", reason })),
  );
  return tracked;
}

/** Calls `thunk`, or a promise that rejects with what it threw. */
export function promised<V>(thunk: () => PromiseLike<V>): Promise<V> {
  try {
    return Promise.resolve(thunk());
  } catch (error) {
    return Promise.reject(error);
  }
}
