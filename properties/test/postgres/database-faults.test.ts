/**
 * Faults of the database (docs/spec.md §20.8): a server that is not there gets a clear error and nothing is made; a
 * connection cut in the middle of the work is reported, changes nothing half-way, and the queue goes on once the
 * pool reconnects; bad input is refused, naming the value, before anything reaches the database.
 */
import pg from "pg";
import { expect, test } from "vitest";
import { DatabaseUnavailableError, migrate, PostgresWorkQueue } from "../../../src/postgres/index.js";
import { freshName, freshSchema } from "./database.js";

const { pool, schema } = freshSchema("faults");

test("a database that is not there: every verb and migrate reject with DatabaseUnavailableError, naming the call", async () => {
  // Port 1 on the loopback: nothing listens there, so the connection is refused at once.
  const down = new pg.Pool({ connectionString: "postgres://postgres@127.0.0.1:1/test", connectionTimeoutMillis: 2000 });
  const queue = new PostgresWorkQueue({ pool: down, schema, name: freshName(), maxRetries: 3 });
  await expect(queue.add("a")).rejects.toThrow(DatabaseUnavailableError);
  await expect(queue.get()).rejects.toThrow(/^get could not reach PostgreSQL: /);
  await expect(queue.take()).rejects.toThrow(/^take could not reach PostgreSQL: /);
  await expect(migrate(down, { schema: "never_made" })).rejects.toThrow(/^migrate could not reach PostgreSQL: /);
  const error = await queue.size().catch((e: unknown) => e);
  expect(error).toBeInstanceOf(DatabaseUnavailableError);
  expect((error as Error).cause).toBeInstanceOf(Error);
  await down.end();
});

test("a connection terminated by the server mid-work: the call rejects, nothing is half-applied, the next call works", async () => {
  const own = new pg.Pool({
    connectionString: process.env.WORKQUEUE_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test",
    max: 1,
  });
  const name = freshName();
  const queue = new PostgresWorkQueue({ pool: own, schema, name, maxRetries: 3 });
  await queue.add("a");
  const lease = await queue.get();
  if (lease === undefined) throw new Error("nothing handed out");
  const [{ pid }] = (await own.query("select pg_backend_pid() as pid")).rows as [{ pid: number }];
  // The one connection sleeps inside a statement while another session terminates it.
  const sleeping = own.query("select pg_sleep(5)").catch((e: unknown) => e);
  await new Promise((resolve) => setTimeout(resolve, 200));
  await pool.query("select pg_terminate_backend($1)", [pid]);
  expect(await sleeping).toBeInstanceOf(Error);
  // The lease survived on the server: the retry, on a fresh connection, counts once and marks it dirty.
  expect(await queue.retry(lease)).toBe(true);
  await queue.done(lease);
  expect([await queue.size(), await queue.inFlight(), await queue.failures("a")]).toEqual([1, 0, 1]);
  await own.end();
});

test("a verb whose connection is cut while it runs rejects with DatabaseUnavailableError and applies all or nothing", async () => {
  const own = new pg.Pool({
    connectionString: process.env.WORKQUEUE_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test",
    max: 1,
  });
  const name = freshName();
  const queue = new PostgresWorkQueue({ pool: own, schema, name, maxRetries: 3 });
  const [{ pid }] = (await own.query("select pg_backend_pid() as pid")).rows as [{ pid: number }];
  // Another session holds the item's row, uncommitted, so the add waits inside its transaction until it is cut.
  const blocker = await pool.connect();
  await blocker.query("begin");
  await blocker.query(`insert into "${schema}".items (queue, item) values ($1, 'a')`, [name]);
  await blocker.query(`select * from "${schema}".items where queue = $1 and item = 'a' for update`, [name]);
  const adding = queue.add("a").catch((e: unknown) => e);
  await new Promise((resolve) => setTimeout(resolve, 200));
  await pool.query("select pg_terminate_backend($1)", [pid]);
  const error = await adding;
  await blocker.query("commit");
  blocker.release();
  expect(error).toBeInstanceOf(DatabaseUnavailableError);
  expect(await queue.size()).toBe(0); // the add was rolled back with its connection
  await queue.add("a");
  expect(await queue.size()).toBe(1);
  await own.end();
});

test("bad input is refused with a TypeError or RangeError naming the value, before the database is asked", async () => {
  const queue = new PostgresWorkQueue({ pool, schema, name: freshName(), maxRetries: 3 });
  await expect(queue.add(1 as unknown as string)).rejects.toThrow(
    new TypeError("Expected `item` to be a string, got `1` (number)"),
  );
  await expect(queue.addAfter("a", Number.NaN)).rejects.toThrow(RangeError);
  await expect(queue.done({ item: "a" } as never)).rejects.toThrow(
    /^Expected `lease` to be a lease that get or take answered/,
  );
  await expect(queue.failures(null as unknown as string)).rejects.toThrow(TypeError);
  expect(() => new PostgresWorkQueue({ pool, schema: "Bad-Name", name: "q", maxRetries: 1 })).toThrow(
    new TypeError('Expected `schema` to be a lower-case SQL identifier such as workqueue, got `"Bad-Name"` (string)'),
  );
  expect(() => new PostgresWorkQueue({ pool, schema, name: "", maxRetries: 1 })).toThrow(TypeError);
  expect(() => new PostgresWorkQueue({ pool, schema, name: "q", maxRetries: -1 })).toThrow(RangeError);
  expect(() => new PostgresWorkQueue({ pool, schema, name: "q", maxRetries: 1, leaseMs: 0 })).toThrow(RangeError);
  expect(
    () => new PostgresWorkQueue({ pool, schema, name: "q", maxRetries: 1, backoff: { baseMs: -1, maxMs: 1 } }),
  ).toThrow(RangeError);
  expect(() => new PostgresWorkQueue({ pool: {} as never, schema, name: "q", maxRetries: 1 })).toThrow(TypeError);
  await expect(migrate(pool, { schema: "x; drop table y" })).rejects.toThrow(TypeError);
  expect(await queue.size()).toBe(0);
});
