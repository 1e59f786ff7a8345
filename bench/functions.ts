/**
 * `node dist/bench/functions.js [--rows 2000,100000] [--rounds 7] [--batch 50] [--before FILE]`: what each function
 * of the PostgreSQL queue (docs/spec.md §20) costs per row handled, against a plain single-row `UPDATE … RETURNING`
 * timed in the same round, on one connection, one statement at a time (as one worker sends them). With `N` items
 * queued in a schema of its own (dropped at the end), each round times, per row: `get` then `done` of `batch` items
 * one statement each, `add` of them back one each, then the same as `get_many`, `forget_many`, `done_many` and
 * `add_many` of `batch` rows at once, then (schema version 4 on) `finish_many` of `batch` rows leased again; and `batch` single-row updates of a table of `N` rows, and one `batch`-row update. Two
 * figures per call, each a ratio to the single-row update's, the median of the rounds: **wall**, the time the
 * client waited (round trip included), and **server**, the time PostgreSQL spent in the function
 * (`track_functions`, `pg_stat_user_functions.total_time`; the plain update is timed there by a PL/pgSQL function
 * that runs it); beside them, the same medians in milliseconds per call (of `batch` rows for the `_many` functions).
 * The machine is shared, so only ratios within one run compare. `--before FILE` times a second
 * schema too, made by an older migration's SQL with its schema name written `%SCHEMA%` (e.g. written by
 * `migration("%SCHEMA%")` at an earlier commit), the two interleaved round by round.
 */
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import pg from "pg";
import { migration } from "../src/postgres/schema.js";
import { databaseUrl } from "./contenders.js";

const { values } = parseArgs({
  options: {
    rows: { type: "string", default: "2000,100000" },
    rounds: { type: "string", default: "7" },
    batch: { type: "string", default: "50" },
    before: { type: "string" },
  },
});
const rounds = Number(values.rounds);
const batch = Number(values.batch);
const queue = "q";

function median(xs: readonly number[]): number {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
}

const client = new pg.Client({ connectionString: databaseUrl });

/** The server's total time in `fn` (schema-qualified) so far, in milliseconds, this session's calls flushed first. */
async function serverMs(fn: string): Promise<number> {
  await client.query("select pg_stat_force_next_flush()");
  const [schema, name] = fn.split(".");
  const { rows } = await client.query(
    "select coalesce(sum(total_time), 0) as ms from pg_stat_user_functions where schemaname = $1 and funcname = $2",
    [schema, name],
  );
  return Number(rows[0].ms);
}

/** Runs `run` and records its wall and server milliseconds per row under `name`; `fn` is the function timed. */
async function phase(samples: Map<string, number[][]>, name: string, fn: string, run: () => Promise<unknown>) {
  const server = await serverMs(fn);
  const start = performance.now();
  await run();
  const wall = performance.now() - start;
  const row = [wall / batch, ((await serverMs(fn)) - server) / batch];
  samples.set(name, [...(samples.get(name) ?? []), row]);
}

/** One round of one schema. */
async function round(samples: Map<string, number[][]>, s: string, count: number): Promise<void> {
  const call = (sql: string, args: unknown[]) => client.query(`select * from "${s}".${sql}`, args);
  let leases: { item: string; token: string }[] = [];
  await phase(samples, `${s}.get`, `${s}.get`, async () => {
    for (let i = 0; i < count; i++) leases.push((await call("get($1, null, 30000)", [queue])).rows[0]);
  });
  await phase(samples, `${s}.done`, `${s}.done`, async () => {
    for (const l of leases) await call("done($1, $2, $3, null) answer", [queue, l.item, l.token]);
  });
  await phase(samples, `${s}.add`, `${s}.add`, async () => {
    for (const l of leases) await call("add($1, $2, null) changed", [queue, l.item]);
  });
  leases = [];
  await phase(samples, `${s}.get_many`, `${s}.get_many`, async () => {
    leases = (await call("get_many($1, null, 30000, $2)", [queue, count])).rows;
  });
  const items = leases.map((l) => l.item);
  const tokens = () => leases.map((l) => l.token);
  await phase(samples, `${s}.forget_many`, `${s}.forget_many`, () =>
    call("forget_many($1, $2, $3, null)", [queue, items, tokens()]),
  );
  await phase(samples, `${s}.done_many`, `${s}.done_many`, () =>
    call("done_many($1, $2, $3, null)", [queue, items, tokens()]),
  );
  await phase(samples, `${s}.add_many`, `${s}.add_many`, () => call("add_many($1, $2, null) changed", [queue, items]));
  // A handled lease's forget and done in one statement (schema version 4): the same items leased again, not timed
  const finishing = (await client.query("select to_regproc($1) as f", [`"${s}".finish_many`])).rows[0].f !== null;
  if (!finishing) return;
  leases = (await call("get_many($1, null, 30000, $2)", [queue, count])).rows;
  const again = leases.map((l) => l.item);
  await phase(samples, `${s}.finish_many`, `${s}.finish_many`, () =>
    call("finish_many($1, $2, $3, null)", [queue, again, tokens()]),
  );
  await call("add_many($1, $2, null) changed", [queue, again]);
}

