/**
 * The controller loop on PostgreSQL ([docs/spec.md §20.12–§20.16](../../docs/spec.md#§20-leases-on-postgresql)): §15's
 * loop for a queue with leases — each worker takes a lease, keeps it alive with `extend` while its handler runs,
 * aborts the handler's signal when the lease is lost, and then calls `forget` or `retry` and `done` with the lease.
 * It uses only the queue's public verbs; the queue knows nothing of it.
 */

import { assertConcurrency, assertFunction, assertOptions, assertShape, assertSignal, expected } from "../validate.js";
import { attempt, ignore } from "../workers.js";
import { DatabaseUnavailableError, StaleLeaseError } from "./errors.js";
import type { Lease, PostgresWorkQueue } from "./queue.js";

/**
 * What {@link runLeaseWorkers} calls: a `PostgresWorkQueue`, or anything with its leased verbs and `leaseMs`.
 *
 * @public
 */
export type LeasedQueue = Pick<PostgresWorkQueue, "take" | "extend" | "forget" | "retry" | "done" | "leaseMs"> &
  Partial<Pick<PostgresWorkQueue, "finish">>;

/**
 * Options for {@link runLeaseWorkers}.
 *
 * @public
 */
export interface LeaseWorkerOptions {
  /** How many leases are held at once in this process: the number of workers, a positive integer. @defaultValue `1` */
  readonly concurrency?: number | undefined;
  /**
   * Stops the workers as §15.3 says: a worker waiting in `take` stops at once; one handling an item finishes it
   * (handler, `forget` or `retry`, callbacks, `done`) and then stops — with `finishAhead`, its calls finish in the
   * background, and the promise waits for them. It does not shut the queue down.
   *
   * @defaultValue `undefined`: the workers stop only once `take` answers `undefined` (the queue shut down, §20.10).
   */
  readonly signal?: AbortSignal | undefined;
  /**
   * How often a running handler's lease is extended (`extend`, §20.5), in milliseconds: a positive number below the
   * queue's `leaseMs`, on this process's timers (not the queue's clock).
   *
   * @defaultValue a third of the queue's `leaseMs`, so that two beats in a row may fail before the lease expires
   */
  readonly heartbeatMs?: number | undefined;
  /**
   * How long a worker pauses after its `take` could not reach the database (`DatabaseUnavailableError`) before it
   * takes again, in milliseconds, a non-negative number. @defaultValue `1_000`
   */
  readonly pauseMs?: number | undefined;
  /**
   * Called with the item and every failure of its handler, after `retry` counted it; with a call of the loop that
   * was refused (`StaleLeaseError`: the lease was lost, and the item is another worker's now) or could not reach the
   * database (`DatabaseUnavailableError`); and with `undefined` and the error of a `take` that could not reach it.
   * A promise it answers is awaited. What it throws or rejects with is discarded: it must report, not fail.
   *
   * @defaultValue `undefined`: nothing is reported.
   */
  readonly onError?: ((item: string | undefined, error: unknown) => unknown) | undefined;
  /**
   * Called when `retry` gives up on an item (§7), with the handler's error; awaited before `done`. What it throws or
   * rejects with goes to `onError`. @defaultValue `undefined`: the item is dropped silently, its failures kept (§20.9).
   */
  readonly onGiveUp?: ((item: string, error: unknown) => unknown) | undefined;
  /**
   * How many leases of this process may be finishing in the background (§20.12): with `finishAhead` above 0, a
   * worker whose handler ended and whose heartbeats stopped hands the lease's calls (`forget` or `retry`, `onError`,
   * `onGiveUp`, then `done`, in that order) to the background and takes its next lease at once, so that the calls
   * of many leases go out together (§20.1) while the workers handle the next ones. When `finishAhead` leases are
   * finishing, a worker whose handler ended waits for the oldest of them to end first: the process holds at most
   * `concurrency + finishAhead` leases. A lease finishing is live until its `done` commits, and its item in flight
   * for every process. A non-negative integer.
   *
   * @defaultValue `0`: a worker makes its lease's calls itself, and takes again only once its `done` answered.
   */
  readonly finishAhead?: number | undefined;
}

/**
 * What a handler of {@link runLeaseWorkers} is given besides its item.
 *
 * @public
 */
export interface LeaseHandlerContext {
  /** The lease's fencing token (§20.2): writes downstream should carry it and be refused when a greater one was seen. */
  readonly token: number;
  /**
   * Aborts when the workers' `signal` does (with its reason), or when the lease is lost — an `extend` was refused,
   * so the item may already be another worker's (with the `StaleLeaseError` as reason). A handler that sees it abort
   * should stop writing and throw.
   */
  readonly signal: AbortSignal;
}

