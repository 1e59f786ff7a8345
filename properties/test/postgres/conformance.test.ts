/**
 * `PostgresWorkQueue` on the machine's real PostgreSQL against the model, in both profiles: every run on a queue
 * of its own, in a schema of this suite's own (docs/spec.md §20.1: the rules of §4–§12 hold for string items).
 */
import { test } from "vitest";
import { PostgresWorkQueue } from "../../../src/postgres/index.js";
import type { Profile } from "../../core/commands.js";
import type { SubjectOptions } from "../../core/subject.js";
import { stringItems } from "../../core/universes.js";
import { checkConformance } from "../../sequential/check-conformance.js";
import { expectConforms, runs, seed } from "../settings.js";
import { leaseSubject } from "./adapter.js";
import { freshName, freshSchema } from "./database.js";

const { pool, schema } = freshSchema("conformance");

// Leases last longer than any run, so that the gate's rules apply as they are (the lease suite expires them).
const postgres = ({ maxRetries, clock, backoff }: SubjectOptions) =>
  leaseSubject(new PostgresWorkQueue({ pool, schema, name: freshName(), maxRetries, leaseMs: 1e12, clock, backoff }));

for (const [profile, time] of [
  ["contract", false],
  ["robust", false],
  ["contract", true],
  ["robust", true],
] satisfies [Profile, boolean][]) {
  const title = `${profile} profile${time ? ", with time (delays, backoff)" : ""}: the PostgreSQL queue answers as the model does after every call`;
  test(title, async (ctx) => {
    const report = await checkConformance(postgres, {
      profile,
      time,
      seed,
      shape: "both",
      items: stringItems,
      shutDown: true,
      runs: runs(100),
    });
    expectConforms(report, ctx.task.name);
  }, 300_000);
}
