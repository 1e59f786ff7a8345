/**
 * Setup mistakes say what to do (docs/spec.md §20.8, §20.9): a queue on a schema `migrate` did not make, or did not
 * bring up to date, names the `migrate` call to make; a connection that cannot be made — a wrong host, port,
 * database or user, a malformed connection string — is a DatabaseUnavailableError whose message names the cause in
 * one line. Each mistake is made for real, on the machine's server.
 */
import pg from "pg";
import { afterEach, expect, test } from "vitest";
import {
  DatabaseUnavailableError,
  migrate,
  PostgresWorkQueue,
  SchemaNotMigratedError,
} from "../../../src/postgres/index.js";
import { databaseUrl, freshName, freshSchema } from "./database.js";

const { pool, schema } = freshSchema("setup");

/** The pools a test made, ended after it. */
const made: pg.Pool[] = [];
afterEach(async () => {
  for (const p of made.splice(0)) await p.end();
});

/** A pool on `url`, which may not connect. */
function poolOn(url: string): pg.Pool {
  const p = new pg.Pool({ connectionString: url, max: 1, connectionTimeoutMillis: 5_000 });
  made.push(p);
  return p;
}

/** What `call` rejected with. */
async function rejection(call: Promise<unknown>): Promise<Error> {
  return call.then(
    () => {
      throw new Error("resolved");
    },
    (error: unknown) => error as Error,
  );
}

/** `databaseUrl` with one part changed. */
function changed(part: "pathname" | "username" | "port" | "hostname", value: string): string {
  const url = new URL(databaseUrl);
  url[part] = value;
  return url.toString();
}

test("a schema that does not exist: the call names migrate(pool, { schema })", async () => {
  const missing = `${schema}_never`;
  const queue = new PostgresWorkQueue({ pool, schema: missing, name: freshName(), maxRetries: 1 });
  const error = await rejection(queue.add("a"));
  expect(error).toBeInstanceOf(SchemaNotMigratedError);
  expect(error.name).toBe("SchemaNotMigratedError");
  expect(error.message).toBe(
    `add found no queue in the schema "${missing}" (schema "${missing}" does not exist): run migrate(pool, { schema: "${missing}" }) first`,
  );
  expect((error.cause as { code?: unknown }).code).toBe("3F000");
});

test("a schema without the queue's functions or tables, as before an upgrade's migrate: the call names migrate", async () => {
  const empty = `${schema}_empty`;
  await pool.query(`create schema "${empty}"`);
  try {
    const queue = new PostgresWorkQueue({ pool, schema: empty, name: freshName(), maxRetries: 1 });
    const noFunction = await rejection(queue.size());
    expect(noFunction).toBeInstanceOf(SchemaNotMigratedError);
    expect(noFunction.message).toMatch(
      new RegExp(
        `^size found no queue in the schema "${empty}" \\(function "?${empty}"?\\.views\\(.*\\) does not exist\\): run migrate\\(pool, \\{ schema: "${empty}" \\}\\) first$`,
      ),
    );
    await migrate(pool, { schema: empty });
    await pool.query(`drop table "${empty}".queued`);
    const noTable = await rejection(queue.get());
    expect(noTable).toBeInstanceOf(SchemaNotMigratedError);
    expect(noTable.message).toMatch(
      /^get found no queue in the schema .* run migrate\(pool, \{ schema: ".*" \}\) first$/,
    );
    expect((noTable.cause as { code?: unknown }).code).toBe("42P01");
  } finally {
    await pool.query(`drop schema "${empty}" cascade`);
  }
});

test("a database, user, port or host that is wrong, or a malformed connection string: DatabaseUnavailableError naming the cause in one line", async () => {
  const cases: readonly (readonly [string, string | RegExp])[] = [
    [
      changed("pathname", "/no_such_database"),
      'add could not reach PostgreSQL: database "no_such_database" does not exist',
    ],
    [changed("username", "no_such_user"), 'add could not reach PostgreSQL: role "no_such_user" does not exist'],
    [changed("port", "1"), /^add could not reach PostgreSQL: connect ECONNREFUSED [0-9.:]+:1$/],
    [
      changed("hostname", "no-such-host.invalid"),
      /^add could not reach PostgreSQL: getaddrinfo (ENOTFOUND|EAI_AGAIN) no-such-host\.invalid$/,
    ],
    [
      "127.0.0.1:5432/test",
      'add could not reach PostgreSQL: getaddrinfo ENOTFOUND base (a connection string without "postgres://" is read as a path: is the scheme missing?)',
    ],
    [
      "postgres://postgres:secret@127.0.0.1:99999/test",
      "add could not reach PostgreSQL: the connection string is not a valid URL (Invalid URL)",
    ],
  ];
  for (const [url, message] of cases) {
    const queue = new PostgresWorkQueue({ pool: poolOn(url), schema, name: freshName(), maxRetries: 1 });
    const error = await rejection(queue.add("a"));
    expect(error, url).toBeInstanceOf(DatabaseUnavailableError);
    if (typeof message === "string") expect(error.message, url).toBe(message);
    else expect(error.message, url).toMatch(message);
  }
});

