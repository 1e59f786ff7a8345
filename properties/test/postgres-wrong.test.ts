/**
 * The wrong PostgreSQL queues of properties/test/wrong/postgres.ts: each is rejected by its suite, naming its rule.
 */
import { expect, test } from "vitest";
import { PostgresWorkQueue } from "../../src/postgres/index.js";
import { migration } from "../../src/postgres/schema.js";
import { checkConformance } from "../engine/conformance.js";
import { stringItems } from "../engine/universes.js";
import { leaseSubject } from "./postgres/adapter.js";
import { concurrentGets } from "./postgres/concurrent.js";
import { freshName, freshSchema } from "./postgres/database.js";
import { checkLeases } from "./postgres/leases.js";
import { seed } from "./settings.js";
import { postgresDefects } from "./wrong/postgres.js";

for (const defect of postgresDefects) {
  const edit = (sql: string) => sql.replaceAll(defect.from, defect.to);
  const { pool, schema } = freshSchema("wrong", edit);

  test(`${defect.name}: rejected by the ${defect.suite}, naming ${defect.rule}`, async () => {
    expect(edit(migration("x")), "the defect applies to the current migration").not.toBe(migration("x"));
    if (defect.suite === "leases") {
      const details = await checkLeases(pool, schema, 200);
      expect(details.failed).toBe(true);
      expect(String(details.errorInstance)).toContain(`${defect.rule}:`);
    } else if (defect.suite === "gate") {
      const report = await checkConformance(
        ({ maxRetries }) => leaseSubject(new PostgresWorkQueue({ pool, schema, name: freshName(), maxRetries })),
        { profile: "contract", seed, items: stringItems, runs: 100 },
      );
      expect(report.verdict).toBe("does not conform");
      expect(report.counterexample?.invariant.rule).toContain(defect.rule);
    } else {
      const { notOnce } = await concurrentGets(schema, 300);
      expect(notOnce.length).toBeGreaterThan(0);
    }
  }, 120_000);
}
