/**
 * No connection of the queue's pool can end the process (docs/spec.md §20.8): a client the pool hands out has an
 * 'error' listener from that moment, and so has the pool for its idle clients, once a queue is made on it — one
 * each, however many queues share the pool and however often a client is handed out. The process-level test is
 * properties/test/postgres/terminate.test.ts; this one runs in the test's own process, on the sources.
 */
import pg from "pg";
import { expect, test } from "vitest";
import { type PoolLike, PostgresWorkQueue } from "../../../src/postgres/index.js";
import { databaseUrl, freshName, freshSchema } from "./database.js";

const { schema } = freshSchema("connections");

/** A pool of the test's own, with no listener of the test's. */
function bare(): pg.Pool {
  return new pg.Pool({ connectionString: databaseUrl, max: 2 });
}

test("a client the pool hands out after a queue was made on it survives an 'error' event, as the pool does", async () => {
  const pool = bare();
  try {
    expect(() => pool.emit("error", new Error("before the queue"))).toThrow("before the queue");
    new PostgresWorkQueue({ pool, schema, name: freshName(), maxRetries: 1 });
    expect(() => pool.emit("error", new Error("idle client lost"))).not.toThrow();
    const client = await pool.connect();
    try {
      expect(() => client.emit("error", new Error("lost while handed out"))).not.toThrow();
    } finally {
      client.release(true);
    }
  } finally {
    await pool.end();
  }
});

test("many queues on one pool, and a client handed out many times, add one listener each", async () => {
  const pool = bare();
  try {
    for (let i = 0; i < 20; i++) new PostgresWorkQueue({ pool, schema, name: freshName(), maxRetries: 1 });
    expect(pool.listenerCount("error")).toBe(1);
    expect(pool.listenerCount("acquire")).toBe(1);
    // Each client goes back before the assertions: one still out would leave pool.end waiting for it.
    const first = await pool.connect();
    const listeners = first.listenerCount("error");
    first.release();
    const again = await pool.connect();
    const listenersAgain = again.listenerCount("error");
    again.release();
    expect(again).toBe(first);
    expect(listenersAgain).toBe(listeners);
  } finally {
    await pool.end();
  }
});

test("a pool without `on` is used as it is; an `on` that is not a function is refused, naming the pool", () => {
  const plain: PoolLike = {
    query: async () => ({ rows: [] }),
    connect: async () => Promise.reject(new Error("unused")),
  };
  expect(new PostgresWorkQueue({ pool: plain, schema, name: freshName(), maxRetries: 1 }).name).toMatch(/^queue-/);
  const wrong = { ...plain, on: 1 } as unknown as PoolLike;
  expect(() => new PostgresWorkQueue({ pool: wrong, schema, name: freshName(), maxRetries: 1 })).toThrow(
    "Expected `pool` to be a pg Pool",
  );
});
