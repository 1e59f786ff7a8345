/**
 * `npm run bench -- --storage`: the storage of the PostgreSQL queue (docs/spec.md §20.9) after many distinct keys
 * passed through it — each added, handed out and done, as a controller over pods that come and go does — with the
 * rows of idle items deleted (the reference) and kept (the reference with its `tidy` disabled, as version 1 of the
 * schema kept them), each in a schema of its own that is dropped at the end. Sixteen workers share one pool; every chunk
 * of keys ends with a `VACUUM` of the queue's tables, since the server may run without autovacuum.
 */
import pg from "pg";
import { migrate, PostgresWorkQueue } from "../src/postgres/index.js";
import { migration } from "../src/postgres/schema.js";
import { databaseUrl } from "./contenders.js";

/** Keys per chunk: the rows and sizes are read, after a VACUUM, between chunks. */
const chunk = 10_000;
/**
 * Workers passing keys at once through one queue object and a pool of as many connections: their calls that meet
 * go out together (§20.1), as a controller's workers' do.
 */
const workers = 16;

/** The storage after the keys passed, and how fast they did. */
export interface StorageResult {
  readonly keys: number;
  readonly keysPerSecond: number;
  /** Rows of `items` at the end: what is live (0 once every key was done), or one per key when rows are kept. */
  readonly rows: number;
  /** The bytes of `items` and `queued` with their indexes, after the first chunk and at the end. */
  readonly bytesAfterFirstChunk: number;
  readonly bytesAtEnd: number;
  /** The same bytes after every chunk, in order: flat once storage no longer grows with the keys that passed. */
  readonly bytesByChunk: readonly number[];
  /** Whether the server's autovacuum is on (the chunks VACUUM either way). */
  readonly autovacuum: string;
}

/**
 * The migration with the deletion of idle rows disabled: the rows of version 1. Every deletion of an idle item's row
 * (tidy, and the common case of done and done_many) ends its condition with `i.failures = 0`.
 */
function keepingRows(schema: string): string {
  const sql = migration(schema);
  const from = "i.failures = 0";
  if (!sql.includes(from)) throw new Error("bench/storage.ts: the migration's tidy changed; update keepingRows");
  return sql.replaceAll(from, "i.failures = 0 and false");
}

/** Passes `keys` distinct keys through a fresh queue, removing idle rows or keeping them. */
export async function measureStorage(
  keys: number,
  remove: boolean,
  progress: (text: string) => void,
): Promise<StorageResult> {
  const schema = `bench_storage_${process.pid}_${remove ? "removed" : "kept"}`;
  const pool = new pg.Pool({ connectionString: databaseUrl, max: workers + 2 });
  try {
    if (remove) await migrate(pool, { schema });
    else await pool.query(keepingRows(schema));
    const queue = new PostgresWorkQueue({ pool, schema, name: "storage", maxRetries: 3 });
    const bytes = async () => {
      await pool.query(`vacuum "${schema}".items, "${schema}".queued`);
      const { rows } = await pool.query(
        `select pg_total_relation_size('"${schema}".items') + pg_total_relation_size('"${schema}".queued') as bytes`,
      );
      return Number(rows[0].bytes);
    };
    let passed = 0;
    let elapsed = 0;
    const bytesByChunk: number[] = [];
    while (passed < keys) {
      const size = Math.min(chunk, keys - passed);
      const first = passed;
      let next = 0;
      const started = performance.now();
      await Promise.all(
        Array.from({ length: workers }, async () => {
          for (let i = next++; i < size; i = next++) {
            await queue.add(`ns/pod-${first + i}`);
            const lease = await queue.get();
            if (lease !== undefined) await queue.done(lease);
          }
        }),
      );
      // A get that found every queued row being taken answers undefined, leaving one key for later: hand out the rest.
      for (let lease = await queue.get(); lease !== undefined; lease = await queue.get()) await queue.done(lease);
      elapsed += performance.now() - started;
      passed += size;
      bytesByChunk.push(await bytes());
      progress(`storage (${remove ? "rows removed" : "rows kept"}): ${passed.toLocaleString("en-US")} keys`);
    }
    if ((await queue.size()) + (await queue.inFlight()) !== 0) throw new Error("bench/storage.ts: keys left queued");
    const { rows } = await pool.query(`select count(*)::int as n from "${schema}".items`);
    const autovacuum = (await pool.query("show autovacuum")).rows[0].autovacuum as string;
    await queue.close();
    return {
      keys,
      keysPerSecond: keys / (elapsed / 1000),
      rows: rows[0].n as number,
      bytesAfterFirstChunk: bytesByChunk[0] ?? 0,
      bytesAtEnd: await bytes(),
      bytesByChunk,
      autovacuum,
    };
  } finally {
    await pool.query(`drop schema if exists "${schema}" cascade`);
    await pool.end();
  }
}
