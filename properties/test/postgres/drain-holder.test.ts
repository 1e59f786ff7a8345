/**
 * A worker that dies holding a lease during a drain loses nothing (docs/spec.md §14.2, §20.10): in the README's
 * pattern — workers loop on `take()` until it answers `undefined`, a producer calls `shutDownWithDrain()` — a holder
 * process is killed with SIGKILL while the drain waits. The surviving workers' takes keep waiting while its lease is
 * live; when it expires, its item is queued again and one of them handles it, once; then their takes answer
 * `undefined` and the drain resolves.
 */
import { fork } from "node:child_process";
import { expect, test } from "vitest";
import { type Lease, PostgresWorkQueue } from "../../../src/postgres/index.js";
import { databaseUrl, freshName, freshSchema } from "./database.js";

const { pool, schema } = freshSchema("drainholder");
const holder = new URL("../fixtures/lease-holder.mjs", import.meta.url).pathname;
const leaseMs = 1_500;

test("a holder killed during a drain: the drain resolves after its lease expires, and its item is handled once by the workers left", async () => {
  const name = freshName();
  const queue = new PostgresWorkQueue({ pool, schema, name, maxRetries: 3, leaseMs, pollMs: 100 });
  await queue.add("held");
  await queue.add("other");
  const child = fork(holder, [databaseUrl, schema, name, String(leaseMs)], {
    stdio: ["ignore", "pipe", "inherit", "ipc"],
  });
  const leased = await new Promise<Lease>((resolve) => {
    let output = "";
    child.stdout?.on("data", (chunk) => {
      output += String(chunk);
      if (output.includes("\n")) resolve(JSON.parse(output) as Lease);
    });
  });
  expect(leased.item).toBe("held");
  const handled: string[] = [];
  const worker = async (): Promise<void> => {
    for (let lease = await queue.take(); lease !== undefined; lease = await queue.take()) {
      handled.push(lease.item);
      await queue.done(lease);
    }
  };
  const workers = [worker(), worker()];
  while (handled.length === 0) await new Promise((resolve) => setTimeout(resolve, 10)); // "other" was handled
  const startedAt = Date.now();
  const drained = queue.shutDownWithDrain().then(() => Date.now());
  child.kill("SIGKILL");
  await Promise.all(workers);
  const drainedAt = await drained;
  expect(handled.sort()).toEqual(["held", "other"]);
  expect(drainedAt).toBeGreaterThanOrEqual(leased.expiresAt - 100); // not before the dead holder's lease expired
  expect([await queue.size(), await queue.inFlight(), await queue.waiting()]).toEqual([0, 0, 0]);
  console.log(`drain with a killed holder: resolved ${drainedAt - startedAt} ms after it was called`);
  await queue.close();
}, 30_000);
