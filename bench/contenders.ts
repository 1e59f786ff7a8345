/**
 * The PostgreSQL queues the benchmark drives, behind one interface: `PostgresWorkQueue` and pg-boss (a dev
 * dependency, for this benchmark only), each in a schema of its own that `close` drops. graphile-worker is in
 * `graphile.ts`.
 */
import { setMaxListeners } from "node:events";
import pg from "pg";
import PgBoss from "pg-boss";
import { type LeasedQueue, migrate, PostgresWorkQueue, runLeaseWorkers } from "../src/postgres/index.js";

/** The database measured: the machine's PostgreSQL, or `WORKQUEUE_DATABASE_URL`. */
export const databaseUrl = process.env.WORKQUEUE_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";

/** The connections each queue may open: one pool of this size per queue, enough for 16 workers. */
export const poolSize = 20;

/** What one queue answers: the verbs the benchmark drives, whatever the queue calls them. */
export interface Contender {
  /** Queues `item`. */
  add(item: string): Promise<void>;
  /** Which queue it is, for a worker process to attach to it ({@link Where}). */
  readonly kind: ContenderKind;
  /**
   * Moves to a fresh, empty queue of the same schema, leaving behind what the last round left (a round ends after a
   * time limit); answers where it is, for workers in other processes.
   */
  fresh(): Promise<Where>;
  /** Queues all `items` in the current queue, as fast as the queue can; not timed. */
  insert(items: readonly string[]): Promise<void>;
  /** The next item and what finishes it, or `undefined` when nothing is queued; never waits. Absent when the queue hands out work only to its own worker loop (graphile-worker). */
  readonly get?: (() => Promise<Got | undefined>) | undefined;
  /** The next item, waiting for one (ours: `take`; pg-boss has no waiting fetch, so it fetches again), or `undefined` once `stop` aborts. Absent like `get`. */
  readonly next?: ((stop: AbortSignal) => Promise<Got | undefined>) | undefined;
  /** Runs `handler` on each item queued, by the queue's own worker loop with `workers` workers, until the returned stop. */
  work(handler: (item: string) => void, workers: number): Promise<() => Promise<void>>;
  /** Drops the queue's schema and ends its connections. */
  close(): Promise<void>;
}

/** The queues a worker process can attach to: each contender's kind. */
export type ContenderKind =
  | "ours"
  | "ours-prefetch"
  | "ours-loop"
  | "ours-loop-apart"
  | "graphile-batched"
  | "graphile-default"
  | "pg-boss";

/** The buffer of the prefetching contenders (docs/spec.md §20.18): graphile-worker's `localQueue` size in its batched mode. */
export const prefetched = 500;

/**
 * The leases finishing in the background per process of the controller-loop contender (`finishAhead`, docs/spec.md
 * §20.12): as many as its buffer holds, so that a buffer's worth of `forget`s and `done`s may go out together, as
 * graphile-worker's batched completions do.
 */
export const finishedAhead = prefetched;

/** Where a round's queue is: its schema and the name of its queue (or graphile-worker's task). */
export interface Where {
  readonly schema: string;
  readonly name: string;
}

/** An item handed out, and what finishes it (`done`, `complete`). */
export interface Got {
  readonly item: string;
  finish(): Promise<void>;
}

/** A schema name of its own for one contender of one run. */
export const schemaName = (prefix: string) => `bench_${prefix}_${process.pid}_${Math.floor(Math.random() * 1e9)}`;

/** Drops `schema` over a connection of its own. */
export async function dropSchema(schema: string): Promise<void> {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 1 });
  await pool.query(`drop schema if exists "${schema}" cascade`);
  await pool.end();
}

/**
 * How our contenders run a worker loop: the benchmark's own (`take`, handler, `done`, each awaited), or the
 * controller loop a user runs for throughput (`runLeaseWorkers` with `finishAhead`: `forget` and `done` in the
 * background while the worker takes on, as one `finish`), or that loop with `forget` and `done` apart, two calls, as
 * before `finish` (docs/spec.md §20.12), to measure what `finish` changes within one run.
 */
