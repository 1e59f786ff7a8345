/**
 * PostgreSQL benchmarks: `PostgresWorkQueue` side by side with pg-boss (a dev dependency, for this benchmark only)
 * on the same database, each in a schema of its own that is dropped at the end. Measured: the `get → done → add`
 * cycle, a worker loop with 1, 4 and 16 workers, and how long a handler waits to start — after it asks for work
 * while work is queued, and after an add while it is idle. pg-boss runs twice: with the keyed semantics closest to
 * ours (a `stately` queue, the item as `singletonKey`: one queued and one active job per key) and without keys (a
 * `standard` queue), its fastest mode.
 */
import pg from "pg";
import PgBoss from "pg-boss";
import { migrate, PostgresWorkQueue } from "../src/postgres/index.js";

/** The database measured: the machine's PostgreSQL, or `WORKQUEUE_DATABASE_URL`. */
export const databaseUrl = process.env.WORKQUEUE_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";

/** The connections each queue may open: one pool of this size per queue, enough for 16 workers. */
const poolSize = 20;

/** Items queued while the cycle runs. */
export const cycleDepth = 1_000;
/** Cycles timed per round. */
const cycles = 500;
/** Items each worker-loop round handles. */
const loopItems = 1_000;
/** The worker counts measured. */
export const workerCounts = [1, 4, 16] as const;
/** Adds timed one at a time for the idle latency. */
const idleAdds = 30;

/** What one queue answers: the verbs the benchmark drives, whatever the queue calls them. */
interface Contender {
  /** Queues `item`. */
  add(item: string): Promise<void>;
  /** Queues all `items`, as fast as the queue can; not timed. */
  fill(items: readonly string[]): Promise<void>;
  /** The next item and what finishes it, or `undefined` when nothing is queued; never waits. */
  get(): Promise<Got | undefined>;
  /** The next item, waiting for one (ours: `take`; pg-boss has no waiting fetch, so it fetches again), or `undefined` once `stop` aborts. */
  next(stop: AbortSignal): Promise<Got | undefined>;
  /** Runs `handler` on each item added from now on, by the queue's own worker loop, until the returned stop. */
  work(handler: (item: string) => void): Promise<() => Promise<void>>;
  /** Drops the queue's schema and ends its connections. */
  close(): Promise<void>;
}

/** An item handed out, and what finishes it (`done`, `complete`). */
interface Got {
  readonly item: string;
  finish(): Promise<void>;
}

/** Latency percentiles, in milliseconds. */
export interface Latency {
  readonly p50: number;
  readonly p99: number;
  readonly samples: number;
}

/** One worker-loop round: handlings per second, and how long a worker waited from asking to its handler's start. */
export interface LoopResult {
  readonly perSecond: number;
  readonly askToStart: Latency;
}

/** What one contender measured. */
export interface PostgresResult {
  /** `get → done → add` cycles per second, with {@link cycleDepth} items queued. */
  readonly cyclesPerSecond: number;
  /** By worker count. */
  readonly loops: Record<number, LoopResult>;
  /** From an add to its handler's start, with one worker idle in the queue's own wait. */
  readonly idle: Latency;
}

const schemaName = (prefix: string) => `bench_${prefix}_${process.pid}_${Math.floor(Math.random() * 1e9)}`;

async function ours(): Promise<Contender> {
  const schema = schemaName("workqueue");
  const pool = new pg.Pool({ connectionString: databaseUrl, max: poolSize });
  await migrate(pool, { schema });
  const queue = new PostgresWorkQueue({ pool, schema, name: "bench", maxRetries: 5 });
  return {
    add: (item) => queue.add(item),
    async fill(items) {
      await inBatches(items, (item) => queue.add(item));
    },
    async get() {
      const lease = await queue.get();
      return lease && { item: lease.item, finish: () => queue.done(lease) };
    },
    async next(stop) {
      const lease = await queue.take({ signal: stop }).catch((error) => {
        if (stop.aborted) return undefined;
        throw error;
      });
      return lease && { item: lease.item, finish: () => queue.done(lease) };
    },
    async work(handler) {
      const stopped = new AbortController();
      const loop = (async () => {
        for (;;) {
          const lease = await queue.take({ signal: stopped.signal }).catch((error) => {
            if (stopped.signal.aborted) return undefined;
            throw error;
          });
          if (lease === undefined) return;
          handler(lease.item);
          await queue.done(lease);
        }
      })();
      return async () => {
        stopped.abort();
        await loop;
      };
    },
    async close() {
      await queue.close();
      await pool.query(`drop schema if exists "${schema}" cascade`);
      await pool.end();
    },
  };
}

