/**
 * The conformance suite of `PostgresWorkQueue` on the machine's real PostgreSQL against the model, in both profiles:
 * every run on a queue of its own, in a schema of the suite's own (docs/spec.md §20.1: the rules of §4–§12 hold for
 * string items). `conformance.test.ts` runs it as the queue is by default, `prefetch.test.ts` with a buffer of
 * prefetched leases (§20.18), which the queue object's views and calls must not let show.
 */
import { test } from "vitest";
import { PostgresWorkQueue, type PostgresWorkQueueOptions } from "../../../src/postgres/index.js";
import type { Profile } from "../../core/commands.js";
import type { SubjectOptions } from "../../core/subject.js";
import { stringItems } from "../../core/universes.js";
import { checkConformance } from "../../sequential/check-conformance.js";
import { expectConforms, replay, runs, seed } from "../settings.js";
import { leaseSubject } from "./adapter.js";
import { freshName, freshSchema } from "./database.js";

// Leases last longer than any run, so that the gate's rules apply as they are (the lease suite expires them). A timed
// run advances its clock by up to 2^40 ms a step, so 1e12 did not: a get then advance(2^40) expired the lease and
// queued the item again (size 1 against the model's 0) — found under load, where more runs ran to that draw.
const leaseMs = 2 ** 62;

/**
 * Registers the four conformance tests (two profiles, without and with time) of a queue made with `extra` options,
 * in a schema named after `prefix`; `what` ends each title.
 */
export function conformanceSuite(prefix: string, what: string, extra: Partial<PostgresWorkQueueOptions> = {}): void {
  const { pool, schema } = freshSchema(prefix);
  const postgres = ({ maxRetries, clock, backoff }: SubjectOptions) =>
    leaseSubject(
      new PostgresWorkQueue({ pool, schema, name: freshName(), maxRetries, leaseMs, clock, backoff, ...extra }),
    );
  for (const [profile, time] of [
    ["contract", false],
    ["robust", false],
    ["contract", true],
    ["robust", true],
  ] satisfies [Profile, boolean][]) {
    const title = `${profile} profile${time ? ", with time (delays, backoff)" : ""}: ${what}`;
    test(title, async (ctx) => {
      const report = await checkConformance(postgres, {
        profile,
        time,
        seed,
        replay, // the token expectConforms prints (WORKQUEUE_REPLAY=… npm test -- -t "<title>")
        shape: "both",
        items: stringItems,
        shutDown: true,
        runs: runs(100),
      });
      expectConforms(report, ctx.task.name);
    }, 300_000);
  }
}
