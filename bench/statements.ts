/**
 * What a client sends, and what the server can do at most: every statement any `pg` client of this process sends is
 * counted (the queues measured all use the one `pg` installed), and the physical limit is single-row
 * `UPDATE … RETURNING` statements from Node over as many connections as the workers have.
 */
import pg from "pg";
import { databaseUrl, poolSize, schemaName } from "./contenders.js";

let sent = 0;
const query = pg.Client.prototype.query;
// Every pool's client is a pg.Client, so this counts what each queue sends, its LISTEN and its pool's queries too.
pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
  sent += 1;
  return (query as (...a: unknown[]) => unknown).apply(this, args);
} as typeof query;

/** The statements sent by this process so far. */
export const statementsSent = (): number => sent;

/** Rows in the table the physical limit updates. */
const rows = 1_000;

/**
 * Single-row `UPDATE … RETURNING` statements per second, each its own transaction, {@link poolSize} connections at
 * once sending one after another for `ms` milliseconds: what one statement per job allows on this server.
 */
export async function updatesPerSecond(ms = 2_000): Promise<number> {
  const schema = schemaName("limit");
  const pool = new pg.Pool({ connectionString: databaseUrl, max: poolSize });
  try {
    await pool.query(`create schema "${schema}"; create table "${schema}".t (id int primary key, n bigint not null)`);
    await pool.query(`insert into "${schema}".t select i, 0 from generate_series(1, ${rows}) i`);
    const sql = `update "${schema}".t set n = n + 1 where id = $1 returning n`;
    let done = 0;
    const end = performance.now() + ms;
    const start = performance.now();
    await Promise.all(
      Array.from({ length: poolSize }, async () => {
        while (performance.now() < end) {
          await pool.query(sql, [1 + Math.floor(Math.random() * rows)]);
          done += 1;
        }
      }),
    );
    return done / ((performance.now() - start) / 1000);
  } finally {
    await pool.query(`drop schema if exists "${schema}" cascade`);
    await pool.end();
  }
}
