import type { Clock } from "../clock.js";
import type { MetricsSink, SharedQueueGauges } from "../metrics.js";
import { assertDelay, assertMaxRetries, assertShape, expected, signalOf } from "../validate.js";
import { Batcher } from "./batch.js";
import { guardPool, type ObservablePool } from "./connections.js";
import {
  DatabaseUnavailableError,
  isUnavailable,
  isUnmigrated,
  SchemaNotMigratedError,
  StaleLeaseError,
} from "./errors.js";
import type { LeaseBuffer } from "./prefetch.js";
import { type BufferedLease, prefetchBuffer, queuedFor } from "./prefetched.js";
import { assertSchema, channelOf } from "./schema.js";

/**
 * What the queue needs of a connection: `pg`'s `Pool` has it; so does a `Client`, which then serves one call at a
 * time.
 *
 * @public
 */
export interface Queryable {
  /**
   * Runs one parameterised statement.
   *
   * @param text - The SQL, with `$1`, `$2`, … for the values.
   * @param values - The values.
   */
  query(text: string, values?: unknown[]): Promise<QueryResult>;
}

/**
 * What a statement answered, as `pg` answers it.
 *
 * @public
 */
export interface QueryResult {
  /** The rows, each a record of its columns. */
  readonly rows: Record<string, unknown>[];
}

/**
 * The exponential backoff of `retry` ([docs/spec.md §18.2](../../docs/spec.md#§18-backoff-and-rate-limiters)).
 *
 * @public
 */
export interface PostgresBackoff {
  /** The delay after the first failure, in milliseconds. */
  readonly baseMs: number;
  /** The longest delay, in milliseconds. */
  readonly maxMs: number;
}

/**
 * A client of its own, which a waiting `take` listens on: `pg`'s `PoolClient`.
 *
 * @public
 */
export interface ListeningClient extends Queryable {
  /**
   * Subscribes to `LISTEN`'s notifications.
   *
   * @param event - `"notification"`.
   * @param listener - Called with each notification.
   */
  on(event: "notification", listener: (message: { channel: string; payload?: string | undefined }) => void): unknown;
  /**
   * Subscribes to the connection's errors.
   *
   * @param event - `"error"`.
   * @param listener - Called with the error.
   */
  on(event: "error", listener: (error: Error) => void): unknown;
  /**
   * Gives the client back to its pool.
   *
   * @param error - When given, the pool discards the client.
   */
  release(error?: Error | boolean): void;
}

/**
 * A pool of connections: `pg`'s `Pool`.
 *
 * @public
 */
export interface PoolLike extends Queryable {
  /** A client of its own, for `LISTEN`. */
  connect(): Promise<ListeningClient>;
  /**
   * The pool's events, where it has them (`pg`'s `Pool` does): the queue listens to `"acquire"` to give every
   * client the pool hands out an `'error'` listener, and to `"error"` for its idle clients, so that no lost
   * connection ends the process ([docs/spec.md §20.8](../../docs/spec.md#§20-leases-on-postgresql)).
   */
  readonly on?: ObservablePool["on"];
}

/**
 * An item handed out by `get` or `take`, with the token that fences it and when it expires
 * ([docs/spec.md §20.2](../../docs/spec.md#§20-leases-on-postgresql)).
 *
 * @public
 */
export interface Lease {
  /** The item. */
  readonly item: string;
  /** The fencing token: greater than every token handed out for this item before. Writes downstream should carry it. */
  readonly token: number;
  /** When the lease expires, in milliseconds on the queue's clock (the database's `clock_timestamp()` by default). */
  readonly expiresAt: number;
}

/**
 * The options of {@link PostgresWorkQueue}.
 *
 * @public
 */