async function pgBoss(policy: "stately" | "standard"): Promise<Contender> {
  const schema = schemaName(`pgboss_${policy}`);
  const boss = new PgBoss({ connectionString: databaseUrl, schema, max: poolSize, supervise: false, schedule: false });
  boss.on("error", (error) => process.stderr.write(`pg-boss: ${error.message}\n`));
  await boss.start();
  const name = "bench";
  await boss.createQueue(name, { name, policy });
  const keyed = (item: string) => (policy === "stately" ? { singletonKey: item } : {});
  const get = async (): Promise<Got | undefined> => {
    const [job] = await boss.fetch<{ item: string }>(name);
    return job && { item: job.data.item, finish: async () => void (await boss.complete(name, job.id)) };
  };
  return {
    async add(item) {
      await boss.send(name, { item }, keyed(item));
    },
    async fill(items) {
      for (let i = 0; i < items.length; i += 500) {
        await boss.insert(items.slice(i, i + 500).map((item) => ({ name, data: { item }, ...keyed(item) })));
      }
    },
    get,
    async next(stop) {
      for (;;) {
        if (stop.aborted) return undefined;
        const got = await get();
        if (got !== undefined) return got;
        await new Promise((resolve) => setTimeout(resolve, 1));
      }
    },
    async work(handler) {
      // Its shortest polling interval: pg-boss's workers poll, and a send does not wake them.
      const id = await boss.work<{ item: string }>(name, { pollingIntervalSeconds: 0.5 }, async ([job]) => {
        if (job !== undefined) handler(job.data.item);
      });
      return async () => {
        await boss.offWork({ id });
      };
    },
    async close() {
      await boss.stop({ graceful: false, wait: true });
      const pool = new pg.Pool({ connectionString: databaseUrl, max: 1 });
      await pool.query(`drop schema if exists "${schema}" cascade`);
      await pool.end();
    },
  };
}

/** The contenders, by the name the table shows. */
export const contenders: Record<string, () => Promise<Contender>> = {
  PostgresWorkQueue: ours,
  "pg-boss 10 (stately, singletonKey)": () => pgBoss("stately"),
  "pg-boss 10 (standard, no keys)": () => pgBoss("standard"),
};

/** Runs `each` on every item, {@link poolSize} at a time. */
async function inBatches(items: readonly string[], each: (item: string) => Promise<void>): Promise<void> {
  for (let i = 0; i < items.length; i += poolSize) await Promise.all(items.slice(i, i + poolSize).map(each));
}

const keys = (round: string, n: number) => Array.from({ length: n }, (_, i) => `namespace-${i % 97}/${round}-${i}`);

function latency(samples: number[]): Latency {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] ?? Number.NaN;
  return { p50: at(0.5), p99: at(0.99), samples: sorted.length };
}

/** `get → done → add` of the same item, one call at a time, with {@link cycleDepth} items queued. */
async function cycle(queue: Contender, round: string): Promise<number> {
  await queue.fill(keys(round, cycleDepth));
  const start = performance.now();
  for (let i = 0; i < cycles; i++) {
    const got = await queue.get();
    if (got === undefined) throw new Error(`the queue is empty after ${i} cycles of ${cycleDepth} items`);
    await got.finish();
    await queue.add(got.item);
  }
  const perSecond = cycles / ((performance.now() - start) / 1000);
  while (true) {
    const got = await queue.get();
    if (got === undefined) return perSecond;
    await got.finish();
  }
}

/** One worker-loop round: handlings per second, and each wait from asking for an item to its handler's start (ms). */
interface Round {
  readonly perSecond: number;
  readonly waits: readonly number[];
}

