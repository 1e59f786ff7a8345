/**
 * The multi-process fault test (docs/spec.md §20.7): worker processes on one PostgreSQL queue, a producer adding
 * keys (again while they are in flight), handlers that fail at random, workers killed with SIGKILL in the middle of
 * their work and replaced, and a live worker's connection terminated. Every call and answer is logged with its
 * token and times; checkHistory (properties/distributed/) must find no violation. Bounded: it stops by itself.
 */
import { type ChildProcess, fork } from "node:child_process";
import { appendFileSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect, test } from "vitest";
import { PostgresWorkQueue } from "../../src/postgres/index.js";
import { checkHistory, type HistoryEvent } from "../distributed/check-history.js";
import { databaseUrl, freshName, freshSchema } from "./postgres/database.js";

const { pool, schema } = freshSchema("fault");
const worker = new URL("./fixtures/fault-worker.mjs", import.meta.url).pathname;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The log's events: a call's two lines (before, answer) merged by id; a line torn by a SIGKILL is left out. */
function readHistory(file: string): { events: HistoryEvent[]; handlings: number } {
  const calls = new Map<string, Record<string, unknown>>();
  const events: Record<string, unknown>[] = [];
  let handlings = 0;
  for (const line of readFileSync(file, "utf8").split("\n")) {
    let record: Record<string, unknown>;
    try {
      record = JSON.parse(line);
    } catch {
      continue;
    }
    if (record.op === "handle") handlings += 1;
    else if (record.id === undefined) events.push(record);
    else if (record.op === undefined) Object.assign(calls.get(record.id as string) ?? {}, record);
    else {
      calls.set(record.id as string, record);
      events.push(record);
    }
  }
  return { events: events as unknown as HistoryEvent[], handlings };
}

test("workers killed mid-handler and cut off from the database lose nothing, and no rule of §20.7 breaks", async () => {
  const name = freshName();
  const log = join(mkdtempSync(join(tmpdir(), "workqueue-fault-")), "history.jsonl");
  const queue = new PostgresWorkQueue({ pool, schema, name, maxRetries: 3 });
  let started = 0;
  const spawn = () => fork(worker, [databaseUrl, schema, name, log, String(++started)], { stdio: "ignore" });
  const workers: ChildProcess[] = Array.from({ length: 4 }, spawn);
  let kills = 0;
  let cuts = 0;
  const killer = setInterval(() => {
    const i = Math.floor(Math.random() * workers.length);
    workers[i]?.kill("SIGKILL");
    workers[i] = spawn();
    kills += 1;
  }, 150);
  const keys = Array.from({ length: 40 }, (_, i) => `ns/key-${i}`);
  for (let round = 0; round < 3; round++) {
    for (const key of keys.slice(round * 10)) {
      const startedAt = Date.now();
      await queue.add(key);
      appendFileSync(log, `${JSON.stringify({ op: "add", key, startedAt, endedAt: Date.now() })}\n`);
      await sleep(20);
    }
    const backends = await pool.query(
      "select pg_terminate_backend(pid) from pg_stat_activity where application_name like 'fault-worker-%' limit 1",
    );
    cuts += backends.rowCount ?? 0;
  }
  clearInterval(killer);
  const deadline = Date.now() + 20_000;
  for (;;) {
    const left = (await queue.size()) + (await queue.inFlight()) + (await queue.waiting());
    if (left === 0 || Date.now() > deadline) break;
    await sleep(100);
  }
  await queue.shutDown();
  await Promise.all(
    workers.map(
      (child) =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve();
          const timer = setTimeout(() => child.kill("SIGKILL"), 5_000);
          child.once("exit", () => {
            clearTimeout(timer);
            resolve();
          });
        }),
    ),
  );
  const { events, handlings } = readHistory(log);
  const violations = checkHistory(events, { maxRetries: 3, toleranceMs: 50 });
  const figures = {
    processes: started,
    keys: keys.length,
    adds: events.filter((e) => e.op === "add").length,
    kills,
    cuts,
    leases: events.filter((e) => e.op === "lease").length,
    handlings,
    violations: violations.length,
  };
  console.log(`fault test: ${JSON.stringify(figures)}`);
  expect(violations).toEqual([]);
  expect([await queue.size(), await queue.inFlight()]).toEqual([0, 0]);
  expect(kills).toBeGreaterThan(5);
}, 60_000);
