/**
 * The batched functions of the PostgreSQL schema (`add_many`, `get_many`, `done_many`, `forget_many`, §20.1, and
 * `finish_many`, a lease's forget and then its done, §20.12) against their calls one by one: two queues of one schema go through the same random calls — adds, gets, delayed adds,
 * retries, forgets, dones, time passing (leases expire), a shut down — made one by one on both, and at each batch
 * step the first queue gets one batched call where the second gets the same calls one by one. Their answers and
 * every row of their state must be the same after each step. Tokens come from the schema's one sequence, so they
 * differ between the queues: a lease is compared by its place among the queue's leases.
 */
import * as fc from "fast-check";
import type pg from "pg";
import { expect, test } from "vitest";
import { params } from "../settings.js";
import { freshSchema } from "./database.js";

const { pool, schema } = freshSchema("setbased");
const s = `"${schema}"`;

const item = fc.constantFrom("a", "b", "c", "d", "e");
/** A lease handed out earlier (by its place, wrapped), token 0 for an item, or a token never handed out. */
const ref = fc.oneof(
  fc.record({ lease: fc.nat(20) }),
  fc.record({ zero: item }),
  fc.record({ never: item }),
  fc.record({ lease: fc.nat(20), other: item }), // a lease's token with another item
);
type Ref = { lease: number; other?: string } | { zero: string } | { never: string };
const step = fc.oneof(
  { arbitrary: fc.record({ kind: fc.constant("add" as const), item }), weight: 4 },
  { arbitrary: fc.record({ kind: fc.constant("get" as const) }), weight: 3 },
  { arbitrary: fc.record({ kind: fc.constant("tick" as const), ms: fc.integer({ min: 0, max: 4 }) }), weight: 3 },
  {
    arbitrary: fc.record({ kind: fc.constant("addAfter" as const), item, ms: fc.integer({ min: 1, max: 6 }) }),
    weight: 2,
  },
  { arbitrary: fc.record({ kind: fc.constant("retry" as const), ref }), weight: 1 },
  { arbitrary: fc.record({ kind: fc.constant("forget" as const), ref }), weight: 1 },
  { arbitrary: fc.record({ kind: fc.constant("done" as const), ref }), weight: 2 },
  { arbitrary: fc.record({ kind: fc.constant("shutDown" as const) }), weight: 1 },
  {
    arbitrary: fc.record({
      kind: fc.constant("addMany" as const),
      items: fc.array(item, { minLength: 1, maxLength: 7 }),
    }),
    weight: 3,
  },
  { arbitrary: fc.record({ kind: fc.constant("getMany" as const), count: fc.integer({ min: 1, max: 5 }) }), weight: 3 },
  {
    arbitrary: fc.record({
      kind: fc.constant("doneMany" as const),
      refs: fc.array(ref, { minLength: 1, maxLength: 7 }),
    }),
    weight: 4,
  },
  {
    arbitrary: fc.record({
      kind: fc.constant("forgetMany" as const),
      refs: fc.array(ref, { minLength: 1, maxLength: 7 }),
    }),
    weight: 2,
  },
  {
    arbitrary: fc.record({
      kind: fc.constant("finishMany" as const),
      refs: fc.array(ref, { minLength: 1, maxLength: 7 }),
    }),
    weight: 3,
  },
);
type Step = typeof step extends fc.Arbitrary<infer T> ? T : never;

const leaseMs = 5;

/** One queue of the pair: its name and the tokens of its leases, in hand-out order. */
interface Side {
  readonly name: string;
  readonly tokens: string[];
}

async function call(sql: string, args: unknown[]): Promise<Record<string, unknown>[]> {
  return (await pool.query(`select * from ${s}.${sql}`, args)).rows;
}

/** The item and token `r` names in `side`. */
function resolve(side: Side, r: Ref, items: Map<string, string>): [string, string] {
  if ("zero" in r) return [r.zero, "0"];
  if ("never" in r) return [r.never, "9000000000000000"];
  if (side.tokens.length === 0) return ["a", "0"];
  const token = side.tokens[r.lease % side.tokens.length] as string;
  return [r.other ?? (items.get(token) as string), token];
}

/** A lease's token written as its place among the side's leases, so that the two sides compare. */
function place(side: Side, token: unknown): string {
  const at = side.tokens.indexOf(String(token));
  return at < 0 ? `token ${String(token)}` : `lease ${at}`;
}

