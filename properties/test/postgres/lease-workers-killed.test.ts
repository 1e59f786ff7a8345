/**
 * The controller loop on PostgreSQL loses nothing when a worker process dies (docs/spec.md §20.7, §20.12): a process
 * running `runLeaseWorkers` is killed with SIGKILL while its handler runs (its heartbeats had kept the lease live);
 * the lease expires, a worker of this process handles the key once, under a greater token, and the drain resolves;
 * likewise when it dies while a lease finishes in the background (`finishAhead`) before its `done` committed.
 * Apart from lease-workers.test.ts because its worker process runs the built dist/, which mutation testing's
 * sandbox does not have.
 */
import { fork } from "node:child_process";
import { afterEach, expect, test } from "vitest";
import { PostgresWorkQueue, runLeaseWorkers } from "../../../src/postgres/index.js";
import { databaseUrl, freshName, freshSchema } from "./database.js";

const { pool, schema } = freshSchema("leaseworkerkilled");
/** The queues opened, each closed after its test (each holds a connection of the pool's four while it listens). */
const opened: PostgresWorkQueue[] = [];
afterEach(async () => {
  for (const queue of opened.splice(0)) await queue.close();
});

/** A queue of a fresh name in the suite's schema, whose leases last 1.5 s. */
function open(): PostgresWorkQueue {
  const queue = new PostgresWorkQueue({ pool, schema, name: freshName(), maxRetries: 3, leaseMs: 1_500, pollMs: 100 });
  opened.push(queue);
  return queue;
}

/** A worker process (fixtures/lease-worker.mjs) given `args`, once it printed the lease its handler started with. */
async function leaseWorker(args: readonly string[]) {
  const child = fork(new URL("../fixtures/lease-worker.mjs", import.meta.url).pathname, args, {
    stdio: ["ignore", "pipe", "inherit", "ipc"],
  });
  const started = await new Promise<{ item: string; token: number }>((resolve) => {
    let output = "";
    child.stdout?.on("data", (chunk) => {
      output += String(chunk);
      if (output.includes("\n")) resolve(JSON.parse(output));
    });
  });
  return { child, started };
}

test.each([0, 3])(
  "a worker process killed with SIGKILL mid-handler loses nothing: its lease expires, a worker left handles the key once, and the drain resolves (finishAhead %i)",
  async (finishAhead) => {
    const queue = open();
    await queue.add("held");
    const args = [databaseUrl, schema, queue.name, String(queue.leaseMs), "0", String(finishAhead)];
    const { child, started } = await leaseWorker(args);
    expect(started.item).toBe("held");
    const handled: [string, number][] = [];
    const workers = runLeaseWorkers(
      queue,
      (key, { token }) => {
        handled.push([key, token]);
      },
      { finishAhead },
    );
    child.kill("SIGKILL");
    await queue.shutDownWithDrain();
    await workers;
    expect(handled.map(([item]) => item)).toEqual(["held"]);
    expect(handled.every(([, token]) => token > started.token)).toBe(true);
    expect([await queue.size(), await queue.inFlight()]).toEqual([0, 0]);
  },
  60_000,
);

test("a worker process killed with SIGKILL while a lease finishes in the background (finishAhead) loses nothing: the lease stays live until it expires, and a worker left then handles the key once", async () => {
  const queue = open();
  await queue.add("finishing");
  const args = [databaseUrl, schema, queue.name, String(queue.leaseMs), "0", "2", "stall-done"];
  const { child, started } = await leaseWorker(args); // printed when its done was made, which never answers
  expect(started.item).toBe("finishing");
  expect([await queue.size(), await queue.inFlight()]).toEqual([0, 1]); // live while it finishes: nobody else gets it
  expect(await queue.get()).toBeUndefined();
  const handled: [string, number][] = [];
  const workers = runLeaseWorkers(
    queue,
    (key, { token }) => {
      handled.push([key, token]);
    },
    { finishAhead: 2 },
  );
  child.kill("SIGKILL");
  await queue.shutDownWithDrain();
  await workers;
  expect(handled).toEqual([["finishing", expect.any(Number)]]);
  expect(handled.every(([, token]) => token > started.token)).toBe(true);
  expect([await queue.size(), await queue.inFlight()]).toEqual([0, 0]);
}, 60_000);

test("a worker process killed with SIGKILL while it buffers prefetched leases loses nothing: another instance never gets them while they live, and handles each once they expired", async () => {
  const items = ["p1", "p2", "p3", "p4", "p5", "p6"];
  const leaseMs = 6_000; // the child gives its buffer back at half of it: long enough for the checks before the kill
  const name = freshName();
  const other = new PostgresWorkQueue({ pool, schema, name, maxRetries: 3, leaseMs, pollMs: 100 });
  for (const item of items) await other.add(item);
  const { child, started } = await leaseWorker([databaseUrl, schema, name, String(leaseMs), "5"]);
  expect(started.item).toBe("p1"); // and p2–p6 buffered, in the one statement that leased p1
  expect(await other.get()).toBeUndefined();
  expect([await other.size(), await other.inFlight()]).toEqual([0, 6]);
  child.kill("SIGKILL");
  const handled: [string, number][] = [];
  const workers = runLeaseWorkers(other, (key, { token }) => {
    handled.push([key, token]);
  });
  await other.shutDownWithDrain();
  await workers;
  await other.close();
  expect(handled.map(([item]) => item).sort()).toEqual(items);
  expect(handled.every(([, token]) => token > started.token)).toBe(true);
}, 60_000);
