/**
 * A worked history of two leases that expire (docs/spec.md §20.3), for checkHistory to judge: `a` is added again
 * while in flight, `b` is not; both holders die (they never call `done`), and a worker then handles what is queued.
 * By §20.3 the expiry requeues both, which serves the add made while `a` was in flight: the history breaks no rule.
 */
import type pg from "pg";
import { VirtualClock } from "../../../src/index.js";
import { type Lease, PostgresWorkQueue } from "../../../src/postgres/index.js";
import type { HistoryEvent } from "../../history/check-history.js";
import { freshName } from "./database.js";

/** The history, its times on a virtual clock that moves 1 ms before and after each call, and what was handled. */
export async function expiryHistory(
  pool: pg.Pool,
  schema: string,
): Promise<{ readonly events: readonly HistoryEvent[]; readonly handled: readonly string[] }> {
  const clock = new VirtualClock();
  const queue = new PostgresWorkQueue({ pool, schema, name: freshName(), maxRetries: 3, leaseMs: 100, clock });
  const events: HistoryEvent[] = [];
  const tick = () => {
    clock.advance(1);
    return clock.now();
  };
  const add = async (key: string) => {
    const startedAt = tick();
    await queue.add(key);
    events.push({ op: "add", key, startedAt, endedAt: tick() });
  };
  const get = async () => {
    const startedAt = tick();
    const lease = await queue.get();
    if (lease === undefined) return undefined;
    events.push({
      op: "lease",
      key: lease.item,
      token: lease.token,
      expiresAt: lease.expiresAt,
      startedAt,
      endedAt: tick(),
    });
    return lease;
  };
  const fenced = async (op: "forget" | "done", lease: Lease) => {
    const startedAt = tick();
    await queue[op](lease);
    events.push({ op, key: lease.item, token: lease.token, outcome: "ok", startedAt, endedAt: tick() });
  };
  await add("a");
  await add("b");
  await get(); // a, whose holder dies
  await get(); // b, whose holder dies
  await add("a"); // while in flight: one more handling is owed
  clock.advance(100); // both leases expire
  const handled: string[] = [];
  for (let lease = await get(); lease !== undefined; lease = await get()) {
    await fenced("forget", lease);
    await fenced("done", lease);
    handled.push(lease.item);
  }
  return { events, handled };
}
