/**
 * What `PostgresWorkQueue` notifies, and whom a notification wakes (docs/spec.md §20.10): an item queued is one
 * notification that wakes one waiting `take`, which passes the wake on when it ends; a lease's end notifies only
 * while the queue is shutting down, when a drain or a `take` may wait for it. Every take here polls only every
 * minute, so a take that resolves was woken by a notification.
 */
import pg from "pg";
import { afterAll, expect, test } from "vitest";
import { PostgresWorkQueue } from "../../../src/postgres/index.js";
import { channelOf } from "../../../src/postgres/schema.js";
import { databaseUrl, freshName, freshSchema } from "./database.js";

const { pool, schema } = freshSchema("notifications");
const other = new pg.Pool({ connectionString: databaseUrl, max: 2 });
afterAll(() => other.end());

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A client of its own listening on the schema's channel, and the payloads it received, in commit order. */
async function listening(): Promise<{
  readonly payloads: string[];
  received(n: number): Promise<void>;
  end(): Promise<void>;
}> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  const payloads: string[] = [];
  client.on("notification", (message) => payloads.push(message.payload ?? ""));
  await client.query(`listen "${channelOf(schema)}"`);
  return {
    payloads,
    async received(n) {
      for (const deadline = Date.now() + 5000; payloads.length < n && Date.now() < deadline; ) {
        await pause(10);
      }
    },
    end: () => client.end(),
  };
}

test("an add notifies one item queued; a done notifies nothing until the queue shuts down, and then every lease's end", async () => {
  const name = freshName();
  const queue = new PostgresWorkQueue({ pool, schema, name, maxRetries: 1, pollMs: 60_000 });
  const listener = await listening();
  try {
    await queue.add("a");
    await listener.received(1);
    expect(listener.payloads).toEqual([`+${name}`]);
    const a = await queue.get();
    await queue.done(a as NonNullable<typeof a>); // no take or drain can use it: nothing queued, not shutting down
    await queue.add("b");
    const b = await queue.get();
    await queue.shutDown();
    await queue.done(b as NonNullable<typeof b>); // a drain may wait for it
    await listener.received(4);
    // Notifications arrive in the order their transactions committed: none between the add of b and the shutdown.
    expect(listener.payloads).toEqual([`+${name}`, `+${name}`, name, name]);
  } finally {
    await listener.end();
    await queue.close();
  }
});

test("items queued by one transaction, one notification, reach every waiting take: each take that ends wakes the next", async () => {
  const name = freshName();
  let views = 0;
  const counted = new Proxy(pool, {
    get(target, key) {
      if (key === "query") {
        return (...args: unknown[]) => {
          if (String(args[0]).includes(".views(")) views += 1;
          return (target.query as (...a: unknown[]) => unknown).apply(target, args);
        };
      }
      const value = Reflect.get(target, key, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  const queue = new PostgresWorkQueue({ pool: counted, schema, name, maxRetries: 1, pollMs: 60_000 });
  try {
    const takes = [queue.take(), queue.take(), queue.take()];
    // Each take looks once (its get, which may go out with the others', §20.1, then the views) before it sleeps.
    for (const deadline = Date.now() + 10_000; views < 3 && Date.now() < deadline; ) await pause(10);
    await pause(500);
    const client = await other.connect();
    try {
      await client.query("begin");
      for (const item of ["a", "b", "c"]) await client.query(`select "${schema}".add($1, $2, null)`, [name, item]);
      await client.query("commit"); // one notification: PostgreSQL sends one per transaction, channel and payload
    } finally {
      client.release();
    }
    const leases = await Promise.race([
      Promise.all(takes),
      new Promise<"timed out">((resolve) => setTimeout(() => resolve("timed out"), 20_000)),
    ]);
    expect(leases === "timed out" ? leases : leases.map((lease) => lease?.item).sort()).toEqual(["a", "b", "c"]);
  } finally {
    await queue.close();
  }
});

test("an item queued wakes a waiting take, not an older waiting drain, which an item queued does not end", async () => {
  // A clock whose timers never fire: only notifications wake the take and the drain, and the time moves when told.
  let time = 1_000;
  const clock = { now: () => time, schedule: () => () => {} };
  const name = freshName();
  const options = { pool, schema, name, maxRetries: 1, leaseMs: 100, pollMs: 60_000, clock };
  let statements = 0;
  const counted = new Proxy(pool, {
    get(target, key) {
      if (key === "query") {
        return (...args: unknown[]) => {
          statements += 1;
          return (target.query as (...a: unknown[]) => unknown).apply(target, args);
        };
      }
      const value = Reflect.get(target, key, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  const holder = new PostgresWorkQueue(options);
  const waiter = new PostgresWorkQueue({ ...options, pool: counted });
  try {
    await holder.add("x");
    const held = await holder.get(); // expires at 1,100; its holder then stalls
    expect(held?.item).toBe("x");
    const drain = waiter.shutDownWithDrain(); // the older waiter: shut_down, then its views
    drain.catch(() => undefined); // a failed test closes the queue, which rejects the drain
    for (const deadline = Date.now() + 10_000; statements < 2 && Date.now() < deadline; ) await pause(10);
    const take = waiter.take(); // the younger: its get finds nothing queued, its views a live lease
    for (const deadline = Date.now() + 10_000; statements < 4 && Date.now() < deadline; ) await pause(10);
    await pause(500);
    time = 2_000;
    expect(await holder.size()).toBe(1); // its views settle the expiry: x is queued again, one notification
    const taken = await Promise.race([take, pause(10_000).then(() => "still waiting" as const)]);
    expect(taken === "still waiting" ? taken : taken?.item).toBe("x");
    if (taken !== "still waiting" && taken !== undefined) await waiter.done(taken);
    await drain;
  } finally {
    await holder.close();
    await waiter.close();
  }
});
