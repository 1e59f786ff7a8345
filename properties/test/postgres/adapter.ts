/**
 * `PostgresWorkQueue` as the gate's `Subject`: the gate names items, the queue wants leases, so the adapter keeps
 * the latest lease it was handed for each item and passes it back (one client, whose leases never go stale unless
 * the test expires them). An item never handed out is passed with token 0, which §20.4 accepts while no lease was
 * ever handed out for it.
 */
import type { Lease, PostgresWorkQueue } from "../../../src/postgres/index.js";
import type { Subject } from "../../engine/subject.js";

/** The gate's view of `queue`. */
export function leaseSubject(queue: PostgresWorkQueue): Subject<string> {
  const leases = new Map<string, Lease>();
  const leaseOf = (item: string): Lease => leases.get(item) ?? ({ item, token: 0, expiresAt: 0 } satisfies Lease);
  return {
    add: (item) => queue.add(item),
    addAfter: (item, delayMs) => queue.addAfter(item, delayMs),
    async get() {
      const lease = await queue.get();
      if (lease === undefined) return undefined;
      leases.set(lease.item, lease);
      return lease.item;
    },
    done: (item) => queue.done(leaseOf(item)),
    retry: (item) => queue.retry(leaseOf(item)),
    forget: (item) => queue.forget(leaseOf(item)),
    size: () => queue.size(),
    inFlight: () => queue.inFlight(),
    waiting: () => queue.waiting(),
    failures: (item) => queue.failures(item),
    shutDown: () => queue.shutDown(),
    shuttingDown: () => queue.shuttingDown(),
  };
}
