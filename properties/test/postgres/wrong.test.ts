/**
 * The wrong PostgreSQL queues of properties/test/wrong/postgres.ts: each is rejected by its suite, naming its rule.
 */
import { describe, expect, test } from "vitest";
import { PostgresWorkQueue } from "../../../src/postgres/index.js";
import { migration } from "../../../src/postgres/schema.js";
import { stringItems } from "../../core/universes.js";
import { checkHistory } from "../../history/check-history.js";
import { checkConformance } from "../../sequential/check-conformance.js";
import { seed } from "../settings.js";
import { applyDefect, missingEdits, postgresDefects } from "../wrong/postgres.js";
import { leaseSubject } from "./adapter.js";
import { concurrentGets } from "./concurrent.js";
import { freshName, freshSchema } from "./database.js";
import { expiryHistory } from "./expiry-history.js";
import { checkLeases } from "./leases.js";

for (const defect of postgresDefects) {
  const edit = (sql: string) => applyDefect(defect, sql);
  const { pool, schema } = freshSchema("wrong", edit);

  const rules = [defect.rule, ...(defect.alsoBreaks ?? [])];
  test(`${defect.name}: rejected by the ${defect.suite}, naming ${rules.join(" or ")}`, async () => {
    expect(missingEdits(defect, migration("x")), "the defect applies to the current migration").toEqual([]);
    if (defect.suite === "leases") {
      const details = await checkLeases(pool, schema, 200);
      expect(details.failed, `seed ${details.seed}`).toBe(true);
      // the first rule the failure names, "§20.4" in "AssertionError: §20.4: done after …"
      const named = /§[\d.]+(?=:)/.exec(String(details.errorInstance))?.[0];
      expect(rules, `seed ${details.seed}: ${String(details.errorInstance)}`).toContain(named);
    } else if (defect.suite === "gate") {
      const report = await checkConformance(
        ({ maxRetries }) => leaseSubject(new PostgresWorkQueue({ pool, schema, name: freshName(), maxRetries })),
        // Shrinking bounded by work, not by its time net: a few seconds here, not 120 s on a loaded machine.
        { profile: "contract", seed, items: stringItems, runs: 100, shrinkCalls: 2_000 },
      );
      expect(report.verdict).toBe("does not conform");
      expect(report.counterexample?.invariant.rule).toContain(defect.rule);
    } else {
      // The race inside one get needs two gets to read the same oldest row before either takes it: drawn until it
      // arises, a bounded number of rounds, and then the history must show it.
      let drawn = await concurrentGets(schema, 300);
      for (let round = 1; drawn.notOnce.length === 0 && round < 5; round++) drawn = await concurrentGets(schema, 300);
      const { notOnce, events } = drawn;
      expect(
        notOnce.length,
        "no item was handed out twice in 5 rounds of 300 concurrent gets: the race never arose",
      ).toBeGreaterThan(0);
      // One process read every time, so the history is judged with no tolerance.
      const violations = checkHistory(events, { maxRetries: 3, toleranceMs: 0 });
      expect(violations.map((v) => v.rule)).toContain(defect.rule);
    }
  }, 120_000);
}

describe("an expired lease of an item added while in flight drops it; a clean one is requeued", () => {
  const defect = postgresDefects.find((d) => d.name.startsWith("an expired lease of an item added while in flight"));
  if (defect === undefined) throw new Error("no such defect in properties/test/wrong/postgres.ts");
  const { pool, schema } = freshSchema("wrong", (sql) => applyDefect(defect, sql));
  test('checkHistory names "lost" for each add of the item added while in flight, and only for it: the clean item is handled again', async () => {
    const { events, handled } = await expiryHistory(pool, schema);
    expect(handled).toEqual(["b"]);
    const violations = checkHistory(events, { maxRetries: 3, toleranceMs: 0 });
    expect(violations.map((v) => [v.rule, v.message.split(":")[0]])).toEqual([
      ["lost", "a"],
      ["lost", "a"],
    ]);
  });
});
