/**
 * `PostgresWorkQueue` as the lifecycle check's `LifecycleSubject`: the check names items, the queue hands out
 * leases, so the adapter keeps the lease each take (or step of `for await`) resolved with and passes it back to
 * `done`, `retry` and `forget`. The lifecycle's consumers finish only items a take gave them, one lease at a time
 * per item (§20.7), so the latest lease of an item is the one its caller holds; an item it holds none of is sent
 * with token 0 (§20.4), which the queue refuses while a lease of it is live.
 *
 * The adapter's takes wait in line, in the order they were called, and only the first of them waits in the queue:
 * `PostgresWorkQueue` serves the waiting takes of one instance in the order they look again (§20.10), not in the
 * order they were called — a take made after a `done` that requeued an item gets it before an older take woken by
 * the notification, and takes woken together by the clock look in any order — which this check finds as a broken
 * §14.3. In line, each take is served first come, first served, and the check covers the rest of the lifecycle.
 * A take withdrawn while in line rejects with its signal's reason at once (§14.5). `for await` is the adapter's
 * loop of takes (§14.7), which is what the queue's own is.
 */
import type pg from "pg";
import type { Lease, PostgresWorkQueue } from "../../../src/postgres/index.js";
import { flush } from "../../core/turns.js";
import type { LifecycleSubject } from "../../lifecycle/scenario.js";

/** A pool that follows the statements in progress, and whose `idle` resolves once none is. */
export interface WatchedPool {
  readonly pool: pg.Pool;
  /** Resolves once no statement is in progress, a turn after the last one answered, when none follows it. */
  idle(): Promise<void>;
}

/** `inner`, watched: its statements in progress are counted. */
export function watched(inner: pg.Pool): WatchedPool {
  const busy = new Set<Promise<unknown>>();
  const pool = new Proxy(inner, {
    get(target, key) {
      if (key === "query") {
        return (text: string, values?: unknown[]) => {
          const sent = target.query(text, values);
          const settled = sent.then(
            () => undefined,
            () => undefined,
          );
          busy.add(settled);
          void settled.then(() => busy.delete(settled));
          return sent;
        };
      }
      const value = Reflect.get(target, key, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  const idle = async (): Promise<void> => {
    do {
      await Promise.all([...busy]);
      await flush(); // what follows the answers — a take's next statement — is sent
    } while (busy.size > 0);
  };
  return { pool, idle };
}

/**
 * The lifecycle check's view of `queue`: every call answers a promise (`awaitCalls: true`); `idle` is the pool's
 * that the queue uses, when given. With `inLine: false`, each take goes to the queue at once, as the queue's own.
 */
export function lifecycleSubject(
  queue: PostgresWorkQueue,
  idle?: () => Promise<void>,
  inLine = true,
): LifecycleSubject {
  const leases = new Map<string, Lease>();
  const held = (lease: Lease | undefined): string | undefined => {
    if (lease !== undefined) leases.set(lease.item, lease);
    return lease?.item;
  };
  const leaseOf = (item: string): Lease => leases.get(item) ?? { item, token: 0, expiresAt: 0 };
  /** The end of the line: settles once every take called so far settled. */
  let line: Promise<unknown> = Promise.resolve();
  const take = (options?: { readonly signal?: AbortSignal | undefined }): Promise<string | undefined> => {
    if (!inLine) return queue.take(options).then(held);
    const signal = options?.signal;
    if (signal?.aborted === true) return Promise.reject(signal.reason);
    const before = line;
    const taken = new Promise<string | undefined>((resolve, reject) => {
      const withdraw = () => reject(signal?.reason);
      signal?.addEventListener("abort", withdraw, { once: true });
      void before.then(async () => {
        signal?.removeEventListener("abort", withdraw);
        if (signal?.aborted === true) return; // withdrawn in line
        try {
          resolve(held(await queue.take(options)));
        } catch (error) {
          reject(error);
        }
      });
    });
    line = Promise.allSettled([before, taken]); // a take withdrawn in line does not let the next one pass the first
    return taken;
  };
  return {
    add: (item) => queue.add(item),
    addAfter: (item, delayMs) => queue.addAfter(item, delayMs),
    take,
    done: async (item) => {
      const lease = leaseOf(item);
      leases.delete(item);
      await queue.done(lease);
    },
    retry: (item) => queue.retry(leaseOf(item)),
    forget: (item) => queue.forget(leaseOf(item)),
    shutDown: () => queue.shutDown(),
    shutDownWithDrain: (options) => queue.shutDownWithDrain(options),
    async *[Symbol.asyncIterator]() {
      for (let item = await take(); item !== undefined; item = await take()) yield item;
    },
    size: () => queue.size(),
    inFlight: () => queue.inFlight(),
    shuttingDown: () => queue.shuttingDown(),
    waiting: () => queue.waiting(),
    ...(idle === undefined ? {} : { idle }),
  };
}