export type OursLoop = "takes" | "controller" | "controller-apart";

/**
 * `PostgresWorkQueue`, with `prefetch` leases buffered per queue object (0: none, the default). With `loop`
 * "controller" it has no `get` and no `next`, like graphile-worker: the benchmark runs its own loop, `runLeaseWorkers`.
 */
export async function ours(prefetch = 0, loop: OursLoop = "takes"): Promise<Contender> {
  const schema = schemaName("workqueue");
  const pool = new pg.Pool({ connectionString: databaseUrl, max: poolSize });
  await migrate(pool, { schema });
  let rounds = 0;
  const open = () => new PostgresWorkQueue({ pool, schema, name: `bench${rounds}`, maxRetries: 5, prefetch });
  let queue = open();
  const kind: ContenderKind =
    loop === "controller"
      ? "ours-loop"
      : loop === "controller-apart"
        ? "ours-loop-apart"
        : prefetch === 0
          ? "ours"
          : "ours-prefetch";
  const get = async () => {
    const lease = await queue.get();
    return lease && { item: lease.item, finish: () => queue.done(lease) };
  };
  const next = async (stop: AbortSignal) => {
    const lease = await untilStopped(queue, stop);
    return lease && { item: lease.item, finish: () => queue.done(lease) };
  };
  return {
    kind,
    add: (item) => queue.add(item),
    async fresh() {
      await queue.close();
      rounds += 1;
      queue = open();
      return { schema, name: queue.name };
    },
    async insert(items) {
      // One statement of as many adds, each as `add` makes it: the same rows, without a round trip per item.
      await pool.query(`select "${schema}".add($1, item, null) from unnest($2::text[]) item`, [queue.name, items]);
    },
    get: loop === "takes" ? get : undefined,
    next: loop === "takes" ? next : undefined,
    work: (handler, workers) => Promise.resolve(loops(loop, queue, handler, workers)),
    async close() {
      await queue.close();
      await pool.query(`drop schema if exists "${schema}" cascade`);
      await pool.end();
    },
  };
}

/** `take`, or `undefined` once `stop` aborted it. */
async function untilStopped(queue: PostgresWorkQueue, stop: AbortSignal) {
  return queue.take({ signal: stop }).catch((error) => {
    if (stop.aborted) return undefined;
    throw error;
  });
}

/** `workers` workers of `loop` on `queue`, until the returned stop. */
function loops(loop: OursLoop, queue: PostgresWorkQueue, handler: (item: string) => void, workers: number) {
  return loop === "takes" ? takeLoops(queue, handler, workers) : controller(queue, handler, workers, loop);
}

/**
 * `runLeaseWorkers` with `workers` workers and {@link finishedAhead} leases finishing in the background, until the
 * returned stop: each lease is forgotten and done, as a user's controller does.
 */
function controller(
  queue: PostgresWorkQueue,
  handler: (item: string) => void,
  workers: number,
  loop: "controller" | "controller-apart",
) {
  const stopped = new AbortController();
  setMaxListeners(workers * 2, stopped.signal); // each waiting take, and each handler's signal, listens to it
  // Without `finish`, the loop makes a success's `forget` and `done` as two calls (§20.12).
  const apart: LeasedQueue = {
    leaseMs: queue.leaseMs,
    take: (options) => queue.take(options),
    extend: (lease) => queue.extend(lease),
    forget: (lease) => queue.forget(lease),
    retry: (lease) => queue.retry(lease),
    done: (lease) => queue.done(lease),
  };
  const running = runLeaseWorkers(loop === "controller" ? queue : apart, (item) => handler(item), {
    concurrency: workers,
    finishAhead: finishedAhead,
    signal: stopped.signal,
  });
  return async () => {
    stopped.abort();
    await running;
  };
}

