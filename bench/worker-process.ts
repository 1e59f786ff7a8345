/**
 * A worker process of the PostgreSQL benchmark's run across processes (`across` in bench/postgres.ts): attaches
 * `workers` workers of one contender to the round's queue, says when they wait, reports how many handlers started
 * as they start, and on `stop` stops them and answers every handler's start, in milliseconds since the epoch (so
 * that the parent compares the starts of all its processes).
 *
 * Arguments: the contender's kind, where the round's queue is (JSON), the number of workers.
 */
import { type ContenderKind, oursAt, pgBossAt, prefetched, type Where } from "./contenders.js";
import { graphileAt } from "./graphile.js";

type Attach = (where: Where, handler: (item: string) => void, workers: number) => Promise<() => Promise<void>>;

const attachers: Record<ContenderKind, Attach> = {
  ours: (where, handler, workers) => oursAt(where, handler, workers),
  "ours-prefetch": (where, handler, workers) => oursAt(where, handler, workers, prefetched),
  "ours-loop": (where, handler, workers) => oursAt(where, handler, workers, prefetched, "controller"),
  "ours-loop-apart": (where, handler, workers) => oursAt(where, handler, workers, prefetched, "controller-apart"),
  "graphile-batched": (where, handler, workers) => graphileAt("batched", where, handler, workers),
  "graphile-default": (where, handler, workers) => graphileAt("default", where, handler, workers),
  "pg-boss": pgBossAt,
};

const [kind = "", where = "", workers = ""] = process.argv.slice(2);
const attach = attachers[kind as ContenderKind];
if (attach === undefined)
  throw new Error(`Expected a contender's kind (${Object.keys(attachers).join(", ")}), got ${kind}`);
const send = (message: unknown) => new Promise<void>((resolve) => process.send?.(message, () => resolve()));
const starts: number[] = [];
let reporting = false;
const stop = await attach(
  JSON.parse(where) as Where,
  () => {
    starts.push(performance.timeOrigin + performance.now());
    if (reporting) return;
    reporting = true; // one report per 10 ms at most: the count, not a message per handling
    setTimeout(() => {
      reporting = false;
      void send({ started: starts.length });
    }, 10);
  },
  Number(workers),
);
process.on("message", (message) => {
  if (message !== "stop") return;
  void stop().then(async () => {
    await send({ starts });
    process.disconnect();
  });
});
await send({ ready: true });
