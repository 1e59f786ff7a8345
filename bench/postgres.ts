/**
 * PostgreSQL benchmarks: `PostgresWorkQueue` side by side with pg-boss and graphile-worker (dev dependencies, for
 * this benchmark only) on the same database, each in a schema of its own that is dropped at the end, with the same
 * keyed workload. Measured: the `get → done → add` cycle, a worker loop with 1, 4, 16 and 24 workers (handlings per
 * second, and the statements each queue sent per handling), the same loop across 4 processes of 4 workers each, how long a handler waits to start — after it asks for
 * work while work is queued, and after an add while it is idle — and the physical limit of one statement per job.
 */
import { type ChildProcess, fork } from "node:child_process";
import { once, setMaxListeners } from "node:events";
import pg from "pg";
import {
  type Contender,
  type ContenderKind,
  databaseUrl,
  finishedAhead,
  ours,
  pgBoss,
  prefetched,
} from "./contenders.js";
import { graphileWorker } from "./graphile.js";
import { statementsSent, updatesPerSecond } from "./statements.js";

/** Items queued while the cycle runs. */
export const cycleDepth = 1_000;
/** Cycles timed per round. */
const cycles = 200;
/** Items queued for each worker-loop round: the 2,000 keyed no-op jobs. */
const loopItems = 2_000;
/** A worker-loop round ends after this long even with items left, so that the slowest queues take seconds, not minutes (graphile-worker's default handles about 50 a second here). */
const roundMs = 3_000;
/** The worker counts measured. */
export const workerCounts = [1, 4, 16, 24] as const;
/** The run across processes: this many worker processes, each with {@link workersEach} workers. */
export const processes = 4;
export const workersEach = 4;
/** Adds timed one at a time for the idle latency. */
const idleAdds = 30;

/** Latency percentiles, in milliseconds. */
export interface Latency {
  readonly p50: number;
  readonly p99: number;
  readonly samples: number;
}

/** One worker count's rounds: handlings per second, how long a worker waited from asking to its handler's start, statements sent per handling. */
export interface LoopResult {
  /** The median of the rounds. */
  readonly perSecond: number;
  /** Each round's handlings per second, in the order of the rounds. */
  readonly rounds: readonly number[];
  readonly askToStart: Latency;
  readonly statementsPerJob: number;
}

/** What one contender measured. */
export interface PostgresResult {
  /** `get → done → add` cycles per second, with {@link cycleDepth} items queued; `NaN` for a queue without `get`. */
  readonly cyclesPerSecond: number;
  /** By worker count. */
  readonly loops: Record<number, LoopResult>;
  /** Handlings per second across {@link processes} worker processes of {@link workersEach} workers. */
  readonly acrossPerSecond: number;
  /** Each round's handlings per second across processes, in the order of the rounds. */
  readonly acrossRounds: readonly number[];
  /** From an add to its handler's start, with one worker idle in the queue's own wait. */
  readonly idle: Latency;
}

/** Every contender, and the physical limit of one statement per job. */
export interface PostgresRun {
  readonly queues: Record<string, PostgresResult>;
  /** Single-row `UPDATE … RETURNING` per second from this process, as many connections as 16 workers use. */
  readonly updatesPerSecond: number;
}

/** Ours as a user runs it for throughput: its buffer of leases, and the controller loop finishing in the background. */
export const controllerContender = `PostgresWorkQueue, prefetch ${prefetched}, runLeaseWorkers finishAhead ${finishedAhead}`;

/** The contenders, by the name the table shows, each with its kind (what `--contenders` names). */
export const contenders: Record<string, { readonly kind: ContenderKind; make(): Promise<Contender> }> = {
  PostgresWorkQueue: { kind: "ours", make: () => ours() },
  [`PostgresWorkQueue, prefetch ${prefetched}`]: { kind: "ours-prefetch", make: () => ours(prefetched) },
  [controllerContender]: { kind: "ours-loop", make: () => ours(prefetched, "controller") },
  [`${controllerContender}, forget and done apart`]: {
    kind: "ours-loop-apart",
    make: () => ours(prefetched, "controller-apart"),
  },
  "graphile-worker 0.18, batched": { kind: "graphile-batched", make: () => graphileWorker("batched") },
  "graphile-worker 0.18, default": { kind: "graphile-default", make: () => graphileWorker("default") },
  "pg-boss 10 (stately, singletonKey)": { kind: "pg-boss", make: pgBoss },
};

/**
 * What a run measures: which contenders (by kind), which worker counts, whether the run across processes, the
 * cycle and the idle latency, and how many rounds. The default is all of it, three rounds.
 */