/**
 * Runs `concurrency` workers on a PostgreSQL queue ([docs/spec.md §20.12](../../docs/spec.md#§20-leases-on-postgresql)). Each takes a lease, runs
 * `handler(item, { token, signal })` while extending the lease every `heartbeatMs`, then calls `forget` on success
 * (with `done`, as one `finish`, when the queue has it),
 * or on failure `retry`, `onError` and, when `retry` gives up, `onGiveUp`; and always `done` — each with the lease,
 * as §15.1 does with the item. A call refused with `StaleLeaseError` (the lease expired or was superseded) is
 * reported to `onError` and ends the calls for that lease: the item is another worker's now. A call that cannot
 * reach the database is reported and the next is made; a `done` that cannot leaves the lease to expire, which
 * queues the item again (at least once, §20.7). A `take` that cannot reach the database is reported (with item
 * `undefined`), and the worker takes again after `pauseMs`.
 *
 * With `finishAhead` n above 0, a worker hands those calls to the background once its handler ended and takes its
 * next lease at once; at most n leases finish in the background at a time (a worker whose handler ended waits for
 * the oldest while n do), and the promise resolves only once every one has finished. For throughput: a worker no
 * longer waits two round trips per item, and the calls of many leases go out as one statement per verb.
 *
 * Heartbeats run on this process's timers; a handler that blocks the event loop longer than the lease can lose it.
 * Several processes each run their own workers on one queue: the database keeps a key from two live leases (§20.7).
 *
 * @param queue - A `PostgresWorkQueue`, or anything with its `take`, `extend`, `forget`, `retry`, `done` and `leaseMs`.
 * @param handler - Processes one item; it may answer a promise, and may throw or reject to have the item retried.
 * @param options - `concurrency`, `signal`, `heartbeatMs`, `pauseMs`, `onError`, `onGiveUp` and `finishAhead` (see {@link LeaseWorkerOptions}).
 * @returns A promise that resolves once every worker has stopped (`take` answered `undefined` or `signal` aborted)
 *   and every lease finishing in the background has finished.
 *   It rejects, at that moment too, with the first error of a `take` other than an abort or
 *   `DatabaseUnavailableError` — a closed queue, or a schema that was not migrated — which stops its worker.
 * @throws TypeError when `queue` lacks a verb, `handler`, `onError` or `onGiveUp` is not a function, `options` is not
 * an object or `signal` is not an `AbortSignal`.
 * @throws RangeError when `concurrency` is not a positive integer, `heartbeatMs` is not a positive number below the
 * queue's `leaseMs`, `pauseMs` is not a non-negative finite number, or `finishAhead` is not a non-negative integer.
 *
 * @example
 * ```ts
 * import pg from "pg";
 * import { migrate, PostgresWorkQueue, runLeaseWorkers } from "workqueue-spec/postgres";
 *
 * const pool = new pg.Pool({ connectionString: "postgres://postgres@127.0.0.1:5432/test" });
 * await migrate(pool);
 * const queue = new PostgresWorkQueue({ pool, name: "pods", maxRetries: 5, leaseMs: 30_000 });
 * const workers = runLeaseWorkers(queue, async (key, { token }) => console.log(`reconciled ${key} (${token})`), {
 *   concurrency: 4,
 * });
 * await queue.add("default/web");
 * await queue.shutDownWithDrain(); // in any process: every key added before is handled
 * await workers;
 * await queue.close();
 * await pool.end();
 * ```
 *
 * @example
 * For throughput: a buffer of leases (§20.18), and each worker takes its next lease while up to 500 leases of the
 * process finish in the background, their `forget`s and `done`s sent together.
 * ```ts
 * import pg from "pg";
 * import { migrate, PostgresWorkQueue, runLeaseWorkers } from "workqueue-spec/postgres";
 *
 * const pool = new pg.Pool({ connectionString: "postgres://postgres@127.0.0.1:5432/test" });
 * await migrate(pool);
 * const queue = new PostgresWorkQueue({ pool, name: "pods", maxRetries: 5, prefetch: 500 });
 * const stop = new AbortController();
 * const workers = runLeaseWorkers(queue, (key) => console.log(`reconciled ${key}`), {
 *   concurrency: 16,
 *   finishAhead: 500,
 *   signal: stop.signal,
 * });
 * process.once("SIGTERM", () => stop.abort());
 * await workers; // every lease taken was finished: its done committed, or it was reported to onError
 * await queue.close();
 * await pool.end();
 * ```
 *
 * @public
 */
