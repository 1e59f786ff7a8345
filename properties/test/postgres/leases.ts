/**
 * The lease suite's sequences and how one runs (docs/spec.md §20): random calls that hand out leases, let them expire
 * on a virtual clock, extend them, and call `done`, `retry`, `forget` and `finish` with live, finished, expired and superseded
 * leases, and lease and give back batches as a queue object with prefetched leases does (§20.18: `lease_many` and
 * `release_many`, called as that object calls them); after every call the answers and every view must equal
 * `LeaseModel`'s, and a stale lease must throw `StaleLeaseError` exactly when the model refuses it.
 */
import * as fc from "fast-check";
import type pg from "pg";
import { expect } from "vitest";
import { type Fenced, LeaseModel, type ModelLease } from "../../../model/index.js";
import { VirtualClock } from "../../../src/index.js";
import { type Lease, PostgresWorkQueue, StaleLeaseError } from "../../../src/postgres/index.js";
import { ShrinkBudget } from "../../core/shrink-budget.js";
import { scheduledParams } from "../settings.js";
import { freshName } from "./database.js";

const leaseMs = 100;
const items = ["a", "b", "c"];

/** The backoff of a run, if any (docs/spec.md §18.2). */
type Backoff = { readonly baseMs: number; readonly maxMs: number };

/** A call of the sequence; a lease is named by the index of the `get` that answered it, modulo how many there were. */
type Call =
  | { readonly verb: "add"; readonly item: string }
  | { readonly verb: "addAfter"; readonly item: string; readonly delayMs: number }
  | { readonly verb: "get" }
  | { readonly verb: "take" }
  | { readonly verb: "done" | "retry" | "forget" | "finish" | "extend"; readonly lease: number }
  | { readonly verb: "done" | "retry" | "forget" | "finish"; readonly unleased: string }
  | { readonly verb: "leaseMany"; readonly count: number }
  | { readonly verb: "releaseMany"; readonly batched: readonly number[] }
  | { readonly verb: "advance"; readonly ms: number }
  | { readonly verb: "shutDown" };

const item = fc.constantFrom(...items);
export const call: fc.Arbitrary<Call> = fc.oneof(
  { weight: 4, arbitrary: item.map((i) => ({ verb: "add", item: i }) as const) },
  { weight: 4, arbitrary: fc.constant({ verb: "get" } as const) },
  { weight: 2, arbitrary: fc.constant({ verb: "take" } as const) },
  {
    weight: 2,
    arbitrary: fc
      .tuple(item, fc.constantFrom(0, 1, 40, 100, 150))
      .map(([i, delayMs]) => ({ verb: "addAfter", item: i, delayMs }) as const),
  },
  {
    weight: 6,
    arbitrary: fc.record({
      verb: fc.constantFrom("done", "retry", "forget", "finish", "extend"),
      lease: fc.nat(20),
    }),
  },
  { weight: 1, arbitrary: fc.record({ verb: fc.constantFrom("done", "retry", "forget", "finish"), unleased: item }) },
  {
    weight: 3,
    arbitrary: fc.constantFrom(0, 1, 40, 99, 100, 101, 250).map((ms) => ({ verb: "advance", ms }) as const),
  },
  { weight: 3, arbitrary: fc.nat(4).map((count) => ({ verb: "leaseMany", count }) as const) },
  {
    weight: 3,
    arbitrary: fc.array(fc.nat(20), { maxLength: 4 }).map((batched) => ({ verb: "releaseMany", batched }) as const),
  },
  { weight: 1, arbitrary: fc.constant({ verb: "shutDown" } as const) },
);

/** A lease `lease_many` answered, with the place in the queue `release_many` gives it back to (§20.18). */
interface Batched extends Lease {
  readonly queuedMs: number;
  readonly position: string;
}

/** The queue's `lease_many` and `release_many` (§20.18), as a queue object with prefetched leases calls them. */
interface Batches {
  leaseMany(count: number): Promise<Batched[]>;
  releaseMany(leases: readonly Batched[]): Promise<number>;
}

/** The statements of {@link Batches} for the queue `name` of `schema`, at the time of `clock`. */
function batchesOf(pool: pg.Pool, schema: string, name: string, clock: VirtualClock): Batches {
  return {
    async leaseMany(count) {
      const { rows } = await pool.query(`select * from "${schema}".lease_many($1, $2, $3, $4)`, [
        name,
        clock.now(),
        leaseMs,
        count,
      ]);
      return rows.map((row) => ({
        item: row.item,
        token: Number(row.token),
        expiresAt: row.expires_ms,
        queuedMs: row.queued_ms,
        position: row.queued_position,
      }));
    },
    async releaseMany(leases) {
      const { rows } = await pool.query(`select "${schema}".release_many($1, $2, $3, $4, $5) as n`, [
        name,
        leases.map((lease) => lease.item),
        leases.map((lease) => lease.token),
        leases.map((lease) => lease.queuedMs),
        leases.map((lease) => lease.position),
      ]);
      return (rows[0] as { n: number }).n;
    },
  };
}

