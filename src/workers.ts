/**
 * The controller loop ([docs/spec.md §15](../docs/spec.md#§15-the-controller-loop)): workers that take items from a queue, hand each to a handler, and keep the
 * queue's protocol for it — `forget` on success, `retry` on failure, `done` always. It uses only the queue's public
 * verbs; the queue knows nothing of it.
 */
import type { WorkQueue } from "./queue.js";
import { assertConcurrency, assertFunction, assertOptions, assertSignal } from "./validate.js";

/**
 * Options for {@link runWorkers}.
 *
 * @public
 */
export interface WorkerOptions<T> {
  /**
   * How many items are handled at once: the number of workers, a positive integer.
   *
   * @defaultValue `1`
   */
  readonly concurrency?: number | undefined;
  /**
   * Stops the workers: a worker waiting for an item stops at once; one handling an item finishes it (handler,
   * `forget` or `retry`, callbacks, `done`) and then stops. It does not shut the queue down: what is queued stays.
   *
   * @defaultValue `undefined`: the workers stop only once the queue is shut down and nothing is queued.
   */
  readonly signal?: AbortSignal | undefined;
  /**
   * Called with the item and every failure of its handler, after `retry` counted it (so `queue.failures(item)`
   * includes it), whether or not the item will be retried; and with what `onGiveUp` throws. A promise it answers
   * is awaited before `done`. What it throws or rejects with is discarded: it must report, not fail.
   *
   * @defaultValue `undefined`: failures are not reported.
   */
  readonly onError?: ((item: T, error: unknown) => unknown) | undefined;
  /**
   * Called when `retry` gives up on an item — at its `maxRetries`-th failure, or at any failure once the queue is
   * shutting down — with the handler's error. A promise it answers is awaited before `done`. What it throws or
   * rejects with goes to `onError`.
   *
   * @defaultValue `undefined`: the item is dropped silently.
   */
  readonly onGiveUp?: ((item: T, error: unknown) => unknown) | undefined;
}

/**
 * What a handler is given besides its item.
 *
 * @public
 */
export interface HandlerContext {
  /**
   * Aborts when the workers' `signal` does (with its reason), so that a long handler can stop early; a handler that
   * stops early should throw (the item is then retried) or finish what it must. It never aborts when the workers
   * were given no signal.
   */
  readonly signal: AbortSignal;
}

/** The callbacks' default: nothing. @internal */
export function ignore(): void {}

/** The signal of handlers whose workers have none: it never aborts. */
const never = new AbortController().signal;

/**
 * Runs `concurrency` workers on `queue` (docs/spec.md §15). Each takes an item, awaits `handler(item, { signal })`, then calls
 * `forget` on success, or on failure `retry`, `onError` and, when `retry` gives up, `onGiveUp`; and always `done`.
 * The promise resolves once every worker has stopped: when the queue is shut down and nothing is queued, or after
 * `signal` aborts and the handlers in flight have settled.
 *
 * `queue` is a `WorkQueue`, or anything with its `take`, `forget`, `retry` and `done`: those are all it calls, and a
 * `take` that rejects stops its worker. The handler may answer a value or a promise, and may throw: a failure never
 * escapes, never becomes an unhandled rejection and never stops a worker. A handler that never settles holds its worker, and its item in flight, for
 * ever. `runWorkers` does not shut the queue down: call `queue.shutDown()` or `queue.shutDownWithDrain()` to stop.
 *
 * @param queue - The queue to work on: a `WorkQueue`, or anything with its `take`, `forget`, `retry` and `done`.
 * @param handler - Processes one item; it may answer a promise, and may throw or reject to have the item retried. Its second argument holds the workers' `signal`.
 * @param options - `concurrency`, `signal`, `onError` and `onGiveUp` (see {@link WorkerOptions}).
 * @returns A promise that resolves with `undefined` once every worker has stopped; it never rejects.
 * @throws TypeError when `handler` is not a function, `options` is not an object, `signal` is not an `AbortSignal`,
 * or `onError` or `onGiveUp` is not a function.
 * @throws RangeError when `concurrency` is not a positive integer.
 *
 * @example
 * ```ts
 * import { runWorkers, WorkQueue } from "workqueue-spec";
 *
 * const queue = new WorkQueue<string>({ maxRetries: 3 });
 * const workers = runWorkers(queue, async (key) => console.log(`reconciled ${key}`), { concurrency: 2 });
 * queue.add("default/web");
 * await queue.shutDownWithDrain(); // every key added before is handled
 * await workers;
 * ```
 *
 * @public
 */
export function runWorkers<T>(
  queue: Pick<WorkQueue<T>, "take" | "forget" | "retry" | "done">,
  handler: (item: T, context: HandlerContext) => unknown,
  options?: WorkerOptions<T>,
): Promise<void> {
  assertFunction("handler", handler);
  assertOptions(options, "{ concurrency: 4 }");
  const { concurrency = 1, signal, onError = ignore, onGiveUp = ignore } = options ?? {};
  assertConcurrency(concurrency);
  assertSignal(signal);
  assertFunction("onError", onError, "undefined or a function");
  assertFunction("onGiveUp", onGiveUp, "undefined or a function");
  const next = () => queue.take({ signal }).catch(ignore); // a take rejects only when the signal aborts
  const context: HandlerContext = { signal: signal ?? never };
  const work = async () => {
    for (let item = await next(); item !== undefined; item = await next()) {
      await handle(queue, item, (x) => handler(x, context), onError, onGiveUp);
    }
  };
  return Promise.all(Array.from({ length: concurrency }, work)).then(ignore);
}

/** Handles one item and keeps the queue's protocol for it, whatever the handler and the callbacks do. */
async function handle<T>(
  queue: Pick<WorkQueue<T>, "forget" | "retry" | "done">,
  item: T,
  handler: (item: T) => unknown,
  onError: (item: T, error: unknown) => unknown,
  onGiveUp: (item: T, error: unknown) => unknown,
): Promise<void> {
  const report = (error: unknown) => attempt(() => onError(item, error), ignore);
  try {
    await handler(item);
    queue.forget(item);
  } catch (error) {
    const requeued = queue.retry(item);
    await report(error);
    if (!requeued) await attempt(() => onGiveUp(item, error), report);
  } finally {
    queue.done(item);
  }
}

/** Calls `callback` and awaits what it answers; what it throws or rejects with goes to `fallback`. @internal */
export async function attempt(callback: () => unknown, fallback: (error: unknown) => unknown): Promise<void> {
  try {
    await callback();
  } catch (error) {
    await fallback(error);
  }
}