export interface PostgresWorkQueueOptions {
  /**
   * The connections: a `pg` `Pool`. The queue does not end it. It gives the pool, and every client the pool hands
   * out, an `'error'` listener that ignores a lost connection, which the call that used it reports instead
   * ([§20.10](../../docs/spec.md#§20-leases-on-postgresql)).
   */
  readonly pool: PoolLike;
  /** The queue's name: queues of one schema share its tables and are independent of each other. */
  readonly name: string;
  /** The schema `migrate` set up. @defaultValue `"workqueue"` */
  readonly schema?: string | undefined;
  /** [docs/spec.md §3.1](../../docs/spec.md#§3-construction): a non-negative integer or `Infinity`. */
  readonly maxRetries: number;
  /** How long a lease lasts from `get`, `take` or `extend`, in milliseconds ([§20.2](../../docs/spec.md#§20-leases-on-postgresql)). @defaultValue `30_000` */
  readonly leaseMs?: number | undefined;
  /**
   * The clock leases expire by ([§20.6](../../docs/spec.md#§20-leases-on-postgresql)). Every process of one queue must use the same one.
   *
   * @defaultValue the database's `clock_timestamp()`: one clock for every host
   */
  readonly clock?: Clock | undefined;
  /** How often a waiting `take` looks again when no notification arrives, in milliseconds. @defaultValue `1_000` */
  readonly pollMs?: number | undefined;
  /**
   * The exponential backoff of `retry` ([docs/spec.md §18.2](../../docs/spec.md#§18-backoff-and-rate-limiters)): the requeue after the n-th failure waits
   * `min(maxMs, baseMs · 2^(n − 1))` (§7.3). Computed in the database, so every process backs off alike.
   *
   * @defaultValue none: `retry` requeues at once
   */
  readonly backoff?: PostgresBackoff | undefined;
  /**
   * Where this queue object's metrics go ([docs/spec.md §20.17](../../docs/spec.md#§20-leases-on-postgresql)): `prometheusMetrics` (`workqueue-spec/prometheus`) is
   * one. It counts what this object's calls did — adds that changed something, retries answering `true`, queue and
   * work durations, stale calls refused — and reads the queue's gauges from the database through
   * {@link MetricsSink.connectShared} when it wants them. It adds no statement to any call.
   *
   * @defaultValue none: nothing is counted, and every call costs what it costs without metrics
   */
  readonly metrics?: MetricsSink | undefined;
  /**
   * How many leases beyond the calls waiting a `get` or `take` that finds this object's buffer empty leases in one
   * statement, keeping the surplus for this object's next `get`s and `take`s, which it serves without a statement
   * ([docs/spec.md §20.18](../../docs/spec.md#§20-leases-on-postgresql)). A buffered lease is in flight for every other process, and queued for this object's
   * views; it is handed on while at least half of `leaseMs` is left, and given back to its place in the queue
   * otherwise, by `close`, `shutDownWithDrain`, and a call naming its item. A `take` woken after its look found
   * nothing, finding the buffer empty, leases for itself alone (`get`), so that an idle worker's start costs no
   * fill. 500 is graphile-worker's `localQueue`.
   *
   * @defaultValue `0`: no buffer; every `get` and `take` asks the database
   */
  readonly prefetch?: number | undefined;
}

/** What a call with a lease answered: its row, whose `answer` is `ok`, `stale`, `requeued` or `gave up`. */
type Answer = Record<string, unknown>;

/** The calls that wait for work: a take, and a drain (which a notification wakes, not the wake of one take). */
type Waiter = "take" | "shutDownWithDrain";

/** What a waiting call's look found: its answer, or when to look again at the latest. */
type Look<V> =
  | { readonly found: true; readonly value: V }
  | { readonly found: false; readonly nextEvent?: number | undefined };

/** The views of §9 and §12.2, and the next expiry or due time (§20.10). */
interface Views {
  readonly size: number;
  readonly inFlight: number;
  readonly waiting: number;
  readonly shuttingDown: boolean;
  readonly nextEvent: number | undefined;
}

/** What a metrics sink must have: a function for each count and observation (§19.10). */
const metricsMethods = ["add", "retry", "observeQueueDuration", "observeWorkDuration"];

/** What a metrics sink may have, each a function when present. */
const optionalMetricsMethods = ["connect", "staleCall", "connectShared"];

/**
 * No item: a statement run around it (the views, the gauges) takes the buffer's shared turn and gives nothing back.
 */
// Stryker disable next-line ArrayDeclaration: equivalent: around an item that no buffer holds is around none, so a name no test adds ("Stryker was here") changes nothing
const noItems: readonly string[] = [];

/** Throws a `TypeError` unless `item` is a string: items in PostgreSQL are text ([§20.1](../../docs/spec.md#§20-leases-on-postgresql)). */
function assertText(item: unknown): asserts item is string {
  if (typeof item !== "string") throw new TypeError(expected("item", "a string", item));
}

/** Throws a `TypeError` unless `lease` is one that `get` or `take` answered: a string item and a token. */
function assertLease(lease: unknown): asserts lease is Lease {
  const record = lease as { item?: unknown; token?: unknown } | null;
  const valid =
    typeof lease === "object" &&
    record !== null &&
    typeof record.item === "string" &&
    Number.isSafeInteger(record.token) &&
    (record.token as number) >= 0;
  if (!valid) throw new TypeError(expected("lease", "a lease that get or take answered, { item, token }", lease));
}

/** Throws a `RangeError` unless `ms` is a non-negative finite number ([§18.2](../../docs/spec.md#§18-backoff-and-rate-limiters)). */
function assertDuration(name: string, ms: unknown): asserts ms is number {
  if (!(Number.isFinite(ms) && (ms as number) >= 0)) {
    throw new RangeError(expected(name, "a non-negative finite number of milliseconds", ms));
  }
}

/** Throws a `RangeError` unless `ms` is a positive finite number. */
function assertPositive(name: string, ms: unknown): asserts ms is number {
  if (!(Number.isFinite(ms) && (ms as number) > 0)) {
    throw new RangeError(expected(name, "a positive finite number of milliseconds", ms));
  }
}