/**
 * `workers` workers each asking for the next item, handling it (doing nothing) and finishing it, until every item
 * queued was handled; then the workers still waiting are stopped.
 */
async function loop(queue: Contender, round: string, workers: number): Promise<Round> {
  await queue.fill(keys(round, loopItems));
  const waits: number[] = [];
  const allHandled = new AbortController();
  let handled = 0;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: workers }, async () => {
      for (;;) {
        const asked = performance.now();
        const got = await queue.next(allHandled.signal);
        if (got === undefined) return;
        waits.push(performance.now() - asked);
        await got.finish();
        handled += 1;
        if (handled === loopItems) allHandled.abort();
      }
    }),
  );
  const seconds = (performance.now() - start) / 1000;
  if (handled !== loopItems) throw new Error(`${handled} of ${loopItems} items handled`);
  return { perSecond: handled / seconds, waits };
}

/** One add at a time to an idle worker waiting in the queue's own loop: from the add to its handler's start. */
async function idle(queue: Contender, round: string): Promise<Latency> {
  let started: ((at: number) => void) | undefined;
  const stop = await queue.work(() => started?.(performance.now()));
  const samples: number[] = [];
  try {
    await new Promise((resolve) => setTimeout(resolve, 200)); // the worker is waiting
    for (const item of keys(round, idleAdds)) {
      const handlerStarted = new Promise<number>((resolve) => {
        started = resolve;
      });
      const added = performance.now();
      await queue.add(item);
      samples.push((await handlerStarted) - added);
      await new Promise((resolve) => setTimeout(resolve, 5 + Math.random() * 20));
    }
  } finally {
    await stop();
  }
  return latency(samples);
}

/**
 * Every contender on the same database, round by round in turn so that drift on a shared machine touches them
 * alike; each rate is the median of `rounds` rounds, each latency over the samples of all of them. `progress` is told what runs.
 */
export async function measurePostgres(
  progress: (text: string) => void,
  rounds = 3,
): Promise<Record<string, PostgresResult>> {
  const queues: Record<string, Contender> = {};
  try {
    for (const [name, make] of Object.entries(contenders)) queues[name] = await make();
    const names = Object.keys(queues);
    const cyclesOf = Object.fromEntries(names.map((name) => [name, [] as number[]]));
    const loopsOf = Object.fromEntries(
      names.map((name) => [name, Object.fromEntries(workerCounts.map((w) => [w, [] as Round[]]))]),
    );
    for (let r = 1; r <= rounds; r++) {
      for (const [name, queue] of Object.entries(queues)) {
        progress(`PostgreSQL: ${name}, cycle (round ${r} of ${rounds})`);
        cyclesOf[name]?.push(await cycle(queue, `cycle-${r}`));
        for (const workers of workerCounts) {
          progress(`PostgreSQL: ${name}, ${workers} workers (round ${r} of ${rounds})`);
          loopsOf[name]?.[workers]?.push(await loop(queue, `loop-${r}-${workers}`, workers));
        }
      }
    }
    const results: Record<string, PostgresResult> = {};
    for (const [name, queue] of Object.entries(queues)) {
      progress(`PostgreSQL: ${name}, idle latency`);
      const loops: Record<number, LoopResult> = {};
      for (const workers of workerCounts) {
        const all = loopsOf[name]?.[workers] ?? [];
        loops[workers] = {
          perSecond: median(all.map((l) => l.perSecond)),
          askToStart: latency(all.flatMap((l) => l.waits)),
        };
      }
      results[name] = { cyclesPerSecond: median(cyclesOf[name] ?? []), loops, idle: await idle(queue, "idle") };
    }
    return results;
  } finally {
    for (const queue of Object.values(queues)) await queue.close();
  }
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

/** Whether the database answers; the reason when it does not. */
export async function postgresAnswers(): Promise<string | undefined> {
  const client = new pg.Client({ connectionString: databaseUrl, connectionTimeoutMillis: 3_000 });
  try {
    await client.connect();
    await client.end();
    return undefined;
  } catch (error) {
    return `PostgreSQL does not answer at ${databaseUrl}: ${(error as Error).message}`;
  }
}
