import { DatabaseUnavailableError, isUnavailable } from "./errors.js";
import type { Queryable } from "./queue.js";
import { assertSchema, migration } from "./schema.js";

/**
 * The options of {@link migrate}.
 *
 * @public
 */
export interface MigrateOptions {
  /** The schema to create the queue's tables and functions in. @defaultValue `"workqueue"` */
  readonly schema?: string | undefined;
}

/**
 * Creates the queue's schema, tables and functions, or brings them up to date ([docs/spec.md §20.9](../../docs/spec.md#§20-leases-on-postgresql)). Idempotent
 * and safe to run from several processes at once: it runs as one transaction under an advisory lock, so a failure leaves nothing half made. The
 * queue never runs it by itself: run it once at deployment, or at the start of every process.
 *
 * @param pool - A `pg` `Pool` or `Client`.
 * @param options - The schema.
 * @public
 * @example
 * ```ts
 * import pg from "pg";
 * import { migrate } from "workqueue-spec/postgres";
 *
 * const pool = new pg.Pool({ connectionString: "postgres://postgres@127.0.0.1:5432/test" });
 * await migrate(pool, { schema: "workqueue" });
 * await pool.end();
 * ```
 */
export async function migrate(pool: Queryable, options?: MigrateOptions): Promise<void> {
  const schema = options?.schema ?? "workqueue";
  assertSchema(schema);
  // One simple query of many statements is one transaction: a failure rolls all of it back.
  const sql = `select pg_advisory_xact_lock(hashtext('workqueue-spec migrate ${schema}')); ${migration(schema)}`;
  try {
    await pool.query(sql);
  } catch (error) {
    throw isUnavailable(error) ? new DatabaseUnavailableError("migrate", error) : error;
  }
}
