/**
 * graphile-worker 0.18 (a dev dependency, for this benchmark only) as a {@link Contender}, with the keyed semantics
 * closest to ours: the item is the job's `jobKey` with `jobKeyMode: "preserve_run_at"` (an add of a queued key
 * leaves one job), and its `queueName` (a key never runs twice at once, and an add while it runs makes one
 * follow-up job). It hands out work only to its own runner, so it has no `get` and no `next`: the benchmark's
 * worker loop runs its runner with `concurrency` W.
 */
import { Logger, makeWorkerUtils, run, runMigrations } from "graphile-worker";
import { type Contender, databaseUrl, dropSchema, schemaName, type Where } from "./contenders.js";

/** The two configurations: its default, and batched as its performance guide recommends for throughput. */
export type GraphileMode = "default" | "batched";

/** Silences its logging. */
const logger = new Logger(() => () => {});

/**
 * graphile-worker in a schema of its own. `batched`: `localQueue: { size: 500 }` (one statement locks up to 500
 * jobs into a local buffer that serves the workers) and `completeJobBatchDelay: 0` (completions of one tick go out
 * as one statement).
 */
export async function graphileWorker(mode: GraphileMode): Promise<Contender> {
  const schema = schemaName(`graphile_${mode}`);
  await runMigrations({ connectionString: databaseUrl, schema, logger });
  const utils = await makeWorkerUtils({ connectionString: databaseUrl, schema, logger, maxPoolSize: 4 });
  // Each round's jobs have a task name of their own, which only its runners serve: the jobs a round cut short by
  // its time limit left queued are never handled by a later round, whose counts would include them.
  let rounds = 0;
  const task = () => `bench${rounds}`;
  const keyed = (item: string) => ({ jobKey: item, queueName: item });
  return {
    kind: `graphile-${mode}`,
    async add(item) {
      await utils.addJob(task(), { item }, { ...keyed(item), jobKeyMode: "preserve_run_at" });
    },
    async fresh() {
      rounds += 1;
      return { schema, name: task() };
    },
    async insert(items) {
      for (let i = 0; i < items.length; i += 500) {
        const specs = items
          .slice(i, i + 500)
          .map((item) => ({ identifier: task(), payload: { item }, ...keyed(item) }));
        await utils.addJobs(specs, true); // true: preserve_run_at
      }
    },
    work: (handler, workers) => graphileAt(mode, { schema, name: task() }, handler, workers),
    async close() {
      await utils.release();
      await dropSchema(schema);
    },
  };
}

/** graphile-worker's runner with `concurrency` `workers` for the round's task, in this process or a worker process. */
export async function graphileAt(
  mode: GraphileMode,
  where: Where,
  handler: (item: string) => void,
  workers: number,
): Promise<() => Promise<void>> {
  const runner = await run({
    connectionString: databaseUrl,
    schema: where.schema,
    logger,
    concurrency: workers,
    maxPoolSize: workers + 2, // its documentation's advice: concurrency + 2
    noHandleSignals: true,
    taskList: { [where.name]: async (payload) => handler((payload as { item: string }).item) },
    ...(mode === "batched" ? { preset: { worker: { localQueue: { size: 500 }, completeJobBatchDelay: 0 } } } : {}),
  });
  return () => runner.stop();
}