export function runLeaseWorkers(
  queue: LeasedQueue,
  handler: (item: string, context: LeaseHandlerContext) => unknown,
  options?: LeaseWorkerOptions,
): Promise<void> {
  const settings = qualify(queue, handler, options);
  const failures: unknown[] = [];
  const finishing = background(settings.finishAhead);
  const signals = handlerSignals(settings.signal);
  const work = async () => {
    for (let lease = await next(queue, settings, failures); lease; lease = await next(queue, settings, failures)) {
      const failure = await hold(queue, lease, handler, settings, signals);
      await finishing.finish(() => finish(queue, lease, failure, settings));
    }
  };
  return Promise.all(Array.from({ length: settings.concurrency }, work))
    .then(() => finishing.drained())
    .then(() => {
      if (failures.length > 0) throw failures[0];
    });
}

/**
 * Where the workers' leases finish: with `limit` 0, `finish` makes the calls and resolves once they ended; above,
 * it starts them in the background and resolves at once, or once the oldest of `limit` started before ended.
 * `drained` resolves once every call started has ended. The calls never reject ({@link finish} reports).
 */
function background(limit: number) {
  /** The leases finishing, oldest first (a `Set` iterates in insertion order). */
  const pending = new Set<Promise<void>>();
  return {
    async finish(calls: () => Promise<void>): Promise<void> {
      if (limit === 0) return calls();
      for (const oldest of pending) {
        if (pending.size < limit) break;
        await oldest;
      }
      const running: Promise<void> = calls().finally(() => pending.delete(running));
      pending.add(running);
    },
    async drained(): Promise<void> {
      for (const running of pending) await running;
    },
  };
}

/** The options with every default filled, checked. */
interface Settings {
  readonly concurrency: number;
  readonly signal: AbortSignal | undefined;
  readonly heartbeatMs: number;
  readonly pauseMs: number;
  readonly report: (item: string | undefined, error: unknown) => Promise<void>;
  readonly onGiveUp: (item: string, error: unknown) => unknown;
  readonly finishAhead: number;
}

/** Checks the arguments and fills the defaults (§20.16, §15.5). */
function qualify(queue: unknown, handler: unknown, options: LeaseWorkerOptions | undefined): Settings {
  const verbs = ["take", "extend", "forget", "retry", "done"];
  assertShape("queue", queue, "a PostgresWorkQueue, with take, extend, forget, retry and done", verbs, ["finish"]);
  assertFunction("handler", handler);
  assertOptions(options, "{ concurrency: 4 }");
  const { concurrency = 1, signal, onError = ignore, onGiveUp = ignore } = options ?? {};
  const { leaseMs } = queue as LeasedQueue;
  const { heartbeatMs = leaseMs / 3, pauseMs = 1_000, finishAhead = 0 } = options ?? {};
  assertConcurrency(concurrency);
  assertSignal(signal);
  assertFunction("onError", onError, "undefined or a function");
  assertFunction("onGiveUp", onGiveUp, "undefined or a function");
  if (!(Number.isFinite(heartbeatMs) && heartbeatMs > 0 && heartbeatMs < leaseMs)) {
    throw new RangeError(
      expected("heartbeatMs", `a positive number below the queue's leaseMs (${leaseMs})`, heartbeatMs),
    );
  }
  if (!(Number.isFinite(pauseMs) && pauseMs >= 0)) {
    throw new RangeError(expected("pauseMs", "a non-negative finite number of milliseconds", pauseMs));
  }
  if (!(Number.isInteger(finishAhead) && finishAhead >= 0)) {
    throw new RangeError(expected("finishAhead", "a non-negative integer", finishAhead));
  }
  const report = (item: string | undefined, error: unknown) => attempt(() => onError(item, error), ignore);
  return { concurrency, signal, heartbeatMs, pauseMs, report, onGiveUp, finishAhead };
}

/**
 * The worker's next lease, or `undefined` when it stops: `take` answered `undefined`, or rejected because the signal
 * aborted or for a reason that taking again cannot cure (kept in `failures`). A lost database is reported and waited
 * out.
 */
async function next(queue: LeasedQueue, settings: Settings, failures: unknown[]): Promise<Lease | undefined> {
  const { signal } = settings;
  let again: boolean;
  do {
    try {
      return await queue.take({ signal });
    } catch (error) {
      if (signal?.aborted) return undefined;
      if (!(error instanceof DatabaseUnavailableError)) {
        failures.push(error);
        return undefined;
      }
      await settings.report(undefined, error);
      // an abort while onError reported fires no more events: the pause would run to its end
      again = !signal?.aborted && (await pause(settings.pauseMs, signal));
    }
  } while (again);
  return undefined;
}

/** Waits `ms`, or less if `signal` aborts; answers whether it waited in full. The signal has not aborted yet. */
function pause(ms: number, signal: AbortSignal | undefined): Promise<boolean> {
  return new Promise((resolve) => {
    const stop = () => {
      clearTimeout(timer);
      resolve(false);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", stop);
      resolve(true);
    }, ms);
    signal?.addEventListener("abort", stop, { once: true });
  });
}