/** What a fenced call of the queue answered, in the model's terms. */
async function fenced<V>(call: () => Promise<V>): Promise<Fenced<V>> {
  try {
    return { stale: false, value: await call() };
  } catch (error) {
    if (error instanceof StaleLeaseError) return { stale: true };
    throw error;
  }
}

/**
 * What a `take` answered, or `"waits"` when it was still waiting after 100 ms, and was withdrawn (§14.5). A take
 * the model expects to answer at once is given 10 s, so that a slow machine does not make it look waiting.
 */
async function taken(queue: PostgresWorkQueue, waits: boolean): Promise<Lease | undefined | "waits"> {
  const signal = AbortSignal.timeout(waits ? 100 : 10_000);
  try {
    return await queue.take({ signal });
  } catch (error) {
    if (signal.aborted && error === signal.reason) return "waits";
    throw error;
  }
}

/** How many rows of items the queue `name` has: §20.9 bounds them by the items that are not idle. */
async function rowsOf(pool: pg.Pool, schema: string, name: string): Promise<number> {
  const { rows } = await pool.query(`select count(*)::int as n from "${schema}".items where queue = $1`, [name]);
  return (rows[0] as { n: number }).n;
}

/** Runs `calls` on a fresh queue and the model, comparing after every call; throws at the first difference. */
async function run(
  pool: pg.Pool,
  schema: string,
  maxRetries: number,
  backoff: Backoff | undefined,
  calls: readonly Call[],
): Promise<void> {
  const clock = new VirtualClock();
  const queue = new PostgresWorkQueue({ pool, schema, name: freshName(), maxRetries, leaseMs, clock, backoff });
  const model = new LeaseModel({ maxRetries, leaseMs, backoff });
  const leases: [Lease, ModelLease][] = [];
  const tokens: number[] = []; // the queue's tokens in the order handed out: the model's token is the rank
  const batches = batchesOf(pool, schema, queue.name, clock);
  try {
    await compare(queue, model, clock, calls, leases, tokens, batches, (name) => rowsOf(pool, schema, name));
  } finally {
    await queue.close(); // a take holds a listening connection of the pool's until then
  }
}

