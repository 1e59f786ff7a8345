/**
 * A history of the multi-process kind the fault test judges (docs/spec.md §20.7), with a violation built on
 * purpose, drawn as a timeline page (properties/report/timeline.ts) and rendered in headless Chromium. Two worker
 * processes (fixtures/told-worker.mjs) and this one, the producer, share a PostgreSQL queue whose schema has a
 * classic mistake: an add while in flight queues the item again instead of marking it dirty. The calls are made in
 * a fixed order, on a virtual clock every process is told, so the run is the same on any machine: worker 2 is
 * handed pod-1 while worker 1's lease of it is live, and worker 1's late calls are refused. `checkHistory` names
 * "two live leases"; the page shows the lanes, the leases as spans with their tokens, the two hand-outs outlined,
 * the rule, and the command that runs the test again. `WORKQUEUE_SCREENSHOTS=docs/images` makes the README's
 * screenshot.
 */
import { type ChildProcess, fork } from "node:child_process";
import { join } from "node:path";
import { afterAll, expect, test } from "vitest";
import { VirtualClock } from "../../../src/index.js";
import { PostgresWorkQueue } from "../../../src/postgres/index.js";
import { migration } from "../../../src/postgres/schema.js";
import { checkHistory, type HistoryEvent } from "../../history/check-history.js";
import { historyTimeline } from "../../report/timeline.js";
import { screenshots, useBrowser } from "../reports/browser.js";
import { applyDefect, missingEdits, type PostgresDefect } from "../wrong/postgres.js";
import { databaseUrl, freshName, freshSchema } from "./database.js";

/** The mistake: `enter` of an item in flight marks it dirty and then queues it too, instead of returning. */
const addQueuesWhileInFlight: PostgresDefect = {
  name: "an add while in flight queues the item again",
  from: "dirty = true where queue = p_queue and item = p_item;\n    return not r.dirty;",
  to: "dirty = true where queue = p_queue and item = p_item;",
  suite: "concurrent gets",
  rule: "two live leases",
};

const { pool, schema } = freshSchema("historytimeline", (sql) => applyDefect(addQueuesWhileInFlight, sql));
const { rendered } = useBrowser();
const name = freshName();
const leaseMs = 80;
const workers = new Map<string, ChildProcess>();
afterAll(() => {
  for (const worker of workers.values()) worker.kill("SIGKILL");
});

/** How long each call takes on the virtual clock, and the pause between two calls. */
const callMs = 4;
const pauseMs = 2;

test("the defect applies: the reference migration holds the text it edits", () => {
  expect(missingEdits(addQueuesWhileInFlight, migration("s"))).toEqual([]);
});