/**
 * Runs the handler on one lease under heartbeats (§20.12); answers its failure, if any, once the beats stopped: what
 * {@link finish} needs for the calls of §15.1 with the lease.
 */
async function hold(
  queue: LeasedQueue,
  lease: Lease,
  handler: (item: string, context: LeaseHandlerContext) => unknown,
  settings: Settings,
  signals: HandlerSignals,
): Promise<{ readonly error: unknown } | undefined> {
  const aborter = signals.open();
  const beats = heartbeat(queue, lease, settings, (error) => aborter.abort(error));
  let failure: { readonly error: unknown } | undefined;
  try {
    await handler(lease.item, { token: lease.token, signal: aborter.signal });
  } catch (error) {
    failure = { error };
  }
  signals.close(aborter);
  await beats.stop();
  return failure;
}

/** The handlers' signals: {@link handlerSignals}. */
interface HandlerSignals {
  /** A new handler's controller, already aborted when the workers' signal is. */
  open(): AbortController;
  /** Ends `aborter`'s tie to the workers' signal, once its handler ended. */
  close(aborter: AbortController): void;
}

/**
 * Each handler's controller, aborted with the workers' `signal`'s reason when it aborts (§20.13): one listener on
 * `signal` for all the handlers running, there only while one runs — cheaper per lease than `AbortSignal.any`.
 */
function handlerSignals(signal: AbortSignal | undefined): HandlerSignals {
  if (signal === undefined) return { open: () => new AbortController(), close: ignore };
  const running = new Set<AbortController>();
  const abort = () => {
    for (const aborter of running) aborter.abort(signal.reason);
  };
  return {
    open() {
      const aborter = new AbortController();
      if (signal.aborted) aborter.abort(signal.reason);
      signal.addEventListener("abort", abort); // once: a listener already there is not added again
      running.add(aborter);
      return aborter;
    },
    close(aborter) {
      running.delete(aborter);
      if (running.size === 0) signal.removeEventListener("abort", abort);
    },
  };
}

/**
 * Extends `lease` every `heartbeatMs` until stopped; a refused `extend` calls `lost` with its `StaleLeaseError`
 * and ends the beats; one that cannot reach the database is tried again at the next beat. `stop` waits for an
 * `extend` in flight, so that no `extend` overlaps the calls that end the lease.
 */
function heartbeat(queue: LeasedQueue, lease: Lease, settings: Settings, lost: (error: StaleLeaseError) => void) {
  let stopped = false;
  let beat: Promise<void> = Promise.resolve();
  const extend = async () => {
    try {
      await queue.extend(lease);
    } catch (error) {
      if (error instanceof StaleLeaseError) {
        lost(error);
        return;
      }
    }
    if (!stopped) timer = setTimeout(tick, settings.heartbeatMs);
  };
  const tick = () => {
    beat = extend();
  };
  let timer = setTimeout(tick, settings.heartbeatMs);
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await beat;
    },
  };
}

/**
 * §15.1's calls with the lease: `forget` on success; `retry`, `onError` and, on give-up, `onGiveUp` on failure;
 * `done` last. A refused call is reported and ends them; one that cannot reach the database is reported. A queue
 * with `finish` makes a success's `forget` and `done` as that one call.
 */
async function finish(
  queue: LeasedQueue,
  lease: Lease,
  failure: { readonly error: unknown } | undefined,
  settings: Settings,
): Promise<void> {
  const { report } = settings;
  const call = async <V>(
    verb: () => Promise<V>,
  ): Promise<{ readonly value?: V; readonly failed: boolean; readonly refused: boolean }> => {
    try {
      return { value: await verb(), failed: false, refused: false };
    } catch (error) {
      await report(lease.item, error);
      return { failed: true, refused: error instanceof StaleLeaseError };
    }
  };
  if (failure === undefined) {
    const { finish } = queue;
    if (finish !== undefined) {
      // forget and done in one call, one statement (§20.12): refused, nothing more is made (whether its forget or its
      // done was refused, the item is another holder's); failed otherwise, the done is made alone, as after a forget
      // that failed so
      const finished = await call(() => finish.call(queue, lease));
      if (!finished.failed || finished.refused) return;
    } else if ((await call(() => queue.forget(lease))).refused) return;
  } else {
    const retried = await call(() => queue.retry(lease));
    await report(lease.item, failure.error);
    if (retried.refused) return;
    if (retried.value === false)
      await attempt(
        () => settings.onGiveUp(lease.item, failure.error),
        (e) => report(lease.item, e),
      );
  }
  await call(() => queue.done(lease));
}
