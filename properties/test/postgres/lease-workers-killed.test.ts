/**
 * The controller loop on PostgreSQL loses nothing when a worker process dies (docs/spec.md §20.7, §20.12): a process
 * running `runLeaseWorkers` is killed with SIGKILL while its handler runs (its heartbeats had kept the lease live);
 * the lease expires, a worker of this process handles the key once, under a greater token, and the drain resolves.
 * Apart from lease-workers.test.ts because its worker process runs the built dist/, which mutation testing's
 * sandbox does not have.
 */
import { fork } from "node:child_process";
import { afterAll, expect, test } from "vitest";
import { PostgresWorkQueue, runLeaseWorkers } from "../../../src/postgres/index.js";
import { databaseUrl, freshName, freshSchema } from "./database.js";

const { pool, schema } = freshSchema("leaseworkerkilled");
const queue = new PostgresWorkQueue({ pool, schema, name: freshName(), maxRetries: 3, leaseMs: 1_500, pollMs: 100 });
afterAll(() => queue.close());

test("a worker process killed with SIGKILL mid-handler loses nothing: its lease expires, a worker left handles the key once, and the drain resolves", async () => {
  await queue.add("held");
  const child = fork(
    new URL("../fixtures/lease-worker.mjs", import.meta.url).pathname,
    [databaseUrl, schema, queue.name, String(queue.leaseMs)],
    { stdio: ["ignore", "pipe", "inherit", "ipc"] },
  );
  const started = await new Promise<{ item: string; token: number }>((resolve) => {
    let output = "";
    child.stdout?.on("data", (chunk) => {
      output += String(chunk);
      if (output.includes("\n")) resolve(JSON.parse(output));
    });
  });
  expect(started.item).toBe("held");
  const handled: [string, number][] = [];
  const workers = runLeaseWorkers(queue, (key, { token }) => {
    handled.push([key, token]);
  });
  child.kill("SIGKILL");
  await queue.shutDownWithDrain();
  await workers;
  expect(handled.map(([item]) => item)).toEqual(["held"]);
  expect(handled.every(([, token]) => token > started.token)).toBe(true);
  expect([await queue.size(), await queue.inFlight()]).toEqual([0, 0]);
}, 60_000);
