import { once } from "node:events";
import { runWorkers, WorkQueue } from "workqueue-spec";

const queue = new WorkQueue<string>({ maxRetries: 3 });

async function reconcile(key: string): Promise<void> {
  // Simulated: the database is not ready the first time. A throw has the key retried.
  if (key === "default/db" && queue.failures(key) === 0) throw new Error("database not ready");
  console.log(`reconciled ${key}`);
}

const workers = runWorkers(queue, reconcile, {
  concurrency: 4,
  onError: (key, error) => console.warn(`${key} failed: ${error}`),
  onGiveUp: (key) => console.error(`gave up on ${key}`),
});
for (const key of ["default/web", "default/db", "default/web"]) queue.add(key); // changes seen by a watch

await once(process, "SIGTERM"); // run until asked to stop
await queue.shutDownWithDrain({ signal: AbortSignal.timeout(10_000) }); // finish what was asked for, in 10 s at most
await workers;