/**
 * A keyed work queue in PostgreSQL: the rules of docs/spec.md §4–§14 for string items, shared by every process
 * that opens the same queue, durable across restarts, with leases that expire when a holder dies and fencing
 * tokens that refuse a late call ([docs/spec.md §20](../../docs/spec.md#§20-leases-on-postgresql)).
 *
 * @remarks
 * Every verb is one statement, so one transaction: it happens entirely or not at all. The `add`s, `get`s, `done`s,
 * `retry`s and `forget`s made while one of their kind is in flight go out together as the next statement, each
 * answering its own result (§20.1). What a handler may assume is in §20.7: an item is processed at least once, and
 * never by two live leases at once; a holder that stalls past its lease can still be running when another worker
 * gets the item, so writes downstream should carry the token. With a `metrics` sink (§20.17) it counts what its
 * own calls did — adds, retries, queue and work durations, stale calls — and reads the queue's gauges (depth,
 * unfinished work, longest running, expired leases) from the database in one statement when the sink asks, adding
 * no statement to any call. With `prefetch` (§20.18), a `get` or `take` leases more heads than it needs into a
 * buffer of this object, which serves its next `get`s and `take`s without a statement; other processes see those
 * items in flight, and this object's views and calls see them queued. Not supported yet: rate limiters other than
 * the exponential backoff (§20.11). The
 * tables must exist: call {@link migrate} first.
 *
 * @public
 * @example
 * ```ts
 * import pg from "pg";
 * import { migrate, PostgresWorkQueue } from "workqueue-spec/postgres";
 *
 * const pool = new pg.Pool({ connectionString: "postgres://postgres@127.0.0.1:5432/test" });
 * await migrate(pool);
 * const queue = new PostgresWorkQueue({ pool, name: "pods", maxRetries: 5 });
 * await queue.add("default/web");
 * const lease = await queue.take();
 * if (lease) {
 *   await queue.forget(lease); // processed: reset its failures
 *   await queue.done(lease);
 * }
 * await queue.close();
 * await pool.end();
 * ```
 */
