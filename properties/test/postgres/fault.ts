/**
 * One run of the multi-process fault test (docs/spec.md §20.7): worker processes (fixtures/fault-worker.mjs) on one
 * PostgreSQL queue, this process adding keys (again while they are in flight), handlers that fail at random or
 * outlive their lease, workers killed with SIGKILL in the middle of their work and replaced, and a live worker's
 * connection terminated. Every call and answer is logged with its token, times and process, and checkHistory
 * (properties/history/) judges the history; when it finds a violation, the history is written as a timeline page
 * (`page`), one lane per process. Bounded: it stops by itself.
 *
 * One case is not left to chance: a holder that takes a lease, adds its item again while it is in flight, and dies
 * (§20.3: the expiry must requeue the item, which serves that add). A random kill lands in such an add too rarely,
 * and on a loaded machine not at all; so every run stages it (see `abandon`).
 */
import { type ChildProcess, fork } from "node:child_process";
import { appendFileSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import type pg from "pg";
import { PostgresWorkQueue } from "../../../src/postgres/index.js";
import { checkHistory, type HistoryEvent, type HistoryViolation } from "../../history/check-history.js";
import { historyTimeline } from "../../report/timeline.js";
import { databaseUrl, freshName } from "./database.js";

const worker = new URL("../fixtures/fault-worker.mjs", import.meta.url).pathname;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The maxRetries of the queue under test. */
const maxRetries = 3;

/** What a run did, and what the checker found. */
export interface FaultRun {
  readonly violations: readonly HistoryViolation[];
  readonly figures: {
    readonly processes: number;
    readonly keys: number;
    readonly adds: number;
    readonly kills: number;
    readonly cuts: number;
    readonly leases: number;
    readonly handlings: number;
    readonly violations: number;
  };
  /** Queued and in flight once the run ended. */
  readonly left: readonly [number, number];
  /** The item of the staged holder that added it again while in flight and died. */
  readonly abandoned: string;
  /** When a rule broke: the history drawn as a timeline page (historyTimeline), written to this file. */
  readonly page: string | undefined;
}

/** How long the staged holder's lease lasts: long enough that its add lands while it is live on a loaded machine. */
const abandonedLeaseMs = 2_000;

/**
 * Stages a holder that dies: takes a lease (whichever item comes), adds that item again while it is in flight, logs
 * both as a worker does, and never calls `done`, so the lease expires. Resolves with the item.
 *
 * @throws Error saying the scenario never arose, when no lease comes within 10 s.
 */
async function abandon(pool: pg.Pool, schema: string, name: string, log: string): Promise<string> {
  const holder = new PostgresWorkQueue({ pool, schema, name, maxRetries, leaseMs: abandonedLeaseMs });
  try {
    const startedAt = Date.now();
    const lease = await holder.take({ signal: AbortSignal.timeout(10_000) }).catch(() => undefined);
    if (lease === undefined) {
      throw new Error("the fault run's staged holder got no lease within 10 s: an add while in flight never arose");
    }
    const { item: key, token, expiresAt } = lease;
    const logged = { op: "lease", key, token, expiresAt, startedAt, endedAt: Date.now(), process: "holder" };
    appendFileSync(log, `${JSON.stringify(logged)}\n`);
    const addedAt = Date.now();
    await holder.add(key);
    const add = { op: "add", key, startedAt: addedAt, endedAt: Date.now(), process: "holder" };
    appendFileSync(log, `${JSON.stringify(add)}\n`);
    return key;
  } finally {
    await holder.close();
  }
}

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

/**
 * Runs four workers at a time on a fresh queue of `schema` (migrated, possibly with a defect) and checks the history;
 * the workers' queues buffer `prefetch` leases (§20.18), none by default; with `finish`, a worker's success is one
 * `finish` (§20.12), logged as its forget and its done.
 */
export async function faultRun(pool: pg.Pool, schema: string, prefetch = 0, finish = false): Promise<FaultRun> {
  const name = freshName();
  const log = join(mkdtempSync(join(tmpdir(), "workqueue-fault-")), "history.jsonl");
  const queue = new PostgresWorkQueue({ pool, schema, name, maxRetries });
  let started = 0;
  const spawn = () =>
    fork(worker, [databaseUrl, schema, name, log, String(++started), String(prefetch), finish ? "finish" : "apart"], {
      stdio: "ignore",
    });
  const workers: ChildProcess[] = Array.from({ length: 4 }, spawn);
  let kills = 0;
  let cuts = 0;
  const killer = setInterval(() => {
    const i = Math.floor(Math.random() * workers.length);
    workers[i]?.kill("SIGKILL");
    workers[i] = spawn();
    kills += 1;
  }, 250);
  const keys = Array.from({ length: 40 }, (_, i) => `ns/key-${i}`);
  let abandoned = "";
  try {
    for (let round = 0; round < 3; round++) {
      if (round === 1) abandoned = await abandon(pool, schema, name, log);
      for (const key of keys.slice(round * 10)) {
        const startedAt = Date.now();
        await queue.add(key);
        const add = { op: "add", key, startedAt, endedAt: Date.now(), process: "producer" };
        appendFileSync(log, `${JSON.stringify(add)}\n`);
        await sleep(20);
      }
      const backends = await pool.query(
        "select pg_terminate_backend(pid) from pg_stat_activity where application_name like 'fault-worker-%' limit 1",
      );
      cuts += backends.rowCount ?? 0;
    }
  } finally {
    clearInterval(killer);
  }
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
  const violations = checkHistory(events, { maxRetries, toleranceMs: 50 });
  const page = violations.length === 0 ? undefined : join(dirname(log), "history.html");
  if (page !== undefined) writeFileSync(page, historyTimeline(events, violations));
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
  return { violations, figures, left: [await queue.size(), await queue.inFlight()], abandoned, page };
}
