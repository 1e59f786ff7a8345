/**
 * A `done` settles first when its item fell due while in flight (docs/spec.md §17.5, §6.2, §20.6): the item was
 * dirty from its due time on, so the `done` queues it again, at the `done`'s time. Only a `done` that queues nothing
 * may skip the settling. Calls are the schema's functions with the time given, as a virtual clock gives it.
 */
import { expect, test } from "vitest";
import { freshName, freshSchema } from "./database.js";

const { pool, schema } = freshSchema("donedue");

test("a done of a lease whose item fell due while in flight queues it again at the done, behind a lease that expired before", async () => {
  const q = freshName();
  const call = async (sql: string, args: unknown[]) =>
    (await pool.query(`select * from "${schema}".${sql}`, args)).rows as Record<string, unknown>[];
  await call("add($1, 'b', 0)", [q]);
  const [b] = await call("get($1, 0, 100)", [q]); // b's lease expires at 100
  await call("add($1, 'c', 0)", [q]);
  await call("get($1, 0, 20)", [q]); // c's lease expires at 20, and is never done
  await call("add_after($1, 'b', 0, 10)", [q]); // b is in flight and clean: it waits until 10, then is dirty
  const [done] = await call("done($1, 'b', $2, 30) answer", [q, b?.token]);
  expect(done?.answer).toBe("ok");
  // At 10 b fell due (dirty), at 20 c's lease expired (c queued), at 30 b's done queued b again: c first.
  const order = await call("get_many($1, 30, 100, 2)", [q]);
  expect(order.map((row) => [row.item, row.queued_for_ms])).toEqual([
    ["c", 10],
    ["b", 0],
  ]);
});