/** The calls of {@link run}, made on both, compared after each. */
async function compare(
  queue: PostgresWorkQueue,
  model: LeaseModel,
  clock: VirtualClock,
  calls: readonly Call[],
  leases: [Lease, ModelLease][],
  tokens: number[],
  batches: Batches,
  rows: (name: string) => Promise<number>,
): Promise<void> {
  const log: string[] = [];
  const batched: [Batched, ModelLease][] = []; // every lease lease_many answered, in the order handed out
  for (const c of calls) {
    log.push(JSON.stringify(c));
    const where = () => `after ${log.join(", ")}`;
    if (c.verb === "add") {
      await queue.add(c.item);
      model.add(c.item);
    } else if (c.verb === "addAfter") {
      await queue.addAfter(c.item, c.delayMs);
      model.addAfter(c.item, c.delayMs);
    } else if (c.verb === "get") {
      const [got, expected] = [await queue.get(), model.get()];
      if (got !== undefined) tokens.push(got.token);
      expect(got && { ...got, token: tokens.indexOf(got.token) + 1 }, `§5, §20.2: get ${where()}`).toEqual(expected);
      if (got !== undefined && expected !== undefined) leases.push([got, expected]);
    } else if (c.verb === "take") {
      const expected = model.take();
      const got = await taken(queue, expected === "waits");
      if (got !== undefined && got !== "waits") tokens.push(got.token);
      const answer = got === undefined || got === "waits" ? got : { ...got, token: tokens.indexOf(got.token) + 1 };
      // A take hands out a lease as get does: its token is §20.2's, whatever else the take answers.
      if (typeof answer === "object" && typeof expected === "object") {
        expect(answer.token, `§20.2: the token of take ${where()}`).toBe(expected.token);
      }
      expect(answer, `§14.1, §14.2, §20.10: take ${where()}`).toEqual(expected);
      if (got !== undefined && got !== "waits" && expected !== undefined && expected !== "waits") {
        leases.push([got, expected]);
      }
    } else if (c.verb === "leaseMany") {
      const [got, expected] = [await batches.leaseMany(c.count), model.getMany(c.count)];
      tokens.push(...got.map((lease) => lease.token));
      const answer = got.map(({ item, token, expiresAt }) => ({ item, token: tokens.indexOf(token) + 1, expiresAt }));
      // Each lease of a batch is handed out as get hands one out: its token is §20.2's, whatever else the batch answers.
      if (answer.length === expected.length) {
        const ranks = expected.map((lease) => lease.token);
        expect(
          answer.map((lease) => lease.token),
          `§20.2: the tokens of lease_many ${where()}`,
        ).toEqual(ranks);
      }
      expect(answer, `§20.18: lease_many ${where()}`).toEqual(expected);
      for (const [k, lease] of got.entries()) {
        const modelLease = expected[k] as ModelLease;
        leases.push([lease, modelLease]);
        batched.push([lease, modelLease]);
      }
    } else if (c.verb === "releaseMany") {
      const chosen =
        batched.length === 0 ? [] : c.batched.map((k) => batched[k % batched.length] as [Batched, ModelLease]);
      const released = await batches.releaseMany(chosen.map(([lease]) => lease));
      expect(released, `§20.18: release_many ${where()}`).toBe(model.giveBack(chosen.map(([, lease]) => lease)));
    } else if (c.verb === "advance") {
      clock.advance(c.ms);
      model.advance(c.ms);
    } else if (c.verb === "shutDown") {
      await queue.shutDown();
      model.shutDown();
    } else if ("unleased" in c) {
      const lease = { item: c.unleased, token: 0, expiresAt: 0 };
      expect(await fenced<unknown>(() => queue[c.verb](lease)), `§20.4: ${c.verb} ${where()}`).toEqual(
        model[c.verb](lease),
      );
    } else {
      const pair = leases[c.lease % Math.max(1, leases.length)];
      if (pair === undefined) continue;
      const [lease, modelLease] = pair;
      if (c.verb === "extend") {
        const extended = await fenced(() => queue.extend(lease).then((l) => l.expiresAt));
        expect(extended, `§20.5: extend ${where()}`).toEqual(model.extend(modelLease));
      } else {
        expect(await fenced<unknown>(() => queue[c.verb](lease)), `§20.4: ${c.verb} ${where()}`).toEqual(
          model[c.verb](modelLease),
        );
      }
    }
    expect(await queue.size(), `§9.1: size ${where()}`).toBe(model.size);
    expect(await queue.inFlight(), `§9.2: inFlight ${where()}`).toBe(model.inFlight);
    expect(await queue.waiting(), `§9.4: waiting ${where()}`).toBe(model.waiting);
    expect(await queue.shuttingDown(), `§12.2: shuttingDown ${where()}`).toBe(model.shuttingDown);
    for (const i of items) expect(await queue.failures(i), `§9.3: failures(${i}) ${where()}`).toBe(model.failures(i));
    const live = items.filter(
      (i) => model.queue.stateOf(i) !== "absent" || model.queue.dueOf(i) !== undefined || model.failures(i) > 0,
    );
    expect(await rows(queue.name), `§20.9: rows of items ${where()}`).toBe(live.length);
  }
}

/**
 * How many runs shrinking a failure may make: each is a fresh queue and up to 60 calls with every view read after
 * each, a few hundred milliseconds on a loaded machine, so shrinking is bounded by work, never by the test's timeout.
 */
const shrinkRuns = 50;

/**
 * Runs `numRuns` random sequences on fresh queues of `schema` against the model; the details say whether one failed.
 * Shrinking a failure makes at most {@link shrinkRuns} runs, then reports the shortest failure so far.
 */
export function checkLeases(pool: pg.Pool, schema: string, numRuns: number): Promise<fc.RunDetails<unknown>> {
  /** Made at the first failure: the runs shrinking has left. */
  let budget: ShrinkBudget | undefined;
  return fc.check(
    fc.asyncProperty(
      fc.constantFrom(0, 1, 2, 3, Number.POSITIVE_INFINITY),
      fc.option(fc.record({ baseMs: fc.constantFrom(0, 1, 30), maxMs: fc.constantFrom(0, 50, 200) }), {
        nil: undefined,
      }),
      fc.array(call, { minLength: 1, maxLength: 60, size: "max" }),
      async (maxRetries, backoff, calls) => {
        budget?.guard();
        try {
          await run(pool, schema, maxRetries, backoff, calls);
        } catch (error) {
          budget ??= new ShrinkBudget(shrinkRuns, "runs", Number.POSITIVE_INFINITY);
          throw error;
        } finally {
          budget?.charge(1);
        }
      },
    ),
    // The time limit is a safety net below the tests' own timeout, so that a run cut short says so.
    { ...scheduledParams(numRuns), interruptAfterTimeLimit: 100_000 },
  );
}
