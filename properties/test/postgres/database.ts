/**
 * The machine's PostgreSQL for the suites that need it (127.0.0.1:5432, user postgres, database test, or
 * `WORKQUEUE_DATABASE_URL`): each suite works in a schema of its own, made fresh and dropped at the end.
 */
import pg from "pg";
import { afterAll, beforeAll } from "vitest";
import { migrate } from "../../../src/postgres/index.js";
import { migration } from "../../../src/postgres/schema.js";

/** The database the suites use. */
export const databaseUrl = process.env.WORKQUEUE_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";

/**
 * A pool and a migrated schema of the suite's own, dropped when the suite ends; `edit`, if given, changes the
 * migration's text first (the wrong queues of properties/test/wrong/postgres.ts).
 */
export function freshSchema(
  prefix: string,
  edit?: (sql: string) => string,
): { readonly pool: pg.Pool; readonly schema: string } {
  const schema = `${prefix}_${process.pid}_${Math.floor(Math.random() * 1e9)}`;
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 4 });
  beforeAll(async () => {
    if (edit === undefined) await migrate(pool, { schema });
    else await pool.query(edit(migration(schema)));
  });
  afterAll(async () => {
    await pool.query(`drop schema if exists "${schema}" cascade`);
    await pool.end();
  });
  return { pool, schema };
}

let queues = 0;

/** A name no other queue of this process has. */
export function freshName(): string {
  queues += 1;
  return `queue-${queues}`;
}