export interface PostgresSelection {
  readonly kinds: readonly ContenderKind[];
  readonly workers: readonly number[];
  readonly across: boolean;
  readonly cycle: boolean;
  readonly idle: boolean;
  readonly rounds: number;
}

/**
 * Everything, three rounds: what `npm run bench` measures unless told otherwise — every contender but the
 * controller loop with `forget` and `done` apart, measured only when `--contenders` names it.
 */
export const everything: PostgresSelection = {
  kinds: Object.values(contenders)
    .map((c) => c.kind)
    .filter((kind) => kind !== "ours-loop-apart"),
  workers: workerCounts,
  across: true,
  cycle: true,
  idle: true,
  rounds: 3,
};

/** Moves `queue` to a fresh queue and queues `items` there; not timed. */
async function fill(queue: Contender, items: readonly string[]): Promise<void> {
  await queue.fresh();
  await queue.insert(items);
}

const keys = (round: string, n: number) => Array.from({ length: n }, (_, i) => `namespace-${i % 97}/${round}-${i}`);

function latency(samples: number[]): Latency {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] ?? Number.NaN;
  return { p50: at(0.5), p99: at(0.99), samples: sorted.length };
}

/** `get → done → add` of the same item, one call at a time, with {@link cycleDepth} items queued. */
async function cycle(queue: Contender, round: string): Promise<number> {
  const get = queue.get;
  if (get === undefined) return Number.NaN;
  await fill(queue, keys(round, cycleDepth));
  const start = performance.now();
  for (let i = 0; i < cycles; i++) {
    const got = await get();
    if (got === undefined) throw new Error(`the queue is empty after ${i} cycles of ${cycleDepth} items`);
    await got.finish();
    await queue.add(got.item);
  }
  return cycles / ((performance.now() - start) / 1000); // the next fill leaves the items behind
}

/** One worker-loop round: handlings per second, each wait from asking for an item to its handler's start (ms), statements. */
interface Round {
  readonly perSecond: number;
  readonly waits: readonly number[];
  readonly statementsPerJob: number;
}

/**
 * `workers` workers each asking for the next item, handling it (doing nothing) and finishing it, until every item
 * queued was handled or {@link roundMs} passed; then the workers are stopped. A queue without `next` runs its own
 * worker loop with `workers` workers. The rate is from the first handler's start to the last's,
 * so that a runner's start-up is not counted; the statements are all that the queue sent from the start of the
 * workers to their stop.
 */
async function loop(queue: Contender, round: string, workers: number): Promise<Round> {
  await fill(queue, keys(round, loopItems));
  const starts: number[] = [];
  const waits: number[] = [];
  const allHandled = new AbortController();
  setMaxListeners(workers, allHandled.signal); // each waiting take listens to it
  setTimeout(() => allHandled.abort(), roundMs).unref();
  const sentBefore = statementsSent();
  const next = queue.next;
  if (next === undefined) {
    const stop = await queue.work(() => {
      starts.push(performance.now());
      if (starts.length === loopItems) allHandled.abort();
    }, workers);
    await new Promise<void>((resolve) => allHandled.signal.addEventListener("abort", () => resolve()));
    await stop();
  } else {
    await Promise.all(
      Array.from({ length: workers }, async () => {
        for (;;) {
          const asked = performance.now();
          const got = await next(allHandled.signal);
          if (got === undefined) return;
          starts.push(performance.now());
          waits.push(performance.now() - asked);
          await got.finish();
          if (starts.length === loopItems) allHandled.abort();
        }
      }),
    );
  }
  if (starts.length < 2) throw new Error(`${starts.length} of ${loopItems} items handled in ${roundMs} ms`);
  const handled = starts.length;
  const seconds = ((starts[handled - 1] ?? 0) - (starts[0] ?? 0)) / 1000;
  return { perSecond: (handled - 1) / seconds, waits, statementsPerJob: (statementsSent() - sentBefore) / handled };
}

/**
 * The worker loop across {@link processes} worker processes (bench/worker-process.ts) of {@link workersEach}
 * workers each, the queue's own loop in each: once every process waits on a fresh queue, {@link loopItems} items
 * are queued, and the round ends when all were handled or {@link roundMs} passed. The rate is from the first
 * handler's start to the last's, over every process; statements are not counted (they go out from other processes).
 */
