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
 * overlapping `done` ended that lease meanwhile, once more with token 0, as a caller holding no lease.
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
    // At most three attempts: the lease it knew; the one a get in progress handed out; none, once an overlapping
    // done ended that one (a done ends its lease, §20.4, and token 0 is then accepted).
    for (let attempt = 1; ; attempt++) {
      try {
        return await call(lease);
      } catch (error) {
        if (!(error instanceof StaleLeaseError) || attempt === 3) throw error;
        await Promise.allSettled([...getting]);
        const latest = leaseOf(item);
        lease = latest.token === lease.token || attempt === 2 ? { item, token: 0, expiresAt: 0 } : latest;
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
