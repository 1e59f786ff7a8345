/**
 * `node dist/bench/functions.js [--rows 2000,100000] [--rounds 7] [--before FILE]`: what each function of the
 * PostgreSQL queue (docs/spec.md §20) costs per row handled, against a plain single-row `UPDATE … RETURNING` timed in
 * the same round, on one connection, one statement at a time (as one worker sends them). With `N` items queued in a
 * schema of its own (dropped at the end), each round times, per row: `get` then `done` of `batch` items one
 * statement each, `add` of them back one each, then the same as `get_many`, `done_many` and `add_many` of `batch`
 * rows at once, and `batch` single-row updates of a table of `N` rows and one `batch`-row update. The figures are
 * ratios to the single-row update, the median of the rounds: the machine is shared, so only ratios within one run
 * compare. `--before FILE` times a second schema too, made by an older migration's SQL with its schema name
 * written `%SCHEMA%` (e.g. written by `migration("%SCHEMA%")` at an earlier commit), the two interleaved round by round.
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
    profile: { type: "boolean", default: false },
  },
});
const rounds = Number(values.rounds);
const batch = Number(values.batch);
const queue = "q";

/** Milliseconds that `run` takes. */
async function timed(run: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await run();
  return performance.now() - start;
}

function median(xs: readonly number[]): number {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
}

/** One round of one schema: milliseconds per row of each call, keyed by its name. */
async function round(client: pg.Client, s: string, items: readonly string[]): Promise<Record<string, number>> {
  const at: Record<string, number> = {};
  const call = (sql: string, args: unknown[]) => client.query(`select * from "${s}".${sql}`, args);
  let leases: { item: string; token: string }[] = [];
  at.get = await timed(async () => {
    for (const _ of items) leases.push((await call("get($1, null, 30000)", [queue])).rows[0]);
  });
  at.done = await timed(async () => {
    for (const l of leases) await call("done($1, $2, $3, null) answer", [queue, l.item, l.token]);
  });
  at.add = await timed(async () => {
    for (const item of leases.map((l) => l.item)) await call("add($1, $2, null) changed", [queue, item]);
  });
  leases = [];
  at.get_many = await timed(async () => {
    leases = (await call("get_many($1, null, 30000, $2)", [queue, items.length])).rows;
  });
  at.done_many = await timed(() =>
    call("done_many($1, $2, $3, null)", [queue, leases.map((l) => l.item), leases.map((l) => l.token)]),
  );
  at.add_many = await timed(() => call("add_many($1, $2, null) changed", [queue, leases.map((l) => l.item)]));
  return at;
}

/** Makes a schema from `sql` with `rows` items queued, and the table of the plain update. */
async function setUp(client: pg.Client, s: string, sql: string, rows: number): Promise<void> {
  await client.query(`drop schema if exists "${s}" cascade`);
  await client.query(sql);
  await client.query(
    `select "${s}".add_many($1, array(select 'k' || lpad(g::text, 7, '0') from generate_series(1, $2) g), null)`,
    [queue, rows],
  );
  await client.query(`vacuum analyze "${s}".items`);
  await client.query(`vacuum analyze "${s}".queued`);
}

const client = new pg.Client({ connectionString: databaseUrl });
await client.connect();
// per function: calls, and time in it without the functions it called (PostgreSQL counts both when asked)
if (values.profile) await client.query("set track_functions = 'pl'");
const before = values.before === undefined ? undefined : readFileSync(values.before, "utf8");
const schemas: [string, string][] = [["wq_fn_after", migration("wq_fn_after")]];
if (before !== undefined) schemas.push(["wq_fn_before", before.replaceAll("%SCHEMA%", "wq_fn_before")]);
try {
  for (const rows of values.rows.split(",").map(Number)) {
    await client.query("drop table if exists wq_fn_plain");
    await client.query("create table wq_fn_plain (id int primary key, n bigint not null default 0)");
    await client.query("insert into wq_fn_plain (id) select generate_series(1, $1)", [rows]);
    await client.query("vacuum analyze wq_fn_plain");
    for (const [s, sql] of schemas) await setUp(client, s, sql, rows);
    const samples = new Map<string, number[]>();
    const note = (name: string, ms: number) => samples.set(name, [...(samples.get(name) ?? []), ms / batch]);
    for (let r = 0; r < rounds; r++) {
      const ids = Array.from({ length: batch }, (_, i) => 1 + ((r * batch + i * 37) % rows));
      note(
        "plain",
        await timed(async () => {
          for (const id of ids) await client.query("update wq_fn_plain set n = n + 1 where id = $1 returning n", [id]);
        }),
      );
      note(
        "plain_many",
        await timed(() => client.query("update wq_fn_plain set n = n + 1 where id = any($1) returning n", [ids])),
      );
      for (const [s] of schemas) {
        // the heads of the queue: every round takes `batch` of them and adds them back at the tail
        const heads = (
          await client.query(`select item from "${s}".queued order by queued_ms, position limit $1`, [batch])
        ).rows;
        const at = await round(
          client,
          s,
          heads.map((h) => h.item as string),
        );
        for (const [name, ms] of Object.entries(at)) note(`${s}.${name}`, ms);
      }
    }
    const plain = median(samples.get("plain") as number[]);
    process.stdout.write(
      `\n${rows.toLocaleString("en-US")} rows queued, ${batch} per batch, median of ${rounds} rounds\n`,
    );
    process.stdout.write(
      `plain single-row UPDATE … RETURNING: ${(plain * 1000).toFixed(0)} µs per statement (= 1.00)\n`,
    );
    for (const [name, xs] of samples) {
      process.stdout.write(`${name.padEnd(24)} ${(median(xs) / plain).toFixed(2).padStart(6)} × per row\n`);
    }
    if (values.profile) {
      await client.query("select pg_stat_force_next_flush()");
      await client.query("select 1");
      const { rows: fns } = await client.query(
        `select schemaname || '.' || funcname as name, calls, round(self_time::numeric / $1, 2) as self_per_row,
           round(total_time::numeric / $1, 2) as total_per_row
         from pg_stat_user_functions where schemaname like 'wq_fn_%' order by schemaname, self_time desc`,
        [plain * rounds * batch * 6],
      );
      process.stdout.write("functions (time ÷ plain update ÷ rows handled in all rounds and calls):\n");
      for (const f of fns)
        process.stdout.write(
          `  ${f.name.padEnd(28)} calls ${String(f.calls).padStart(7)}  self ${f.self_per_row}  total ${f.total_per_row}\n`,
        );
    }
  }
} finally {
  for (const [s] of schemas) await client.query(`drop schema if exists "${s}" cascade`);
  await client.query("drop table if exists wq_fn_plain");
  await client.end();
}
