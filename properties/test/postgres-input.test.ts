/**
 * Bad input to `PostgresWorkQueue` (docs/spec.md §20.1): each value is refused with a `TypeError` or `RangeError`
 * that names it, before the database is asked, and the queue is unchanged; the defaults are the documented ones.
 */
import { expect, test } from "vitest";
import { PostgresWorkQueue, type PostgresWorkQueueOptions } from "../../src/postgres/index.js";
import { freshName, freshSchema } from "./postgres/database.js";

const { pool, schema } = freshSchema("input");

const options = (extra: Record<string, unknown>): PostgresWorkQueueOptions =>
  ({ pool, schema, name: "q", maxRetries: 1, ...extra }) as PostgresWorkQueueOptions;

test.each([
  [
    "options",
    undefined,
    TypeError,
    "Expected `options` to be an object such as { pool, name: 'pods', maxRetries: 5 }, got `undefined`",
  ],
  [
    "options",
    null,
    TypeError,
    "Expected `options` to be an object such as { pool, name: 'pods', maxRetries: 5 }, got `null`",
  ],
  ["pool", options({ pool: { query() {} } }), TypeError, "Expected `pool` to be a pg Pool"],
  ["name", options({ name: 7 }), TypeError, "Expected `name` to be a non-empty string, got `7` (number)"],
  ["name", options({ name: "" }), TypeError, 'Expected `name` to be a non-empty string, got `""` (string)'],
  ["schema", options({ schema: "1abc" }), TypeError, "Expected `schema` to be a lower-case SQL identifier"],
  [
    "maxRetries",
    options({ maxRetries: 1.5 }),
    RangeError,
    "Expected `maxRetries` to be a non-negative integer or Infinity",
  ],
  [
    "leaseMs",
    options({ leaseMs: 0 }),
    RangeError,
    "Expected `leaseMs` to be a positive finite number of milliseconds, got `0` (number)",
  ],
  [
    "leaseMs",
    options({ leaseMs: Number.POSITIVE_INFINITY }),
    RangeError,
    "Expected `leaseMs` to be a positive finite number of milliseconds, got `Infinity` (number)",
  ],
  [
    "leaseMs",
    options({ leaseMs: "5" }),
    RangeError,
    'Expected `leaseMs` to be a positive finite number of milliseconds, got `"5"` (string)',
  ],
  [
    "pollMs",
    options({ pollMs: -1 }),
    RangeError,
    "Expected `pollMs` to be a positive finite number of milliseconds, got `-1` (number)",
  ],
  ["clock", options({ clock: { now: () => 0 } }), TypeError, "Expected `clock` to be a Clock"],
  [
    "backoff",
    options({ backoff: null }),
    TypeError,
    "Expected `backoff` to be undefined or an object such as { baseMs: 5, maxMs: 1000 }, got `null`",
  ],
  [
    "backoff",
    options({ backoff: 5 }),
    TypeError,
    "Expected `backoff` to be undefined or an object such as { baseMs: 5, maxMs: 1000 }, got `5` (number)",
  ],
  [
    "backoff.baseMs",
    options({ backoff: { baseMs: Number.NaN, maxMs: 1 } }),
    RangeError,
    "Expected `backoff.baseMs` to be a non-negative finite number of milliseconds, got `NaN` (number)",
  ],
  [
    "backoff.maxMs",
    options({ backoff: { baseMs: 0, maxMs: -1 } }),
    RangeError,
    "Expected `backoff.maxMs` to be a non-negative finite number of milliseconds, got `-1` (number)",
  ],
])("the constructor refuses a bad %s (case %#), naming it", (_name, given, kind, message) => {
  const make = () => new PostgresWorkQueue(given as PostgresWorkQueueOptions);
  expect(make).toThrow(kind);
  expect(make).toThrow(message);
});

test("the constructor's defaults: schema workqueue, leases of 30 s; zero is a valid backoff", () => {
  const queue = new PostgresWorkQueue({ pool, name: "q", maxRetries: Number.POSITIVE_INFINITY });
  expect([queue.name, queue.maxRetries, queue.leaseMs]).toEqual(["q", Number.POSITIVE_INFINITY, 30_000]);
  expect(new PostgresWorkQueue(options({ backoff: { baseMs: 0, maxMs: 0 }, leaseMs: 0.5 })).leaseMs).toBe(0.5);
});

const lease = "Expected `lease` to be a lease that get or take answered, { item, token }, got";

test.each([
  ["null", null, `${lease} \`null\``],
  ["a string", "a", `${lease} \`"a"\` (string)`],
  ["an item that is not a string", { item: 1, token: 1 }, lease],
  ["a negative token", { item: "a", token: -1 }, lease],
  ["a token that is not an integer", { item: "a", token: 1.5 }, lease],
  ["a token past the safe integers", { item: "a", token: 2 ** 53 }, lease],
])("done, retry, forget and extend refuse %s as a lease, and change nothing", async (_name, given, message) => {
  const queue = new PostgresWorkQueue({ pool, schema, name: freshName(), maxRetries: 3 });
  await queue.add("a");
  for (const verb of ["done", "retry", "forget", "extend"] as const) {
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
    'done("a") refused: the lease with token 0 expired or was superseded; nothing changed',
  );
});
