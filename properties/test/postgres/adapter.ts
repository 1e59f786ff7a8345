/**
 * `PostgresWorkQueue` as the gate's `Subject`: the gate names items, the queue wants leases, so the adapter keeps
 * the latest lease it was handed for each item and passes it back (one client, whose leases never go stale unless
 * the test expires them). A lease that ended (its `done`) is refused (§20.4): the call is then made with token 0,
 * the caller holding no lease, which §20.4 accepts while no lease of the item is live — as for an item never handed
 * out.
 *
 * Under overlapping calls (§10.8) a caller can only finish a lease it was handed, but the gate may call `done`,
 * `retry` or `forget` while a `get` that hands the item out is in progress. When such a call is refused as stale
 * (which changes nothing, §20.4), the adapter waits for the `get`s in progress and, if one handed the item out
 * anew, makes the call again with that lease — as the caller would have, once it was handed the lease; and if an
 * overlapping `done` ended that lease meanwhile, once more with token 0, as a caller holding no lease. A `get` may
 * also hand the item out while that call with token 0 is in progress (from a buffer of prefetched leases, §20.18,
 * without a statement): the call is then made with the lease that `get` was handed, and if an overlapping `done`
 * ended that one too, with token 0 again.
 */
import { type Lease, type PostgresWorkQueue, StaleLeaseError } from "../../../src/postgres/index.js";
import type { Subject } from "../../core/subject.js";

/** The gate's view of `queue`. */
export function leaseSubject(queue: PostgresWorkQueue): Subject<string> {
  const leases = new Map<string, Lease>();
  const getting = new Set<Promise<unknown>>();
  const leaseOf = (item: string): Lease => leases.get(item) ?? ({ item, token: 0, expiresAt: 0 } satisfies Lease);
  const finish = async <R>(item: string, call: (lease: Lease) => Promise<R>): Promise<R> => {
    let lease = leaseOf(item);
    // The lease it knew; after each refusal, the one a get in progress handed out meanwhile, if not tried yet; else,
    // after a lease was refused, none (token 0): an overlapping done may have ended that lease (a done ends its
    // lease, §20.4, and token 0 is then accepted), and a get may hand the item out while the call with token 0 is in
    // progress, which then fails too, and an overlapping done may end that get's lease before the call with it is
    // made. A refusal of token 0 with no new lease since is the error. Each lease is tried once and token 0 at most
    // once after each, so it ends.
    const tried = new Set<number>();
    for (;;) {
      try {
        return await call(lease);
      } catch (error) {
        if (!(error instanceof StaleLeaseError)) throw error;
        tried.add(lease.token);
        await Promise.allSettled([...getting]);
        const latest = leaseOf(item);
        if (!tried.has(latest.token)) lease = latest;
        else if (lease.token !== 0) lease = { item, token: 0, expiresAt: 0 };
        else throw error;
      }
    }
  };
  return {
    add: (item) => queue.add(item),
    addAfter: (item, delayMs) => queue.addAfter(item, delayMs),
    async get() {
      const leasing = queue.get();
      getting.add(leasing);
      try {
        const lease = await leasing;
        if (lease === undefined) return undefined;
        leases.set(lease.item, lease);
        return lease.item;
      } finally {
        getting.delete(leasing);
      }
    },
    done: (item) => finish(item, (lease) => queue.done(lease)),
    retry: (item) => finish(item, (lease) => queue.retry(lease)),
    forget: (item) => finish(item, (lease) => queue.forget(lease)),
    size: () => queue.size(),
    inFlight: () => queue.inFlight(),
    waiting: () => queue.waiting(),
    failures: (item) => queue.failures(item),
    shutDown: () => queue.shutDown(),
    shuttingDown: () => queue.shuttingDown(),
  };
}
