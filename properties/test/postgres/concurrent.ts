/**
 * Many gets at once from several pools, as several processes make them: every item queued must be handed out
 * exactly once (docs/spec.md §10.1, §20.2).
 */
import pg from "pg";
import { PostgresWorkQueue } from "../../../src/postgres/index.js";
import { databaseUrl, freshName } from "./database.js";

/** What `concurrentGets` saw: each item with how many times it was handed out, for those not handed out once. */
export interface GetCounts {
  readonly handedOut: number;
  readonly notOnce: readonly (readonly [string, number])[];
}

/** Queues `count` items, then lets `workers` workers on `pools` pools get until nothing is left, all at once. */
export async function concurrentGets(schema: string, count: number, pools = 3, workers = 12): Promise<GetCounts> {
  const name = freshName();
  const connections = Array.from({ length: pools }, () => new pg.Pool({ connectionString: databaseUrl, max: 4 }));
  try {
    const queues = connections.map((pool) => new PostgresWorkQueue({ pool, schema, name, maxRetries: 3 }));
    const items = Array.from({ length: count }, (_, i) => `ns/item-${i}`);
    await Promise.all(items.map((item, i) => (queues[i % pools] as PostgresWorkQueue).add(item)));
    const counts = new Map<string, number>(items.map((item) => [item, 0]));
    let handedOut = 0;
    await Promise.all(
      Array.from({ length: workers }, async (_, w) => {
        const queue = queues[w % pools] as PostgresWorkQueue;
        for (let lease = await queue.get(); lease !== undefined; lease = await queue.get()) {
          handedOut += 1;
          counts.set(lease.item, (counts.get(lease.item) ?? 0) + 1);
        }
      }),
    );
    return { handedOut, notOnce: [...counts].filter(([, n]) => n !== 1) };
  } finally {
    await Promise.all(connections.map((pool) => pool.end()));
  }
}
