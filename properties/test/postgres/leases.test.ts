/**
 * Leases on the machine's real PostgreSQL against `LeaseModel` (docs/spec.md §20), in a schema of this suite's own;
 * see properties/test/postgres/leases.ts for the sequences.
 */
import * as fc from "fast-check";
import { assert, expect, test } from "vitest";
import { checkHistory } from "../../history/check-history.js";
import { freshSchema } from "./database.js";
import { expiryHistory } from "./expiry-history.js";
import { checkLeases } from "./leases.js";

const { pool, schema } = freshSchema("leases");

test("leases, expiry, extension and stale tokens on PostgreSQL answer as LeaseModel does after every call", async () => {
  const details = await checkLeases(pool, schema, 60);
  if (details.failed)
    assert.fail(
      `${fc.defaultReportMessage(details)}\nReplay: WORKQUEUE_REPLAY=${details.seed},${details.counterexamplePath}`,
    );
  // fast-check's time limit ends the runs without failing: a suite cut short would pass having checked less.
  expect(details.interrupted, `only ${details.numRuns} of 60 runs finished within the time limit`).toBe(false);
}, 300_000); // 60 runs take about 20 s on a loaded machine; fast-check stops them at 120 s, which fails here

test("two holders die: their expired leases' items are handled again, the one added while in flight too, and checkHistory finds no broken rule", async () => {
  const { events, handled } = await expiryHistory(pool, schema);
  expect(handled).toEqual(["a", "b"]);
  expect(checkHistory(events, { maxRetries: 3, toleranceMs: 0 })).toEqual([]);
});
