/**
 * Bad input to `PostgresWorkQueue`'s calls (docs/spec.md §20.1), on the server: each value is refused with a
 * `TypeError` or `RangeError` that names it, and the queue is unchanged. The constructor's options are checked
 * without a database, in options.test.ts.
 */
import { expect, test } from "vitest";
import { PostgresWorkQueue } from "../../../src/postgres/index.js";
import { freshName, freshSchema } from "./database.js";

const { pool, schema } = freshSchema("input");

const lease = "Expected `lease` to be a lease that get or take answered, { item, token }, got";

test.each([
  ["null", null, `${lease} \`null\``],
  ["a string", "a", `${lease} \`"a"\` (string)`],
  ["an item that is not a string", { item: 1, token: 1 }, lease],
  ["a negative token", { item: "a", token: -1 }, lease],
  ["a token that is not an integer", { item: "a", token: 1.5 }, lease],
  ["a token past the safe integers", { item: "a", token: 2 ** 53 }, lease],
  ["a function with an item and a token", Object.assign(() => "a", { item: "a", token: 1 }), lease],
])("done, retry, forget, extend and finish refuse %s as a lease, and change nothing", async (_name, given, message) => {
  const queue = new PostgresWorkQueue({ pool, schema, name: freshName(), maxRetries: 3 });
  await queue.add("a");
  for (const verb of ["done", "retry", "forget", "extend", "finish"] as const) {
    await expect(queue[verb](given as never)).rejects.toThrow(new TypeError(message).message);
    await expect(queue[verb](given as never)).rejects.toBeInstanceOf(TypeError);
  }
  expect([await queue.size(), await queue.inFlight(), await queue.failures("a")]).toEqual([1, 0, 0]);
});

test("every verb that takes an item refuses one that is not a string, and addAfter a delay that is not finite", async () => {
  const queue = new PostgresWorkQueue({ pool, schema, name: freshName(), maxRetries: 3 });
  const item = "Expected `item` to be a string, got `undefined` (undefined)";
  await expect(queue.add(undefined as never)).rejects.toThrow(new TypeError(item));
  await expect(queue.addAfter(undefined as never, 1)).rejects.toThrow(new TypeError(item));
  await expect(queue.failures(undefined as never)).rejects.toThrow(new TypeError(item));
  await expect(queue.addAfter("a", "1" as never)).rejects.toThrow(
    new TypeError('Expected `delayMs` to be a number, got `"1"` (string)'),
  );
  await expect(queue.addAfter("a", Number.POSITIVE_INFINITY)).rejects.toThrow(
    new RangeError("Expected `delayMs` to be a finite number, got `Infinity` (number)"),
  );
  await expect(queue.take({ signal: "stop" } as never)).rejects.toThrow(TypeError);
  await expect(queue.shutDownWithDrain({ signal: 1 } as never)).rejects.toThrow(TypeError);
  expect([await queue.size(), await queue.waiting(), await queue.shuttingDown()]).toEqual([0, 0, false]);
});

test("a lease of an item never handed out carries token 0, and a done of it is accepted and changes nothing", async () => {
  const queue = new PostgresWorkQueue({ pool, schema, name: freshName(), maxRetries: 3 });
  await queue.add("a");
  await queue.done({ item: "a", token: 0, expiresAt: 0 });
  expect([await queue.size(), await queue.inFlight()]).toEqual([1, 0]);
  const got = await queue.get();
  expect(got?.item).toBe("a");
  await expect(queue.done({ item: "a", token: 0, expiresAt: 0 })).rejects.toThrow(
    'done("a") refused: the lease with token 0 expired, was done or was superseded; nothing changed',
  );
});
