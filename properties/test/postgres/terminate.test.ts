/**
 * Every connection of the queue survives its own death (docs/spec.md §20.8, §20.10): a process with waiting takes,
 * a waiting drain and verbs in flight (properties/test/fixtures/terminated-worker.mjs) while this test terminates
 * every backend of the process's application_name as soon as it appears, for `WORKQUEUE_TERMINATE_MS` (5 s by
 * default; the run is 30 000). The process is alive at the end, every call it made succeeded or rejected
 * with DatabaseUnavailableError, and once the cuts stop its waits end as the rules say.
 */
import { fork } from "node:child_process";
import { expect, test } from "vitest";
import { PostgresWorkQueue } from "../../../src/postgres/index.js";
import { databaseUrl, freshName, freshSchema } from "./database.js";

const { pool, schema } = freshSchema("terminate");
const worker = new URL("../fixtures/terminated-worker.mjs", import.meta.url).pathname;
const duration = Number(process.env.WORKQUEUE_TERMINATE_MS ?? 5_000);

test("a process whose every connection is terminated as soon as it appears stays alive, and each of its calls succeeds or rejects with DatabaseUnavailableError", async () => {
  const name = freshName();
  const application = `terminated-${process.pid}-${name}`;
  // The lease the drain waits for: held by this test, done by the process once the cuts stop.
  const drainQueue = new PostgresWorkQueue({ pool, schema, name: `${name}-drain`, maxRetries: 3, leaseMs: 600_000 });
  await drainQueue.add("held");
  const held = await drainQueue.get();
  const child = fork(worker, [databaseUrl, schema, name, application, JSON.stringify(held)], {
    stdio: ["pipe", "pipe", "pipe", "ipc"],
  });
  let output = "";
  let errors = "";
  child.stdout?.on("data", (chunk) => {
    output += String(chunk);
  });
  child.stderr?.on("data", (chunk) => {
    errors += String(chunk);
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  while (!output.includes("started") && child.exitCode === null) await new Promise((r) => setTimeout(r, 10));
  let terminated = 0;
  const end = Date.now() + duration;
  while (Date.now() < end && child.exitCode === null) {
    const { rows } = await pool.query(
      "select pg_terminate_backend(pid) as cut from pg_stat_activity where application_name = $1",
      [application],
    );
    terminated += rows.filter((row) => row.cut === true).length;
  }
  const aliveAtEnd = child.exitCode === null;
  child.stdin?.write("stop\n");
  const code = await Promise.race([exited, new Promise((r) => setTimeout(() => r("hung"), 20_000))]);
  if (code === "hung") child.kill("SIGKILL");
  const report = JSON.parse(output.split("\n").find((line) => line.startsWith("{")) ?? "null") as {
    succeeded: number;
    unavailable: number;
    others: string[];
    takes: unknown[];
  } | null;
  console.log(`terminate test (${duration} ms): ${terminated} backends terminated, ${JSON.stringify(report)}`);
  expect({ aliveAtEnd, code, errors }).toEqual({ aliveAtEnd: true, code: 0, errors: "" });
  expect(report?.others).toEqual([]);
  expect(report?.takes).toEqual([null, null, null]); // three undefined, as JSON prints them
  expect(terminated).toBeGreaterThan(10);
  expect(report?.unavailable).toBeGreaterThan(0);
  expect(report?.succeeded).toBeGreaterThan(0);
  await drainQueue.close();
}, 120_000);