/** Every row of the queue's state, its tokens written as places. */
async function state(client: pg.Pool, side: Side): Promise<unknown> {
  const q = side.name;
  const queued = await client.query(
    `select item, queued_ms from ${s}.queued where queue = $1 order by queued_ms, position`,
    [q],
  );
  const items = await client.query(
    `select item, in_flight, dirty, lease, expires_ms, failures, due_ms, leased_ms, token from ${s}.items
     where queue = $1 order by item`,
    [q],
  );
  const waiting = await client.query(
    `select item from ${s}.items where queue = $1 and due_ms is not null order by due_ms, due_order`,
    [q],
  );
  const queues = await client.query(`select shutting_down, expired from ${s}.queues where name = $1`, [q]);
  return {
    queued: queued.rows,
    items: items.rows.map((r) => ({ ...r, token: place(side, r.token) })),
    waiting: waiting.rows,
    queues: queues.rows,
  };
}

/** The step on one side, as one batched call (`batched`) or its calls one by one; its answers, tokens as places. */
async function apply(side: Side, items: Map<string, string>, now: number, st: Step, batched: boolean) {
  const q = side.name;
  const lease = (row: Record<string, unknown>) => {
    side.tokens.push(String(row.token));
    items.set(String(row.token), row.item as string);
    return { item: row.item, expires: row.expires_ms, queuedFor: row.queued_for_ms, token: place(side, row.token) };
  };
  switch (st.kind) {
    case "add":
      return call("add($1, $2, $3) changed", [q, st.item, now]);
    case "get":
      return (await call("get($1, $2, $3)", [q, now, leaseMs])).map(lease);
    case "addAfter":
      return call("add_after($1, $2, $3, $4)", [q, st.item, now, st.ms]);
    case "retry":
      return call("retry($1, $2, $3, $4, 2, 1, 4) answer", [q, ...resolve(side, st.ref, items), now]);
    case "forget":
      return call("forget($1, $2, $3, $4) answer", [q, ...resolve(side, st.ref, items), now]);
    case "done":
      return call("done($1, $2, $3, $4)", [q, ...resolve(side, st.ref, items), now]);
    case "shutDown":
      return call("shut_down($1)", [q]);
    case "tick":
      return call("views($1, $2)", [q, now]);
    case "addMany": {
      if (batched) return (await call("add_many($1, $2, $3) changed", [q, st.items, now]))[0]?.changed;
      let changed = 0;
      for (const i of st.items) if ((await call("add($1, $2, $3) changed", [q, i, now]))[0]?.changed) changed++;
      return changed;
    }
    case "getMany": {
      if (batched) return (await call("get_many($1, $2, $3, $4)", [q, now, leaseMs, st.count])).map(lease);
      const leases = [];
      for (let n = 0; n < st.count; n++) leases.push(...(await call("get($1, $2, $3)", [q, now, leaseMs])).map(lease));
      return leases;
    }
    case "doneMany":
      return finishMany("done", "", st.refs);
    case "forgetMany":
      return finishMany("forget", " answer", st.refs);
    case "finishMany": {
      const calls = st.refs.map((r) => resolve(side, r, items));
      if (batched) return call("finish_many($1, $2, $3, $4)", [q, calls.map((c) => c[0]), calls.map((c) => c[1]), now]);
      const answers = [];
      for (const [i, token] of calls) {
        const [forgot] = await call("forget($1, $2, $3, $4) answer", [q, i, token, now]);
        const [done] = forgot?.answer === "ok" ? await call("done($1, $2, $3, $4)", [q, i, token, now]) : [undefined];
        answers.push({ forgot: forgot?.answer, answer: done?.answer ?? null, worked_ms: done?.worked_ms ?? null });
      }
      return answers;
    }
  }

  /** `verb_many` of the calls `refs` name, or `verb` of each, one by one; `column` names a one-value answer. */
  async function finishMany(verb: "done" | "forget", column: string, refs: Parameters<typeof resolve>[1][]) {
    const calls = refs.map((r) => resolve(side, r, items));
    if (batched) return call(`${verb}_many($1, $2, $3, $4)`, [q, calls.map((c) => c[0]), calls.map((c) => c[1]), now]);
    const answers = [];
    for (const [i, token] of calls)
      answers.push(...(await call(`${verb}($1, $2, $3, $4)${column}`, [q, i, token, now])));
    return answers;
  }
}

let run = 0;

test("add_many, get_many, done_many, forget_many and finish_many answer, and leave every row of the queue, as their calls one by one do", async () => {
  await fc.assert(
    fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 30, size: "max" }), async (steps) => {
      run++;
      const batched: Side = { name: `batched${run}`, tokens: [] };
      const single: Side = { name: `single${run}`, tokens: [] };
      const items = new Map<string, string>();
      let now = 1_000;
      for (const [at, st] of steps.entries()) {
        if (st.kind === "tick") now += st.ms;
        const a = await apply(batched, items, now, st, true);
        const b = await apply(single, items, now, st, false);
        const where = `step ${at} (${JSON.stringify(st)}) at ${now}`;
        expect(a, `the answers of ${where}`).toEqual(b);
        expect(await state(pool, batched), `the state after ${where}`).toEqual(await state(pool, single));
      }
    }),
    params(40),
  );
}, 300_000);