export class PostgresWorkQueue {
  /** The queue's name, passed to every function. */
  readonly name: string;
  /** [§3.1](../../docs/spec.md#§3-construction) */
  readonly maxRetries: number;
  /** How long a lease lasts, in milliseconds. */
  readonly leaseMs: number;
  /** The schema, named by an error when it was not migrated. */
  readonly #schema: string;
  /** The quoted schema, the prefix of every function. */
  readonly #functions: string;
  /** The channel of the schema's notifications. */
  readonly #channel: string;
  readonly #pool: PoolLike;
  readonly #clock: Clock | undefined;
  readonly #pollMs: number;
  /** The backoff's base and max, or `null`s without one. */
  readonly #backoff: readonly [number | null, number | null];
  /** The client a waiting `take` listens on, while one is connected. */
  #listener: Promise<ListeningClient> | undefined;
  /**
   * The wakers of the waiting `take`s and drains, oldest first, each with whether it is a `take`'s: a notification
   * of one item queued wakes one `take` (§20.10), any other notification and `shutDown` wake them all.
   */
  readonly #wakers = new Map<() => void, boolean>();
  /** Set by `close`: nothing more is asked of the database, and every call rejects. */
  #closed = false;
  /** Where the metrics go (§20.17), if anywhere. */
  readonly #sink: MetricsSink | undefined;
  /**
   * The adds that arrive while one is in flight go out together, each item once: one statement per round trip. One
   * add alone is the function `add`, answering whether it changed something; several, `add_many`, answering how many
   * did (§19.2).
   */
  readonly #adds = new Batcher<string, undefined>(async (all) => {
    // §20.18: an add of an item whose lease is buffered is the add of a queued item: it changes nothing.
    const buffer = this.#buffer;
    if (buffer === undefined) await this.#add(all);
    else await buffer.shared(() => this.#add(all.filter((item) => !buffer.has(item))));
    return all.map(() => undefined);
  });

  /** Sends the adds of `items` in one statement, if there are any. */
  async #add(items: readonly string[]): Promise<void> {
    if (items.length === 0) return;
    const [item] = items;
    const [row] = (
      items.length === 1
        ? await this.#call("add", "add($1, $2, $3) changed", [this.name, item, this.#now()])
        : await this.#call("add", "add_many($1, $2, $3) changed", [this.name, [...new Set(items)], this.#now()])
    ) as [Record<string, unknown>]; // either function answers one row
    const sink = this.#sink;
    if (sink !== undefined) for (const _ of Array.from({ length: Number(row.changed) })) sink.add();
  }
  /** The dones that arrive while one is in flight go out together; each answers `ok` or `stale`. One alone is `done`. */
  readonly #dones = this.#finishing("done", () => []);
  /** The retries likewise, each answering `requeued`, `gave up` or `stale`; several are one `retry_many`. */
  readonly #retries = this.#finishing("retry", () => [this.maxRetries, ...this.#backoff]);
  /** The forgets likewise, each answering `ok` or `stale`; several are one `forget_many`. */
  readonly #forgets = this.#finishing("forget", () => []);
  /** The finishes likewise, each answering `forgot` and, once forget accepted the lease, done's `answer`; always one `finish_many`. */
  readonly #finishes = this.#finishing("finish", () => []);

  /** The gets that arrive while one is in flight go out together, each answering its own lease or `undefined`. */
  readonly #gets = this.#getting("get");
  /** The takes' looks, batched apart from the gets so that an error names the call its caller made. */
  readonly #takes = this.#getting("take");
  /** The prefetched leases (§20.18), with `prefetch` above 0. */
  readonly #buffer: LeaseBuffer<BufferedLease> | undefined;

  /** @param options - The pool, the queue's name, `maxRetries` and, optionally, the schema, lease, clock and poll. */
  constructor(options: PostgresWorkQueueOptions) {
    if (typeof options !== "object" || options === null) {
      throw new TypeError(expected("options", "an object such as { pool, name: 'pods', maxRetries: 5 }", options));
    }
    assertShape("pool", options.pool, "a pg Pool", ["query", "connect"], ["on"]);
    if (typeof options.name !== "string" || options.name === "") {
      throw new TypeError(expected("name", "a non-empty string", options.name));
    }
    const schema = options.schema ?? "workqueue";
    assertSchema(schema);
    assertMaxRetries(options.maxRetries);
    const leaseMs = options.leaseMs ?? 30_000;
    assertPositive("leaseMs", leaseMs);
    const pollMs = options.pollMs ?? 1_000;
    assertPositive("pollMs", pollMs);
    // Stryker disable next-line ArrayDeclaration: equivalent: a clock has no optional method, and a name no clock has is as absent as none
    if (options.clock !== undefined) assertShape("clock", options.clock, "a Clock", ["now", "schedule"], []);
    if (options.metrics !== undefined) {
      assertShape("metrics", options.metrics, "a MetricsSink", metricsMethods, optionalMetricsMethods);
    }
    const prefetch = options.prefetch ?? 0;
    if (!(Number.isSafeInteger(prefetch) && prefetch >= 0)) {
      throw new RangeError(expected("prefetch", "a non-negative integer", prefetch));
    }
    const backoff = options.backoff;
    if (backoff !== undefined) {
      if (typeof backoff !== "object" || backoff === null) {
        throw new TypeError(expected("backoff", "undefined or an object such as { baseMs: 5, maxMs: 1000 }", backoff));
      }
      assertDuration("backoff.baseMs", backoff.baseMs);
      assertDuration("backoff.maxMs", backoff.maxMs);
    }
    this.name = options.name;
    this.maxRetries = options.maxRetries;
    this.leaseMs = leaseMs;
    this.#pool = options.pool;
    guardPool(options.pool); // §20.8: a lost connection rejects a call, never ends the process
    this.#schema = schema;
    this.#functions = `"${schema}"`;
    this.#channel = channelOf(schema);
    this.#clock = options.clock;
    this.#pollMs = pollMs;
    this.#backoff = backoff === undefined ? [null, null] : [backoff.baseMs, backoff.maxMs];
    this.#sink = options.metrics;
    this.#sink?.connectShared?.(() => this.#gauges());
    const queue = {
      name: this.name,
      leaseMs,
      clock: this.#clock,
      now: () => this.#now(),
      call: (verb: string, sql: string, values: unknown[]) => this.#call(verb, sql, values),
      callClosing: (verb: string, sql: string, values: unknown[]) => this.#attempt(1, verb, sql, values),
      wakeTake: () => this.#wakeTake(),
    };
    this.#buffer = prefetch === 0 ? undefined : prefetchBuffer(prefetch, queue);
  }

  /** Runs `run`, a statement naming `items`, after the buffered leases of those items went back (§20.18). */
  #around<R>(items: readonly string[], run: () => Promise<R>): Promise<R> {
    return this.#buffer === undefined ? run() : this.#buffer.around(items, run);
  }

  /** The gauges of §20.17, read in one statement, which settles what happened by now first. */
  async #gauges(): Promise<SharedQueueGauges> {
    const [[row], buffered] = await this.#around(noItems, async () => [
      await this.#call("metrics", "metrics($1, $2)", [this.name, this.#now()]),
      this.#buffer?.count ?? 0, // §20.18: queued items for this object
    ]);
    const r = row as Record<string, unknown>;
    return {
      depth: Number(r.depth) + buffered,
      unfinishedWorkMs: r.unfinished_ms as number,
      longestRunningMs: r.longest_ms as number,
      expiredLeases: Number(r.expired),
    };
  }

  /** The injected clock's time, or `null`: the database's. */
  #now(): number | null {
    return this.#clock === undefined ? null : this.#clock.now();
  }

  /** Throws once `close` was called. */
  #refuseClosed(verb: string): void {
    if (this.#closed) throw new Error(`${verb} refused: the queue ${JSON.stringify(this.name)} was closed`);
  }

  /** Calls one of the schema's functions; a lost connection becomes a {@link DatabaseUnavailableError}. */
  async #call(verb: string, sql: string, values: unknown[]): Promise<Record<string, unknown>[]> {
    this.#refuseClosed(verb);
    return this.#attempt(1, verb, sql, values);
  }

  /** The `attempt`-th try of a {@link #call}; up to five in all. */
  async #attempt(attempt: number, verb: string, sql: string, values: unknown[]): Promise<Record<string, unknown>[]> {
    try {
      return (await this.#pool.query(`select * from ${this.#functions}.${sql}`, values)).rows;
    } catch (error) {
      if (isUnavailable(error)) throw new DatabaseUnavailableError(verb, error);
      if (isUnmigrated(error)) throw new SchemaNotMigratedError(verb, this.#schema, error);
      // A transaction the server aborted to break a deadlock changed nothing: it is made again (§20.8).
      if ((error as { code?: unknown } | null)?.code !== "40P01" || attempt === 5) throw error;
      return this.#attempt(attempt + 1, verb, sql, values);
    }
  }

  /**
   * [§4](../../docs/spec.md#§4): queues `item` unless it is queued; marks it dirty if it is in flight. Made while another
   * `add` of this queue object is in flight, it goes out with the others made meanwhile, in one statement (§20.1),
   * and resolves once that statement committed.
   *
   * @param item - A string.
   */
  async add(item: string): Promise<void> {
    assertText(item);
    await this.#adds.call(item);
  }

  /**
   * [§17](../../docs/spec.md#§17-delayed-adds): queues `item` once `delayMs` have passed on the queue's clock; a delay that is not positive is an `add`.
   *
   * @param item - A string.
   * @param delayMs - A finite number of milliseconds.
   */
  async addAfter(item: string, delayMs: number): Promise<void> {
    assertText(item);
    assertDelay(delayMs);
    const values = [this.name, item, this.#now(), delayMs];
    const buffer = this.#buffer;
    const call = () => this.#call("addAfter", "add_after($1, $2, $3, $4)", values);
    // §20.18: an item whose lease is buffered is queued for this object, and an addAfter of it changes nothing (§17.2)
    if (buffer === undefined) await call();
    else await buffer.shared(async () => (buffer.has(item) ? undefined : await call()));
  }

  /**
   * [§5](../../docs/spec.md#§5) and §20.2: the oldest queued item under a new lease, or `undefined` when nothing is
   * queued. With `prefetch` (§20.18), from this object's buffer when it holds a lease, without a statement: that
   * lease was made when the buffer was filled, and has at least half of `leaseMs` left.
   */
  async get(): Promise<Lease | undefined> {
    return this.#get("get");
  }

  /**
   * A `get` made for `verb`, the call an error names: it goes out with the others of that verb in flight beside it.
   * `again`: a take's look after one that found nothing (§20.18: with the buffer empty, it leases for itself alone).
   */
  async #get(verb: "get" | "take", again = false): Promise<Lease | undefined> {
    if (this.#buffer === undefined) return (verb === "get" ? this.#gets : this.#takes).call(undefined);
    this.#refuseClosed(verb); // a buffered lease is handed on without a statement, which would refuse it
    const buffered = await this.#buffer.next(verb, again);
    if (buffered === undefined) return undefined;
    this.#sink?.observeQueueDuration(queuedFor(buffered, this.#clock)); // §19.3, at the hand-on
    return buffered.lease;
  }

  /**
   * Batches the calls of `verb` with a lease: one alone is the function `verb`, several are one `verb_many` applying
   * each in the order made. Each answers the function's row, whose `answer` is its text (`stale` when the lease was
   * refused, §20.4). `extra` are the values after the time, read when the statement goes out.
   */
  #finishing(verb: "done" | "retry" | "forget" | "finish", extra: () => readonly unknown[]): Batcher<Lease, Answer> {
    return new Batcher((leases) => {
      const send = () => this.#ending(verb, extra, leases);
      // §20.18: a token above 0 is never a buffered lease's, which no caller holds: the answer and the effect of a
      // call with one are the same whether a fill or give-back runs beside it, so it waits for none. Token 0 names
      // whatever lease is live, which may be a buffered one: those calls wait for their turn.
      return leases.every((each) => each.token > 0)
        ? send()
        : this.#around(
            leases.map((each) => each.item),
            send,
          );
    });
  }

  /** The statement of {@link #finishing} for `leases`. */
  async #ending(
    verb: "done" | "retry" | "forget" | "finish",
    extra: () => readonly unknown[],
    leases: readonly Lease[],
  ): Promise<Answer[]> {
    const after = extra();
    const places = Array.from({ length: 4 + after.length }, (_, i) => `$${i + 1}`).join(", ");
    const [lease] = leases as [Lease];
    if (leases.length === 1 && verb !== "finish") {
      // `answer` names the column of a function answering one value, and is only the row's name for a table
      const [row] = await this.#call(verb, `${verb}(${places}) answer`, [
        this.name,
        lease.item,
        lease.token,
        this.#now(),
        ...after,
      ]);
      return [row as Answer]; // the function answers one row
    }
    const items = leases.map((each) => each.item);
    const tokens = leases.map((each) => each.token);
    return this.#call(verb, `${verb}_many(${places})`, [this.name, items, tokens, this.#now(), ...after]);
  }

  /** Batches the gets made for `verb`: one alone is `get`; several are one `get_many`, the first call given the head. */
  #getting(verb: "get" | "take"): Batcher<undefined, Lease | undefined> {
    return new Batcher(async (calls) => {
      const values = [this.name, this.#now(), this.leaseMs];
      const rows =
        calls.length === 1
          ? await this.#call(verb, "get($1, $2, $3)", values)
          : await this.#call(verb, "get_many($1, $2, $3, $4)", [...values, calls.length]);
      return calls.map((_, i) => {
        const row = rows[i];
        if (row === undefined) return undefined;
        this.#sink?.observeQueueDuration(row.queued_for_ms as number); // §19.3, in hand-out order
        return { item: row.item as string, token: Number(row.token), expiresAt: row.expires_ms as number };
      });
    });
  }

  /**
   * [§14](../../docs/spec.md#§14-waiting-for-work): the next item under a new lease, waiting until one is queued — by this process or another,
   * woken by `LISTEN/NOTIFY`, by the earliest lease expiry, and at least every `pollMs`. Resolves `undefined` once
   * the queue is shutting down and nothing is queued, waiting or in flight (§14.2, §20.10): while a lease is live,
   * its expiry may queue its item again, so the take waits for its `done` or its expiry.
   *
   * @param options - `signal` withdraws the take (§14.5).
   */
  async take(options?: { readonly signal?: AbortSignal | undefined }): Promise<Lease | undefined> {
    const signal = signalOf(options);
    signal?.throwIfAborted();
    try {
      return await this.#look(signal);
    } finally {
      // A take woken for one item may not be the one that gets it, or may stop waiting: it passes the wake on, so
      // that no item queued is left to the next poll while another take waits.
      this.#wakeTake();
    }
  }

  /** A take's looks, until it has a lease or the queue has no more work. */
  #look(signal: AbortSignal | undefined): Promise<Lease | undefined> {
    let again = false; // §20.18: a look after one that found nothing leases only for itself when the buffer is empty
    return this.#until("take", signal, async () => {
      const lease = await this.#get("take", again); // its error names the take, the call the caller made
      again = true;
      if (lease !== undefined) return { found: true, value: lease };
      const views = await this.#views("take");
      // §14.2, §17.7, §20.10: no more work only when nothing waits and no lease is live, whose expiry would queue
      // its item again with nobody left to take it (a holder that died during a drain)
      // (what is queued too: an item queued between the get and the views, by a done that requeued it, is the take's)
      if (views.shuttingDown && views.size + views.waiting + views.inFlight === 0)
        return { found: true, value: undefined };
      return { found: false, nextEvent: views.nextEvent };
    });
  }

  /**
   * [§14.7](../../docs/spec.md#§14-waiting-for-work): `for await (const lease of queue)` takes leases, one per step,
   * until `take` answers `undefined` (the queue shut down, §20.10). The loop's body must end each lease with `done`
   * (after `forget` or `retry`); leaving the loop early takes nothing more, and a lease it holds stays live until
   * `done` or its expiry. {@link runLeaseWorkers} is the loop with heartbeats and the calls of §15.1.
   *
   * @example
   * ```ts
   * for await (const lease of queue) {
   *   console.log(`reconciled ${lease.item}`);
   *   await queue.done(lease);
   * }
   * ```
   */
  async *[Symbol.asyncIterator](): AsyncGenerator<Lease, void, undefined> {
    for (let lease = await this.take(); lease !== undefined; lease = await this.take()) yield lease;
  }

  /**
   * Looks until `look` finds something, sleeping between looks until a notification, the next expiry or due time,
   * or `pollMs` wakes it (§20.10); the waker is armed before each look, so a notification during it is not missed.
   * It listens again before each look when the listening connection was lost. A refusal or a failure to listen
   * names `verb`, the call its caller made.
   */
  async #until<V>(verb: Waiter, given: AbortSignal | undefined, look: () => Promise<Look<V>>): Promise<V> {
    const signal = given ?? new AbortController().signal; // one that never aborts: no case without a signal
    let looked = await this.#round(verb, signal, look);
    while (!looked.found) looked = await this.#round(verb, signal, look);
    return looked.value;
  }

  /** One look of {@link #until}, after listening, and the sleep after it when it found nothing. */
  async #round<V>(verb: Waiter, signal: AbortSignal, look: () => Promise<Look<V>>): Promise<Look<V>> {
    await this.#listen(verb);
    let wake = (): void => {};
    const woken = new Promise<void>((resolve) => {
      wake = resolve;
    });
    this.#wakers.set(wake, verb === "take");
    try {
      signal.throwIfAborted();
      const looked = await look();
      if (!looked.found) await this.#sleep(woken, looked.nextEvent, signal);
      return looked;
    } finally {
      this.#wakers.delete(wake);
    }
  }

  /** The views in one call: they settle what happened by now first (§20.3). */
  async #views(verb: string): Promise<Views> {
    // §20.18: the buffered leases are queued items for this object, counted while the buffer cannot change
    const [[row], buffered] = await this.#around(noItems, async () => [
      await this.#call(verb, "views($1, $2)", [this.name, this.#now()]),
      this.#buffer?.count ?? 0,
    ]);
    const r = row as Record<string, unknown>;
    return {
      size: Number(r.size) + buffered,
      inFlight: Number(r.in_flight) - buffered,
      waiting: Number(r.waiting),
      shuttingDown: r.shutting_down === true,
      nextEvent: (r.next_event as number | null) ?? undefined,
    };
  }

  /**
   * Waits for `woken`, the next expiry or due time, `pollMs` or the abort, whichever comes first; not at all when
   * the signal aborted during the look, whose abort event has passed, or when the clock passed the next event then.
   */
  #sleep(woken: Promise<void>, nextEvent: number | undefined, signal: AbortSignal): Promise<void> {
    if (signal.aborted) return Promise.resolve(); // the next round's throwIfAborted rejects with its reason
    // The clock passed the next event while the look ran: look again now. A virtual clock runs a timer armed for a
    // time that has passed only when it moves again (§18.9), and nothing else would wake the take.
    // (no next event: never passed)
    if (this.#clock !== undefined && (nextEvent ?? Number.POSITIVE_INFINITY) <= this.#clock.now()) {
      return Promise.resolve();
    }
    return new Promise<void>((resolve) => {
      const timers: (() => void)[] = [];
      const finish = (): void => {
        for (const cancel of timers) cancel();
        signal.removeEventListener("abort", finish);
        resolve();
      };
      // An abort ends the sleep like a wake: the next round's throwIfAborted rejects with its reason.
      signal.addEventListener("abort", finish);
      void woken.then(finish);
      const poll = setTimeout(finish, this.#pollMs);
      timers.push(() => clearTimeout(poll));
      if (nextEvent !== undefined && this.#clock !== undefined) timers.push(this.#clock.schedule(nextEvent, finish));
      if (nextEvent !== undefined && this.#clock === undefined) {
        const event = setTimeout(finish, Math.max(0, nextEvent - Date.now()));
        timers.push(() => clearTimeout(event));
      }
    });
  }

  /** Connects the listening client once, and wakes the waiting takes on every notification for this queue. */
  async #listen(verb: Waiter): Promise<void> {
    this.#refuseClosed(verb);
    if (this.#listener === undefined) {
      this.#listener = (async () => {
        const client = await this.#pool.connect().catch((error: unknown) => {
          throw new DatabaseUnavailableError(verb, error);
        });
        client.on("notification", (message) => {
          if (message.payload === this.name) this.#wake();
          if (message.payload === `+${this.name}`) this.#wakeTake();
        });
        let released = false;
        const discard = (): void => {
          if (!released) client.release(true); // pg throws on a second release
          released = true;
        };
        client.on("error", () => {
          // The connection is gone: forget it, and wake the waiting takes, which listen again before they look.
          this.#listener = undefined;
          discard();
          this.#wake();
        });
        try {
          await client.query(`listen "${this.#channel}"`);
        } catch (error) {
          discard(); // a client that does not listen is of no use here, and kept it would be lost to the pool
          throw isUnavailable(error) ? new DatabaseUnavailableError(verb, error) : error;
        }
        return client;
      })();
      this.#listener.catch(() => {
        this.#listener = undefined;
      });
    }
    try {
      await this.#listener;
    } catch (error) {
      // a take and a drain may wait on one connection: each names its own call
      throw error instanceof DatabaseUnavailableError ? new DatabaseUnavailableError(verb, error.cause) : error;
    }
    this.#refuseClosed(verb); // closed while it connected
  }

  /** Wakes every waiting take and drain. */
  #wake(): void {
    for (const wake of this.#wakers.keys()) wake();
  }

  /**
   * Wakes the oldest waiting take, if any. A second wake before that take looked again wakes it again, not the next
   * take: the item it announced is still found, by that take's look or, once it ends, by the take it passes on to.
   */
  #wakeTake(): void {
    for (const [wake, taking] of this.#wakers) {
      if (taking) {
        wake();
        return;
      }
    }
  }

  /**
   * [§6](../../docs/spec.md#§6): ends the lease; a dirty item is queued again. An item left idle loses its row (§20.9). Made
   * while another `done` of this queue object is in flight, it goes out with the others made meanwhile, in one
   * statement (§20.1), and resolves once that statement committed.
   *
   * @param lease - What `get` or `take` answered, or `{ item, token: 0 }` holding none. A lease that expired, was
   *   superseded or was done throws {@link StaleLeaseError} (§20.4): call `retry` and `forget` before `done`.
   */
  async done(lease: Lease): Promise<void> {
    const row = await this.#finish(this.#dones, "done", lease);
    const worked = row.worked_ms;
    // §19.4: a done that ended a lease; null for a lease a version 2 schema handed out, whose start is unknown
    if (typeof worked === "number") this.#sink?.observeWorkDuration(worked);
  }

  /** Sends `lease` with the calls of `verb` waiting beside it; its row, or a {@link StaleLeaseError} for `stale`. */
  async #finish(calls: Batcher<Lease, Answer>, verb: string, lease: Lease): Promise<Answer> {
    assertLease(lease);
    const row = await calls.call(lease);
    if (row.answer === "stale") throw this.#stale(verb, lease);
    return row;
  }

  /** The error refusing `lease` for `verb` (§20.4), counted as a stale call (§20.17). */
  #stale(verb: string, lease: Lease): StaleLeaseError {
    this.#sink?.staleCall?.();
    return new StaleLeaseError(verb, lease.item, lease.token);
  }

  /**
   * [§7](../../docs/spec.md#§7): counts a failure; `true` when the item will be processed again, `false` on give-up.
   * Made while another `retry` of this queue object is in flight, it goes out with the others made meanwhile, in one
   * statement (§20.1), and resolves once that statement committed.
   *
   * @param lease - What `get` or `take` answered, or `{ item, token: 0 }` holding none. A lease that expired, was
   *   superseded or was done throws {@link StaleLeaseError} (§20.4): call `retry` and `forget` before `done`.
   */
  async retry(lease: Lease): Promise<boolean> {
    const requeued = (await this.#finish(this.#retries, "retry", lease)).answer === "requeued";
    if (requeued) this.#sink?.retry(); // §19.7
    return requeued;
  }

  /**
   * [§8](../../docs/spec.md#§8): resets the item's failure count. Made while another `forget` of this queue object
   * is in flight, it goes out with the others made meanwhile, in one statement (§20.1), and resolves once that
   * statement committed.
   *
   * @param lease - What `get` or `take` answered, or `{ item, token: 0 }` holding none. A lease that expired, was
   *   superseded or was done throws {@link StaleLeaseError} (§20.4): call `retry` and `forget` before `done`.
   */
  async forget(lease: Lease): Promise<void> {
    await this.#finish(this.#forgets, "forget", lease);
  }

  /**
   * [§8](../../docs/spec.md#§8) and then [§6](../../docs/spec.md#§6) with the same lease, in one statement: what
   * `forget` and then `done` do, for a handled item (§20.12's loop after a success). Made while another `finish` of
   * this queue object is in flight, it goes out with the others made meanwhile, in one statement (§20.1), and
   * resolves once that statement committed.
   *
   * @param lease - What `get` or `take` answered, or `{ item, token: 0 }` holding none. A lease that expired, was
   *   superseded or was done throws {@link StaleLeaseError}: naming `forget` when nothing changed, naming `done`
   *   when the forget was applied and the done refused (the lease expired between them).
   */
  async finish(lease: Lease): Promise<void> {
    assertLease(lease);
    const row = await this.#finishes.call(lease);
    if (row.forgot === "stale") throw this.#stale("forget", lease);
    if (row.answer === "stale") throw this.#stale("done", lease);
    const worked = row.worked_ms;
    if (typeof worked === "number") this.#sink?.observeWorkDuration(worked); // §19.4, as done
  }

  /**
   * [§20.5](../../docs/spec.md#§20-leases-on-postgresql): the live lease lasts `leaseMs` more from now.
   *
   * @param lease - A live lease; one that expired, was superseded or ended throws {@link StaleLeaseError}.
   * @returns The lease with its new expiry.
   */
  async extend(lease: Lease): Promise<Lease> {
    assertLease(lease);
    const values = [this.name, lease.item, lease.token, this.#now(), this.leaseMs];
    const call = () => this.#call("extend", "extend($1, $2, $3, $4, $5)", values);
    const [row] = (await this.#around([lease.item], call)) as [{ extend: number | null }];
    if (row.extend === null) throw this.#stale("extend", lease); // not live: changed nothing (§20.4)
    return { item: lease.item, token: lease.token, expiresAt: row.extend };
  }

  /** [§9.1](../../docs/spec.md#§9-views): the number of queued items, after the leases that expired by now went back. */
  async size(): Promise<number> {
    return (await this.#views("size")).size;
  }

  /** [§9.2](../../docs/spec.md#§9-views): the number of items under a live lease. */
  async inFlight(): Promise<number> {
    return (await this.#views("inFlight")).inFlight;
  }

  /** [§9.4](../../docs/spec.md#§9-views): the number of waiting items (§17). */
  async waiting(): Promise<number> {
    return (await this.#views("waiting")).waiting;
  }

  /** [§12.2](../../docs/spec.md#§12-shutdown): whether the queue, in any process, was shut down. */
  async shuttingDown(): Promise<boolean> {
    return (await this.#views("shuttingDown")).shuttingDown;
  }

  /**
   * [§9.3](../../docs/spec.md#§9-views): the item's failure count.
   *
   * @param item - A string.
   */
  async failures(item: string): Promise<number> {
    assertText(item);
    const [row] = (await this.#call("failures", "failures($1, $2)", [this.name, item])) as [{ failures: unknown }];
    return Number(row.failures);
  }

  /** [§12.1](../../docs/spec.md#§12-shutdown): shuts the queue down for every process; waiting takes resolve `undefined` once nothing is queued, waiting or in flight (§20.10). */
  async shutDown(): Promise<void> {
    await this.#call("shutDown", "shut_down($1)", [this.name]);
    this.#wake();
  }

  /**
   * [§13](../../docs/spec.md#§13-draining): shuts the queue down and resolves once nothing is queued, in flight or waiting — in any process. Woken
   * like a waiting `take`. A lease whose holder died counts as in flight until it expires and its item is done.
   *
   * @param options - `signal` stops the wait (§13.3); the queue stays shut down.
   */
  async shutDownWithDrain(options?: { readonly signal?: AbortSignal | undefined }): Promise<void> {
    const signal = signalOf(options);
    await this.#buffer?.releaseAll(); // §20.18: other processes' workers may finish the items
    await this.shutDown();
    signal?.throwIfAborted();
    await this.#until("shutDownWithDrain", signal, async () => {
      const views = await this.#views("shutDownWithDrain");
      if (views.size + views.inFlight + views.waiting === 0) return { found: true, value: undefined };
      return { found: false, nextEvent: views.nextEvent };
    });
  }

  /**
   * Closes the listening connection (it is not given back to the pool, which would keep it listening). Waiting
   * takes and drains reject, and so does every call made after; a second `close` does nothing. The queue's state
   * stays in the database, for other processes and for a new `PostgresWorkQueue`; the pool is the caller's to end.
   */
  async close(): Promise<void> {
    this.#closed = true;
    await this.#buffer?.releaseAll(); // §20.18: each to its place, for other processes and instances
    const listener = this.#listener;
    this.#listener = undefined;
    this.#wake();
    if (listener !== undefined) (await listener.catch(() => undefined))?.release(true);
  }
}
