/**
 * `PostgresWorkQueue` on the machine's real PostgreSQL against the model, in both profiles: every run on a queue
 * of its own, in a schema of this suite's own (docs/spec.md §20.1: the rules of §4–§12 hold for string items).
 */
import { test } from "vitest";
import { PostgresWorkQueue } from "../../src/postgres/index.js";
import type { Profile } from "../engine/commands.js";
import { checkConformance } from "../engine/conformance.js";
import { stringItems } from "../engine/universes.js";
import { leaseSubject } from "./postgres/adapter.js";
import { freshName, freshSchema } from "./postgres/database.js";
import { expectConforms, runs, seed } from "./settings.js";

const { pool, schema } = freshSchema("conformance");

const postgres = (options: { maxRetries: number }) =>
  leaseSubject(
    new PostgresWorkQueue({ pool, schema, name: freshName(), maxRetries: options.maxRetries, leaseMs: 3_600_000 }),
  );

for (const profile of ["contract", "robust"] satisfies Profile[]) {
  test(`${profile} profile: the PostgreSQL queue answers as the model does after every call`, async (ctx) => {
    const report = await checkConformance(postgres, {
      profile,
      seed,
      shape: "both",
      items: stringItems,
      shutDown: true,
      runs: runs(100),
    });
    expectConforms(report, ctx.task.name);
  }, 300_000);
}