test("a multi-process history where pod-1 is handed to two live leases renders with a lane per process, the leases as spans with their tokens, the two hand-outs outlined, the rule and the command", async () => {
  const clock = new VirtualClock();
  const producer = new PostgresWorkQueue({ pool, schema, name, maxRetries: 3, leaseMs, clock });
  for (const worker of ["worker 1", "worker 2"]) {
    workers.set(
      worker,
      fork(new URL("../fixtures/told-worker.mjs", import.meta.url).pathname, [
        databaseUrl,
        schema,
        name,
        String(leaseMs),
      ]),
    );
  }
  const events: HistoryEvent[] = [];
  let now = 0;
  /** Makes one call at the next time of the virtual clock, and logs it as the fault test's processes do. */
  const call = async (process: string, op: "add" | "get" | "forget" | "done", key?: string) => {
    const startedAt = now;
    now += callMs;
    const endedAt = now;
    now += pauseMs;
    if (process === "producer") {
      clock.advance(startedAt - clock.now());
      await producer.add(key as string);
      events.push({ op: "add", key: key as string, startedAt, endedAt, process });
      return;
    }
    const worker = workers.get(process) as ChildProcess;
    const answer = await new Promise<{ key?: string; token?: number; expiresAt?: number; outcome?: "ok" | "stale" }>(
      (resolve) => {
        worker.once("message", resolve);
        worker.send({ op, key, now: startedAt });
      },
    );
    if (op === "get") {
      const { key: leased, token, expiresAt } = answer as { key: string; token: number; expiresAt: number };
      events.push({ op: "lease", key: leased, token, expiresAt, startedAt, endedAt, process });
    } else {
      events.push({
        op: op as "forget" | "done",
        key: key as string,
        token: tokenOf(process, key as string),
        outcome: answer.outcome,
        startedAt,
        endedAt,
        process,
      });
    }
  };
  /** The token of the last lease of `key` that `process` was handed. */
  const tokenOf = (process: string, key: string) =>
    events
      .flatMap((e) => (e.op === "lease" && e.process === process && e.key === key ? [e.token] : []))
      .at(-1) as number;
  try {
    await call("producer", "add", "pod-1");
    await call("producer", "add", "pod-2");
    await call("worker 1", "get"); // pod-1
    await call("worker 2", "get"); // pod-2
    await call("producer", "add", "pod-1"); // while in flight: the defect queues it again
    await call("worker 2", "forget", "pod-2");
    await call("worker 2", "done", "pod-2");
    await call("worker 2", "get"); // pod-1 again, while worker 1's lease of it is live
    await call("worker 1", "forget", "pod-1"); // refused: a later lease was handed out
    await call("worker 1", "done", "pod-1");
    await call("worker 2", "forget", "pod-1");
    await call("worker 2", "done", "pod-1");
  } finally {
    for (const worker of workers.values()) worker.send({ op: "exit" });
    await producer.close();
  }
  const leases = events.flatMap((e) => (e.op === "lease" ? [e] : []));
  expect(leases.map((e) => [e.process, e.key])).toEqual([
    ["worker 1", "pod-1"],
    ["worker 2", "pod-2"],
    ["worker 2", "pod-1"],
  ]);
  const [first, , second] = leases as [
    HistoryEvent & { token: number; expiresAt: number },
    unknown,
    HistoryEvent & { token: number },
  ];
  expect(
    events.flatMap((e) => (e.process === "worker 1" && (e.op === "forget" || e.op === "done") ? [e.outcome] : [])),
  ).toEqual(["stale", "stale"]);
  const violations = checkHistory(events, { maxRetries: 3, toleranceMs: 0 });
  expect(violations.map((v) => [v.rule, v.message, v.events])).toEqual([
    [
      "two live leases",
      `pod-1: token ${second.token} was handed out at ${second.endedAt}, while token ${first.token} was live until ${first.expiresAt}`,
      [first, second],
    ],
  ]);
  const replay = "npx vitest run --config .config/vitest.config.ts properties/test/postgres/history-timeline.test.ts";
  const html = historyTimeline(events, violations, { replay });
  expect(html).not.toMatch(/<script[^>]*\ssrc=|<link|<img|<iframe|@import|url\(|https?:\/\//i);
  const page = await rendered(html, join(screenshots, "timeline-fault-history.png"));
  expect(page.requests).toEqual([]);
  expect(page.title).toBe(`A history of ${events.length} calls: 1 violation`);
  expect(page.lanes).toEqual(["producer", "worker 1", "worker 2"]);
  expect(page.bars).toBe(events.length + leases.length); // every call, and a span per lease
  expect(page.outlined).toEqual([
    `lease pod-1 #${first.token}`,
    `lease pod-1 #${first.token} until ${first.expiresAt}`,
    `lease pod-1 #${second.token}`,
    `lease pod-1 #${second.token} until ${events.at(-1)?.startedAt}`,
  ]);
  expect(page.outlineColour).toBe("rgb(198, 40, 40)");
  expect(page.rules).toEqual([`two live leases: ${violations[0]?.message}`]);
  expect([page.replay, page.copyButtons]).toEqual([replay, 1]);
}, 120_000);
