/**
 * Many gets at once from several pools, as several processes make them: every item queued must be handed out
 * exactly once (docs/spec.md §10.1, §20.2), and the history of the calls, judged by checkHistory, must break no rule
 * of §20.7 — never two live leases on one key above all.
 */
import pg from "pg";
import { type Lease, PostgresWorkQueue, StaleLeaseError } from "../../../src/postgres/index.js";
import type { HistoryEvent } from "../../history/check-history.js";
import { databaseUrl, freshName } from "./database.js";

/** What `concurrentGets` saw: each item with how many times it was handed out, for those not handed out once. */
export interface GetCounts {
  readonly handedOut: number;
  readonly notOnce: readonly (readonly [string, number])[];
  /** Every add, lease, forget and done, with its times on this process's clock (in milliseconds, below 1 ms apart). */
  readonly events: readonly HistoryEvent[];
}

/** The time, in milliseconds since the epoch, finer than `Date.now()`: the events are read by one process. */
const now = () => performance.timeOrigin + performance.now();

/**
 * Queues `count` items, then lets `workers` workers on `pools` pools get until nothing is left, all at once; once
 * every get answered, each lease is forgotten and done (the leases of an item handed out twice: one of them stale).
 */
export async function concurrentGets(schema: string, count: number, pools = 3, workers = 12): Promise<GetCounts> {
  const name = freshName();
  const connections = Array.from({ length: pools }, () => new pg.Pool({ connectionString: databaseUrl, max: 4 }));
  const events: HistoryEvent[] = [];
  try {
    const queues = connections.map((pool) => new PostgresWorkQueue({ pool, schema, name, maxRetries: 3 }));
    const items = Array.from({ length: count }, (_, i) => `ns/item-${i}`);
    await Promise.all(
      items.map(async (item, i) => {
        const startedAt = now();
        await (queues[i % pools] as PostgresWorkQueue).add(item);
        events.push({ op: "add", key: item, startedAt, endedAt: now() });
      }),
    );
    const counts = new Map<string, number>(items.map((item) => [item, 0]));
    const leases: Lease[] = [];
    await Promise.all(
      Array.from({ length: workers }, async (_, w) => {
        const queue = queues[w % pools] as PostgresWorkQueue;
        for (;;) {
          const startedAt = now();
          const lease = await queue.get();
          if (lease === undefined) return;
          events.push({
            op: "lease",
            key: lease.item,
            token: lease.token,
            expiresAt: lease.expiresAt,
            startedAt,
            endedAt: now(),
          });
          leases.push(lease);
          counts.set(lease.item, (counts.get(lease.item) ?? 0) + 1);
        }
      }),
    );
    // The leases are finished through one queue object, whose calls of a kind go out together, one statement at a
    // time: what is checked is the gets. Finished from every pool at once, the leases of an item that a wrong schema
    // handed out twice meet in statements that lock the item's row in different orders, and the server's deadlocks
    // outlast the five attempts a call makes (§20.8) on a loaded machine.
    const [finisher] = queues as [PostgresWorkQueue];
    await Promise.all(
      leases.map(async (lease) => {
        for (const op of ["forget", "done"] as const) {
          const startedAt = now();
          const outcome = await finisher[op](lease).then(
            () => "ok" as const,
            (error: unknown) => {
              if (error instanceof StaleLeaseError) return "stale" as const;
              throw error;
            },
          );
          events.push({ op, key: lease.item, token: lease.token, outcome, startedAt, endedAt: now() });
        }
      }),
    );
    return { handedOut: leases.length, notOnce: [...counts].filter(([, n]) => n !== 1), events };
  } finally {
    await Promise.all(connections.map((pool) => pool.end()));
  }
}
