/**
 * The statements and the time of the buffer of prefetched leases on PostgreSQL ([docs/spec.md §20.18](../../docs/spec.md#§20-leases-on-postgresql)): a fill
 * is one `lease_many`, a give-back one `release_many`, and freshness is counted on the queue's clock when it has one,
 * otherwise on the process's monotonic time from when the fill was sent.
 *
 * @internal
 */
import type { Clock } from "../clock.js";
import { LeaseBuffer, type Prefetched } from "./prefetch.js";

/** A lease as `get` answers it. */
interface HandedLease {
  readonly item: string;
  readonly token: number;
  readonly expiresAt: number;
}

/** A lease in the buffer, with its place in the queue and what its queue duration is computed from. */
export interface BufferedLease extends Prefetched {
  readonly lease: HandedLease;
  /** The item's place in the queue when it was leased: given back with it. */
  readonly queuedMs: number;
  readonly position: number;
  /** How long it had been queued when the database leased it. */
  readonly queuedForMs: number;
  /** When the fill answered, on the buffer's time. */
  readonly answeredAt: number;
}

/** What the buffer needs of its queue object. */
export interface PrefetchingQueue {
  readonly name: string;
  readonly leaseMs: number;
  readonly clock: Clock | undefined;
  /** The time passed to the database: the clock's, or `null` for the database's own. */
  now(): number | null;
  /** Calls a function of the schema for `verb`; refused once the object is closed. */
  call(verb: string, sql: string, values: unknown[]): Promise<Record<string, unknown>[]>;
  /** Calls a function of the schema, also once the object is closed: `close` gives the buffer back. */
  callClosing(verb: string, sql: string, values: unknown[]): Promise<Record<string, unknown>[]>;
  /** Wakes a waiting `take` of the object. */
  wakeTake(): void;
}

/** The buffer of `queue`, filled `size` leases beyond the calls waiting. */
export function prefetchBuffer(size: number, queue: PrefetchingQueue): LeaseBuffer<BufferedLease> {
  const { clock, leaseMs } = queue;
  const now = clock === undefined ? () => performance.now() : () => clock.now();
  return new LeaseBuffer<BufferedLease>(size, {
    now,
    fetch: async (verb, count) => {
      const sent = now(); // the database's time of the lease is after it: at least leaseMs are left from sent
      const rows = await queue.call(verb, "lease_many($1, $2, $3, $4)", [queue.name, queue.now(), leaseMs, count]);
      const answeredAt = now();
      return rows.map((row) => {
        const lease = { item: row.item as string, token: Number(row.token), expiresAt: row.expires_ms as number };
        // On a clock the database's time is `sent`, so the lease expires at sent + leaseMs; on the database's own
        // time it expires later than that: either way half of leaseMs is left until sent + leaseMs / 2.
        const freshUntil = sent + leaseMs / 2;
        const [queuedMs, position, queuedForMs] = [row.queued_ms, Number(row.queued_position), row.queued_for_ms];
        return { item: lease.item, lease, freshUntil, queuedMs, position, queuedForMs, answeredAt } as BufferedLease;
      });
    },
    direct: async (verb, count) => {
      const sent = queue.now(); // on a clock, the time of the leases: each was queued queued_for_ms before it
      const values = [queue.name, sent, leaseMs];
      const rows =
        count === 1
          ? await queue.call(verb, "get($1, $2, $3)", values)
          : await queue.call(verb, "get_many($1, $2, $3, $4)", [...values, count]);
      const answeredAt = now();
      return rows.map((row) => {
        const lease = { item: row.item as string, token: Number(row.token), expiresAt: row.expires_ms as number };
        const queuedForMs = row.queued_for_ms as number;
        // never buffered, so never given back: no place; on a clock, queuedFor needs when it was queued
        const queuedMs = sent === null ? Number.NaN : sent - queuedForMs;
        return {
          item: lease.item,
          lease,
          freshUntil: answeredAt,
          queuedMs,
          position: Number.NaN,
          queuedForMs,
          answeredAt,
        };
      });
    },
    release: async (leases) => {
      await queue.callClosing("release", "release_many($1, $2, $3, $4, $5)", [
        queue.name,
        leases.map((each) => each.item),
        leases.map((each) => each.lease.token),
        leases.map((each) => each.queuedMs),
        leases.map((each) => each.position),
      ]);
    },
    schedule: (at, fire) => {
      if (clock !== undefined) return clock.schedule(at, fire);
      // at most setTimeout's longest delay: one that fires early finds the head fresh and sets the timer again
      const timer = setTimeout(fire, Math.min(2 ** 31 - 1, Math.max(0, at - performance.now())));
      timer.unref();
      return () => clearTimeout(timer);
    },
    filled: () => queue.wakeTake(),
  });
}

/**
 * How long `buffered` has been queued when it is handed on (§19.3, §20.17): from its place on the queue's clock, or
 * the database's figure at the fill plus the process's time since.
 */
export function queuedFor(buffered: BufferedLease, clock: Clock | undefined): number {
  return clock === undefined
    ? buffered.queuedForMs + performance.now() - buffered.answeredAt
    : clock.now() - buffered.queuedMs;
}
