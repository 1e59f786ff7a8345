/**
 * Bad options to `PostgresWorkQueue` and `migrate` (docs/spec.md §20.1, §20.9), and their defaults, without a
 * database: each value is refused with a `TypeError` or `RangeError` that names it, before any statement; the
 * defaults are the documented ones, seen in the statements a recording pool receives. Under Stryker it runs before
 * the suites on the server, so that a mutant of the constructor's checks fails here within milliseconds.
 */
import { expect, test } from "vitest";
import type { MetricsSink } from "../../../src/index.js";
import { migrate, PostgresWorkQueue, type PostgresWorkQueueOptions } from "../../../src/postgres/index.js";

/** A pool that is never asked anything: each check refuses before a statement. */
const pool = {
  query: async () => {
    throw new Error("a statement was sent");
  },
  connect: async () => {
    throw new Error("a connection was asked for");
  },
};
const schema = "input";

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
  [
    "backoff.maxMs",
    options({ backoff: { baseMs: 0, maxMs: Number.POSITIVE_INFINITY } }),
    RangeError,
    "Expected `backoff.maxMs` to be a non-negative finite number of milliseconds, got `Infinity` (number)",
  ],
  [
    "backoff.baseMs",
    options({ backoff: { baseMs: "5", maxMs: 10 } }),
    RangeError,
    'Expected `backoff.baseMs` to be a non-negative finite number of milliseconds, got `"5"` (string)',
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

/** A pool that records each statement and answers it with no rows, or with a shut-down queue's views. */
function recorder() {
  const statements: string[] = [];
  const answer = async (text: string) => {
    statements.push(text);
    const views = { size: 0, in_flight: 0, waiting: 0, shutting_down: true, next_event: null };
    return { rows: text.includes(".views(") ? [views] : [] };
  };
  const client = { query: answer, on: () => client, release: () => undefined };
  return { statements, pool: { query: answer, connect: async () => client } };
}

test("without a schema, migrate, the verbs and a take's LISTEN use the schema workqueue and its channel", async () => {
  const db = recorder();
  await migrate(db.pool);
  expect(db.statements[0]).toContain("hashtext('workqueue-spec migrate workqueue')");
  expect(db.statements[0]).toContain('create schema if not exists "workqueue";');
  const queue = new PostgresWorkQueue({ pool: db.pool, name: "q", maxRetries: 1 });
  await queue.add("a");
  await expect(queue.take()).resolves.toBeUndefined();
  expect(db.statements.slice(1)).toEqual([
    'select * from "workqueue".add($1, $2, $3) changed',
    'listen "workqueue_workqueue"',
    'select * from "workqueue".get($1, $2, $3)',
    'select * from "workqueue".views($1, $2)',
  ]);
});

test.each([
  ["a", true],
  ["_jobs", true],
  ["jobs_2", true],
  ["x".repeat(63), true],
  ["x".repeat(64), false],
  ["2jobs", false],
  ["Jobs", false],
  ["jobs-2", false],
  ["jobs\n", false],
  [" jobs", false],
  ["", false],
])("migrate and the constructor accept %j as a schema: %s", async (name, accepted) => {
  const db = recorder();
  const migrating = migrate(db.pool, { schema: name });
  const making = () => new PostgresWorkQueue({ pool: db.pool, schema: name, name: "q", maxRetries: 1 });
  if (accepted) {
    await migrating;
    expect(db.statements).toHaveLength(1);
    expect(making).not.toThrow();
  } else {
    const message = `Expected \`schema\` to be a lower-case SQL identifier such as workqueue, got \`${JSON.stringify(name)}\` (string)`;
    await expect(migrating).rejects.toThrow(new TypeError(message));
    expect(db.statements).toEqual([]);
    expect(making).toThrow(new TypeError(message));
  }
});

test("migrate and the constructor refuse a schema that is no string, even one that reads as a valid name", async () => {
  const db = recorder();
  const message = "Expected `schema` to be a lower-case SQL identifier such as workqueue, got `jobs` (object)";
  await expect(migrate(db.pool, { schema: ["jobs"] as never })).rejects.toThrow(new TypeError(message));
  expect(db.statements).toEqual([]);
  expect(() => new PostgresWorkQueue({ pool: db.pool, schema: ["jobs"] as never, name: "q", maxRetries: 1 })).toThrow(
    new TypeError(message),
  );
});

test("retry without a backoff asks the database for none, with null as its base and max; with one, its values", async () => {
  const values: unknown[][] = [];
  const answer = async (text: string, given?: unknown[]) => {
    if (text.includes(".retry(")) values.push(given ?? []);
    return { rows: [{ retry: "requeued" }] };
  };
  const pool = {
    query: answer,
    connect: async () => ({ query: answer, on: () => undefined, release: () => undefined }),
  };
  const lease = { item: "a", token: 1, expiresAt: 0 };
  await new PostgresWorkQueue({ pool, name: "q", maxRetries: 3 }).retry(lease);
  await new PostgresWorkQueue({ pool, name: "q", maxRetries: 3, backoff: { baseMs: 5, maxMs: 80 } }).retry(lease);
  expect(values.map((given) => given.slice(-3))).toEqual([
    [3, null, null],
    [3, 5, 80],
  ]);
});

test("a prefetch that is not a non-negative integer throws a RangeError naming it", () => {
  for (const [prefetch, shown] of [
    [-1, "`-1` (number)"],
    [1.5, "`1.5` (number)"],
    [Number.NaN, "`NaN` (number)"],
    [Number.POSITIVE_INFINITY, "`Infinity` (number)"],
    ["3", '`"3"` (string)'],
  ] as const) {
    expect(
      () => new PostgresWorkQueue({ pool, schema, name: "q", maxRetries: 3, prefetch: prefetch as number }),
    ).toThrow(new RangeError(`Expected \`prefetch\` to be a non-negative integer, got ${shown}`));
  }
  expect(() => new PostgresWorkQueue({ pool, schema, name: "q", maxRetries: 3, prefetch: 0 })).not.toThrow();
});

test("a metrics option that is not a sink throws a TypeError naming it; a sink without the optional methods is enough", () => {
  const base = { pool, schema, name: "q", maxRetries: 3 };
  for (const metrics of [null, 5, {}, { add() {}, retry() {}, observeQueueDuration() {} }]) {
    expect(() => new PostgresWorkQueue({ ...base, metrics: metrics as unknown as MetricsSink })).toThrow(
      /^Expected `metrics` to be a MetricsSink, got/,
    );
  }
  const sink = { add() {}, retry() {}, observeQueueDuration() {}, observeWorkDuration() {} };
  for (const optional of ["connect", "staleCall", "connectShared"]) {
    expect(() => new PostgresWorkQueue({ ...base, metrics: { ...sink, [optional]: 1 } as MetricsSink })).toThrow(
      /^Expected `metrics` to be a MetricsSink, got/,
    );
  }
  expect(() => new PostgresWorkQueue({ ...base, metrics: sink })).not.toThrow();
});