test("migrate on a database that cannot be reached, and a take whose connection cannot be made, are DatabaseUnavailableError too", async () => {
  const url = changed("pathname", "/no_such_database");
  const error = await rejection(migrate(poolOn(url), { schema }));
  expect(error).toBeInstanceOf(DatabaseUnavailableError);
  expect(error.message).toBe('migrate could not reach PostgreSQL: database "no_such_database" does not exist');
  const queue = new PostgresWorkQueue({ pool: poolOn(url), schema, name: freshName(), maxRetries: 1 });
  const taken = await rejection(queue.take());
  expect(taken).toBeInstanceOf(DatabaseUnavailableError);
  expect(taken.message).toBe('take could not reach PostgreSQL: database "no_such_database" does not exist');
});

test("a cause of many lines is named by its first, and a host named base only hints at a missing scheme when it was not found", () => {
  const multiline = Object.assign(new Error("first line\nsecond line"), { code: "ECONNRESET" });
  expect(new DatabaseUnavailableError("add", multiline).message).toBe("add could not reach PostgreSQL: first line");
  const elsewhere = Object.assign(new Error("getaddrinfo ENOTFOUND db"), { code: "ENOTFOUND", hostname: "db" });
  expect(new DatabaseUnavailableError("add", elsewhere).message).toBe(
    "add could not reach PostgreSQL: getaddrinfo ENOTFOUND db",
  );
  expect(new DatabaseUnavailableError("add", null).message).toBe("add could not reach PostgreSQL: null");
  expect(new SchemaNotMigratedError("add", "s", "gone").message).toBe(
    'add found no queue in the schema "s" (gone): run migrate(pool, { schema: "s" }) first',
  );
  const base = { code: "EAI_AGAIN", hostname: "base", message: "x" };
  expect(new DatabaseUnavailableError("add", base).message).toBe("add could not reach PostgreSQL: [object Object]");
});

test("migrate upgrades a version 1 schema, deleting the rows of idle items, whose leases stay refused; it refuses a newer schema and changes nothing", async () => {
  const old = `${schema}_v1`;
  await migrate(pool, { schema: old });
  try {
    // Version 1: no version table, and a row kept for every item ever added.
    await pool.query(`drop table "${old}".version`);
    await pool.query(
      `insert into "${old}".items (queue, item, token, lease) values ('q', 'gone', 5, 'finished'), ('q', 'failed', 6, 'finished')`,
    );
    await pool.query(`update "${old}".items set failures = 2 where item = 'failed'`);
    await migrate(pool, { schema: old });
    const { rows } = await pool.query(`select item from "${old}".items order by item`);
    expect(rows.map((row) => row.item)).toEqual(["failed"]); // a failure counted keeps the row
    expect((await pool.query(`select version from "${old}".version`)).rows).toEqual([{ version: 4 }]);
    const queue = new PostgresWorkQueue({ pool, schema: old, name: "q", maxRetries: 3 });
    await expect(queue.done({ item: "gone", token: 5, expiresAt: 0 })).rejects.toThrow(
      "token 5 expired, was done or was superseded",
    );
    expect(await queue.failures("failed")).toBe(2);
    await pool.query(`update "${old}".version set version = 5`);
    const refused = await rejection(migrate(pool, { schema: old }));
    expect(refused.message).toBe(
      `the schema "${old}" is at version 5, made by a newer workqueue-spec; this one makes version 4 and would downgrade it: upgrade workqueue-spec`,
    );
    expect((await pool.query(`select version from "${old}".version`)).rows).toEqual([{ version: 5 }]);
  } finally {
    await pool.query(`drop schema "${old}" cascade`);
  }
});
