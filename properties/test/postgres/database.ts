/**
 * The machine's PostgreSQL for the suites that need it (127.0.0.1:5432, user postgres, database test, or
 * `WORKQUEUE_DATABASE_URL`): each suite works in a schema of its own, made fresh and dropped at the end.
 */
import pg from "pg";
import { afterAll, beforeAll, beforeEach } from "vitest";
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
  // A hook that fails makes vitest skip the suite's tests, and a skipped test fails nothing (mutation testing would
  // count a mutant that breaks the migration as survived): the failure is kept, and every test fails with it.
  let failure: { readonly cause: unknown } | undefined;
  beforeAll(async () => {
    try {
      await dropOrphans(pool);
      if (edit === undefined) await migrate(pool, { schema });
      else await pool.query(edit(migration(schema)));
    } catch (cause) {
      failure = { cause };
    }
  });
  beforeEach(() => {
    if (failure !== undefined) throw new Error(`the schema ${schema} could not be made`, failure);
  });
  afterAll(async () => {
    await pool.query(`drop schema if exists "${schema}" cascade`);
    await pool.end();
  });
  return { pool, schema };
}

/** Whether a process of this machine with that id runs. */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * Drops the schemas `freshSchema` made for processes that are gone — killed before their `afterAll`, as mutation
 * testing kills a run — so that they do not pile up in the machine's database. Another suite may drop one first.
 */
async function dropOrphans(pool: pg.Pool): Promise<void> {
  const { rows } = await pool.query<{ name: string }>(
    "select nspname as name from pg_namespace where nspname ~ '^[a-z]+_[0-9]+_[0-9]+$'",
  );
  for (const { name } of rows) {
    const pid = Number(name.split("_").at(-2));
    if (!alive(pid)) await pool.query(`drop schema if exists "${name}" cascade`).catch(() => undefined);
  }
}

let queues = 0;

/** A name no other queue of this process has. */
export function freshName(): string {
  queues += 1;
  return `queue-${queues}`;
}

/** `pool`, recording the schema function each statement calls, in order, in `sent`. */
export function counting(inner: pg.Pool): { readonly pool: pg.Pool; readonly sent: string[] } {
  const sent: string[] = [];
  const spy = new Proxy(inner, {
    get(target, key) {
      if (key === "query") {
        return (text: string, values?: unknown[]) => {
          sent.push(/\.(\w+)\(/.exec(text)?.[1] ?? text);
          return target.query(text, values);
        };
      }
      const value = Reflect.get(target, key, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return { pool: spy, sent };
}

/** A lost connection, as `pg` reports one. */
export const lostConnection = Object.assign(new Error("read ECONNRESET"), { code: "ECONNRESET" });

/** `pool`, whose every statement rejects with {@link lostConnection} while `down()` says so. */
export function unreachable(inner: pg.Pool, down: () => boolean = () => true): pg.Pool {
  return new Proxy(inner, {
    get(target, key) {
      if (key === "query" && down()) return () => Promise.reject(lostConnection);
      const value = Reflect.get(target, key, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}