/** Makes a schema from `sql` with `rows` items queued. */
async function setUp(s: string, sql: string, rows: number): Promise<void> {
  await client.query(`drop schema if exists "${s}" cascade`);
  await client.query(sql);
  await client.query(
    `select "${s}".add_many($1, array(select 'k' || lpad(g::text, 7, '0') from generate_series(1, $2) g), null)`,
    [queue, rows],
  );
  await client.query(`vacuum analyze "${s}".items, "${s}".queued`);
}

/** The table of the plain update, and the functions that time it on the server. */
async function setUpPlain(rows: number): Promise<void> {
  await client.query("drop schema if exists wq_fn_plain cascade");
  await client.query("create schema wq_fn_plain");
  await client.query("create table wq_fn_plain.t (id int primary key, n bigint not null default 0)");
  await client.query("insert into wq_fn_plain.t (id) select generate_series(1, $1)", [rows]);
  await client.query("vacuum analyze wq_fn_plain.t");
  await client.query(`create function wq_fn_plain.one(p_id int) returns bigint language plpgsql as $$
    declare v bigint; begin update wq_fn_plain.t set n = n + 1 where id = p_id returning n into v; return v; end $$`);
  await client.query(`create function wq_fn_plain.many(p_ids int[]) returns setof bigint language plpgsql as $$
    begin return query update wq_fn_plain.t set n = n + 1 where id = any(p_ids) returning n; end $$`);
}

await client.connect();
await client.query("set track_functions = 'pl'");
const before = values.before === undefined ? undefined : readFileSync(values.before, "utf8");
const schemas: [string, string][] = [["wq_fn_after", migration("wq_fn_after")]];
if (before !== undefined) schemas.push(["wq_fn_before", before.replaceAll("%SCHEMA%", "wq_fn_before")]);
try {
  for (const rows of values.rows.split(",").map(Number)) {
    await setUpPlain(rows);
    for (const [s, sql] of schemas) await setUp(s, sql, rows);
    const samples = new Map<string, number[][]>();
    for (let r = 0; r < rounds; r++) {
      const ids = Array.from({ length: batch }, (_, i) => 1 + ((r * batch + i * 37) % rows));
      await phase(samples, "plain", "wq_fn_plain.one", async () => {
        for (const id of ids) await client.query("select wq_fn_plain.one($1)", [id]);
      });
      await phase(samples, "plain_many", "wq_fn_plain.many", () => client.query("select wq_fn_plain.many($1)", [ids]));
      for (const [s] of schemas) await round(samples, s, batch);
    }
    const plain = samples.get("plain") as number[][];
    const [wall, server] = [0, 1].map((k) => median(plain.map((p) => p[k] as number)));
    process.stdout.write(
      `\n${rows.toLocaleString("en-US")} rows queued, ${batch} per batch, median of ${rounds} rounds\n`,
    );
    process.stdout.write(
      `plain single-row UPDATE … RETURNING: wall ${(wall as number).toFixed(3)} ms, server ${(server as number).toFixed(3)} ms (= 1.00)\n`,
    );
    process.stdout.write(
      `${"per row, ÷ plain".padEnd(24)}   wall  server   ms per call (of ${batch} rows for _many), wall / server\n`,
    );
    for (const [name, xs] of samples) {
      const [w, v] = [0, 1].map((k) => median(xs.map((x) => x[k] as number)));
      // a call of `batch` rows for the batched functions, of one row for the others
      const rows = name.endsWith("_many") ? batch : 1;
      process.stdout.write(
        `${name.padEnd(24)} ${((w as number) / (wall as number)).toFixed(2).padStart(6)} ${((v as number) / (server as number)).toFixed(2).padStart(7)}   ${((w as number) * rows).toFixed(2)} / ${((v as number) * rows).toFixed(2)}\n`,
      );
    }
  }
} finally {
  for (const [s] of schemas) await client.query(`drop schema if exists "${s}" cascade`);
  await client.query("drop schema if exists wq_fn_plain cascade");
  await client.end();
}