/** `workers` loops of `take`, `handler`, `done` on `queue`, until the returned stop. */
function takeLoops(queue: PostgresWorkQueue, handler: (item: string) => void, workers: number) {
  const stopped = new AbortController();
  setMaxListeners(workers, stopped.signal); // each waiting take listens to it
  const loops = Array.from({ length: workers }, async () => {
    for (;;) {
      const lease = await untilStopped(queue, stopped.signal);
      if (lease === undefined) return;
      handler(lease.item);
      await queue.done(lease);
    }
  });
  return async () => {
    stopped.abort();
    await Promise.all(loops);
  };
}

/** Ours in a worker process: a pool and a queue object of its own on the round's queue. */
export async function oursAt(
  where: Where,
  handler: (item: string) => void,
  workers: number,
  prefetch = 0,
  loop: OursLoop = "takes",
) {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: workers + 2 }); // few, for 4 processes on one server
  const queue = new PostgresWorkQueue({ pool, schema: where.schema, name: where.name, maxRetries: 5, prefetch });
  const stop = loops(loop, queue, handler, workers);
  return async () => {
    await stop();
    await queue.close();
    await pool.end();
  };
}

/** pg-boss with the keyed semantics closest to ours: a `stately` queue, the item as `singletonKey`. */
export async function pgBoss(): Promise<Contender> {
  const schema = schemaName("pgboss");
  const boss = await startBoss(schema);
  let name = "bench0";
  await boss.createQueue(name, { name, policy: "stately" });
  const get = async (): Promise<Got | undefined> => {
    const [job] = await boss.fetch<{ item: string }>(name);
    return job && { item: job.data.item, finish: async () => void (await boss.complete(name, job.id)) };
  };
  return {
    kind: "pg-boss",
    async add(item) {
      await boss.send(name, { item }, { singletonKey: item });
    },
    async fresh() {
      name = `bench${Number(name.slice(5)) + 1}`;
      await boss.createQueue(name, { name, policy: "stately" });
      return { schema, name };
    },
    async insert(items) {
      for (let i = 0; i < items.length; i += 500) {
        await boss.insert(items.slice(i, i + 500).map((item) => ({ name, data: { item }, singletonKey: item })));
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
    work: (handler, workers) => bossWorkers(boss, name, handler, workers),
    async close() {
      await boss.stop({ graceful: false, wait: true });
      await dropSchema(schema);
    },
  };
}

/** A started pg-boss on `schema` with at most `max` connections, reporting its errors. */
async function startBoss(schema: string, max = poolSize): Promise<PgBoss> {
  const boss = new PgBoss({ connectionString: databaseUrl, schema, max, supervise: false, schedule: false });
  boss.on("error", (error) => process.stderr.write(`pg-boss: ${error.message}\n`));
  await boss.start();
  return boss;
}

/** `workers` of pg-boss's own workers on the queue `name`, until the returned stop. */
async function bossWorkers(boss: PgBoss, name: string, handler: (item: string) => void, workers: number) {
  // Its shortest polling interval: pg-boss's workers poll, and a send does not wake them.
  const ids = await Promise.all(
    Array.from({ length: workers }, () =>
      boss.work<{ item: string }>(name, { pollingIntervalSeconds: 0.5 }, async ([job]) => {
        if (job !== undefined) handler(job.data.item);
      }),
    ),
  );
  return async () => {
    await Promise.all(ids.map((id) => boss.offWork({ id })));
  };
}

/** pg-boss in a worker process: a pg-boss of its own on the round's queue. */
export async function pgBossAt(where: Where, handler: (item: string) => void, workers: number) {
  const boss = await startBoss(where.schema, workers + 2); // few, for 4 processes on one server
  const stop = await bossWorkers(boss, where.name, handler, workers);
  return async () => {
    await stop();
    await boss.stop({ graceful: false, wait: true });
  };
}