async function across(queue: Contender, round: string): Promise<number> {
  const where = await queue.fresh();
  const script = new URL("./worker-process.js", import.meta.url);
  const children = Array.from({ length: processes }, () =>
    fork(script, [queue.kind, JSON.stringify(where), String(workersEach)], {
      stdio: ["ignore", "inherit", "inherit", "ipc"],
    }),
  );
  const counts = new Map<ChildProcess, number>();
  const starts: number[] = [];
  let allHandled: () => void = () => {};
  const handled = new Promise<void>((resolve) => {
    allHandled = resolve;
  });
  const ended = children.map(
    (child) =>
      new Promise<void>((resolve, reject) => {
        child.on("message", (message: { ready?: true; started?: number; starts?: number[] }) => {
          if (message.started !== undefined) counts.set(child, message.started);
          if ([...counts.values()].reduce((a, b) => a + b, 0) >= loopItems) allHandled();
          if (message.starts !== undefined) starts.push(...message.starts);
        });
        child.on("exit", (code) =>
          code === 0 ? resolve() : reject(new Error(`a worker process of ${queue.kind} exited with ${code}`)),
        );
      }),
  );
  try {
    await Promise.all(children.map((child) => once(child, "message")));
    await queue.insert(keys(round, loopItems));
    await Promise.race([handled, new Promise((resolve) => setTimeout(resolve, roundMs)), ...ended]);
  } finally {
    for (const child of children) if (child.connected) child.send("stop");
    await Promise.all(ended);
  }
  if (starts.length < 2) throw new Error(`${starts.length} of ${loopItems} items handled across processes`);
  return (starts.length - 1) / ((Math.max(...starts) - Math.min(...starts)) / 1000);
}

/** One add at a time to an idle worker waiting in the queue's own loop: from the add to its handler's start. */
async function idle(queue: Contender, round: string): Promise<Latency> {
  let started: ((at: number) => void) | undefined;
  await queue.fresh(); // without the items the last round left
  const stop = await queue.work(() => started?.(performance.now()), 1);
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
 * The contenders of `selection` on the same database, round by round in turn so that drift on a shared machine
 * touches them alike, each round starting with the next contender; each rate is the median of the rounds, each latency over the samples of all of them, and every
 * round's rate is kept (`rounds`), so that two contenders' rates can be compared round by round. `progress` is told
 * what runs.
 */
export async function measurePostgres(
  progress: (text: string) => void,
  selection: PostgresSelection = everything,
): Promise<PostgresRun> {
  const { rounds } = selection;
  progress("PostgreSQL: single-row UPDATE … RETURNING, the physical limit");
  const limit = await updatesPerSecond();
  const queues: Record<string, Contender> = {};
  try {
    for (const [name, { kind, make }] of Object.entries(contenders))
      if (selection.kinds.includes(kind)) queues[name] = await make();
    const names = Object.keys(queues);
    const cyclesOf = Object.fromEntries(names.map((name) => [name, [] as number[]]));
    const acrossOf = Object.fromEntries(names.map((name) => [name, [] as number[]]));
    const loopsOf = Object.fromEntries(
      names.map((name) => [name, Object.fromEntries(selection.workers.map((w) => [w, [] as Round[]]))]),
    );
    for (let r = 1; r <= rounds; r++) {
      // Each round starts with the next contender, so that none always runs first.
      const entries = Object.entries(queues);
      const turn = [...entries.slice((r - 1) % entries.length), ...entries.slice(0, (r - 1) % entries.length)];
      for (const [name, queue] of turn) {
        if (selection.cycle) {
          progress(`PostgreSQL: ${name}, cycle (round ${r} of ${rounds})`);
          cyclesOf[name]?.push(await cycle(queue, `cycle-${r}`));
        }
        for (const workers of selection.workers) {
          progress(`PostgreSQL: ${name}, ${workers} workers (round ${r} of ${rounds})`);
          loopsOf[name]?.[workers]?.push(await loop(queue, `loop-${r}-${workers}`, workers));
        }
        if (selection.across) {
          progress(`PostgreSQL: ${name}, ${processes} processes × ${workersEach} workers (round ${r} of ${rounds})`);
          acrossOf[name]?.push(await across(queue, `across-${r}`));
        }
      }
    }
    const results: Record<string, PostgresResult> = {};
    for (const [name, queue] of Object.entries(queues)) {
      if (selection.idle) progress(`PostgreSQL: ${name}, idle latency`);
      const loops: Record<number, LoopResult> = {};
      for (const workers of selection.workers) {
        const all = loopsOf[name]?.[workers] ?? [];
        loops[workers] = {
          perSecond: median(all.map((l) => l.perSecond)),
          rounds: all.map((l) => l.perSecond),
          askToStart: latency(all.flatMap((l) => l.waits)),
          statementsPerJob: median(all.map((l) => l.statementsPerJob)),
        };
      }
      results[name] = {
        cyclesPerSecond: median(cyclesOf[name] ?? []),
        loops,
        acrossPerSecond: median(acrossOf[name] ?? []),
        acrossRounds: acrossOf[name] ?? [],
        idle: selection.idle ? await idle(queue, "idle") : latency([]),
      };
    }
    return { queues: results, updatesPerSecond: limit };
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
