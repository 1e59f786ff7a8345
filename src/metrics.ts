import { type Clock, realClock } from "./clock.js";
import { expected, show } from "./validate.js";

/**
 * The count and the sum of a duration's observations ([docs/spec.md §19.3](../docs/spec.md#§19-metrics), [§19.4](../docs/spec.md#§19-metrics)).
 *
 * @public
 * @example
 * ```ts
 * const totals: DurationTotals = { count: 2, sumMs: 30 }; // two observations, 15 ms on average
 * ```
 */
export interface DurationTotals {
  /** How many observations were made. */
  readonly count: number;
  /** Their sum, in milliseconds, added in the order they were made. */
  readonly sumMs: number;
}

/**
 * A reading of a queue's metrics at one moment ([docs/spec.md §19](../docs/spec.md#§19-metrics)), all durations in milliseconds.
 *
 * @public
 * @example
 * ```ts
 * const recorder = new MetricsRecorder<string>();
 * recorder.added();
 * recorder.queued("a", 0);
 * const metrics: WorkQueueMetrics = recorder.read(5); // depth 1, adds 1, nothing observed yet
 * ```
 */
export interface WorkQueueMetrics {
  /** [§19.1](../docs/spec.md#§19-metrics): the number of queued items. */
  readonly depth: number;
  /** [§19.2](../docs/spec.md#§19-metrics): the adds that queued an item or marked it dirty. */
  readonly adds: number;
  /** [§19.7](../docs/spec.md#§19-metrics): the `retry` calls that requested a requeue. */
  readonly retries: number;
  /** [§19.3](../docs/spec.md#§19-metrics): the time from being queued to being handed out, per hand-out. */
  readonly queueDuration: DurationTotals;
  /** [§19.4](../docs/spec.md#§19-metrics): the time from being handed out to `done`, per `done` of an item in flight. */
  readonly workDuration: DurationTotals;
  /** [§19.5](../docs/spec.md#§19-metrics): the sum of the times the items in flight have been in flight so far. */
  readonly unfinishedWorkMs: number;
  /** [§19.6](../docs/spec.md#§19-metrics): how long the item longest in flight has been, or 0. */
  readonly longestRunningMs: number;
}

/**
 * Where a queue's metrics go ([docs/spec.md §19.10](../docs/spec.md#§19-metrics)): every count and every observation, one call each, as it happens,
 * and a way to read the gauges when the sink wants them. `prometheusMetrics` (`workqueue-spec/prometheus`) is one;
 * write your own for another metrics system.
 *
 * @remarks
 * The methods are called inside the queue's own calls, after the recorder has counted: they must be quick and must
 * not throw (what they throw reaches the queue's caller).
 *
 * @public
 * @example
 * ```ts
 * const durations: number[] = [];
 * const sink: MetricsSink = {
 *   add() {},
 *   retry() {},
 *   observeQueueDuration: (ms) => durations.push(ms),
 *   observeWorkDuration() {},
 * };
 * ```
 */
export interface MetricsSink {
  /** An add counted by [§19.2](../docs/spec.md#§19-metrics). */
  add(): void;
  /** A retry counted by [§19.7](../docs/spec.md#§19-metrics). */
  retry(): void;
  /**
   * One observation of [§19.3](../docs/spec.md#§19-metrics).
   *
   * @param ms - How long the item was queued, in milliseconds.
   */
  observeQueueDuration(ms: number): void;
  /**
   * One observation of [§19.4](../docs/spec.md#§19-metrics).
   *
   * @param ms - How long the item was in flight, in milliseconds.
   */
  observeWorkDuration(ms: number): void;
  /**
   * Called once, when the recorder is created, with a function that reads the metrics at the clock's current time:
   * a sink that exports gauges calls it when it is scraped.
   *
   * @param read - Answers a reading of the metrics now; O(items in flight).
   */
  connect?(read: () => WorkQueueMetrics): void;
  /**
   * A call refused because its lease was stale, by a queue with leases ([docs/spec.md §20.17](../docs/spec.md#§20-leases-on-postgresql)): one call each, in
   * the process that made it.
   */
  staleCall?(): void;
  /**
   * Called once, when a queue kept in a database (`PostgresWorkQueue`) is created, with a function that reads the
   * queue's gauges from the database, in one statement ([docs/spec.md §20.17](../docs/spec.md#§20-leases-on-postgresql)): a sink that exports gauges calls
   * it when it is scraped. Such a queue calls this and never {@link MetricsSink.connect}.
   *
   * @param read - Answers the gauges now, or rejects as the queue's calls do when the database cannot answer.
   */
  connectShared?(read: () => Promise<SharedQueueGauges>): void;
}

/**
 * The gauges of a queue that many processes share in a database, read from it at one moment
 * ([docs/spec.md §20.17](../docs/spec.md#§20-leases-on-postgresql)): the same in every process. Durations are milliseconds.
 *
 * @public
 * @example
 * ```ts
 * const gauges: SharedQueueGauges = { depth: 2, unfinishedWorkMs: 0, longestRunningMs: 0, expiredLeases: 1 };
 * ```
 */
export interface SharedQueueGauges {
  /** [§19.1](../docs/spec.md#§19-metrics): the number of queued items. */
  readonly depth: number;
  /** [§19.5](../docs/spec.md#§19-metrics): the sum of the times the items under a live lease have been in flight so far. */
  readonly unfinishedWorkMs: number;
  /** [§19.6](../docs/spec.md#§19-metrics): how long the item longest under a live lease has been, or 0. */
  readonly longestRunningMs: number;
  /** [§20.17](../docs/spec.md#§20-leases-on-postgresql): how many leases of the queue expired, in every process, since the schema counts them. */
  readonly expiredLeases: number;
}

/**
 * Options for {@link MetricsRecorder}.
 *
 * @public
 */
export interface MetricsRecorderOptions {
  /**
   * Where every count and observation also goes.
   *
   * @defaultValue none: the recorder only keeps its own totals.
   */
  readonly sink?: MetricsSink | undefined;
  /**
   * The clock that the sink's reading function ({@link MetricsSink.connect}) reads the time from: the queue's.
   *
   * @defaultValue {@link realClock}
   */
  readonly clock?: Pick<Clock, "now"> | undefined;
}

/**
 * Counts a queue's metrics as the queue tells it its transitions, each with its time ([docs/spec.md §19](../docs/spec.md#§19-metrics)),
 * and forwards every count and observation to a {@link MetricsSink}.
 *
 * The caller's obligation: report every transition, in the order they happen, with times that never go backwards
 * (the queue's clock): `added` for each add that §19.2 counts, `queued` when an item is appended to the queue,
 * `handedOut` when `get` or `take` hands it out, `finished` at the `done` of an item in flight (before `queued`, if
 * that `done` requeues it), and `retried` for each retry that §19.7 counts. The recorder keeps which items are queued
 * and in flight, and throws when a transition does not fit; it does not know about dirty marks, delays or shutdown,
 * which change no metric by themselves.
 *
 * @remarks
 * Every transition is O(1); {@link MetricsRecorder.read} is O(items in flight), which is at most the number of
 * workers in a controller, and adds the unfinished work up in hand-out order as docs/spec.md §19.9 says.
 *
 * @typeParam T - The item type; items are compared as `Map` keys are, as the queue compares them.
 * @public
 * @example
 * ```ts
 * const clock = new VirtualClock();
 * const recorder = new MetricsRecorder<string>({ clock });
 * recorder.added(); // add("a") queued "a"
 * recorder.queued("a", clock.now());
 * clock.advance(10);
 * recorder.handedOut("a", clock.now()); // get() → "a" after 10 ms in the queue
 * clock.advance(25);
 * recorder.read(clock.now()); // depth 0, queueDuration { count: 1, sumMs: 10 }, unfinishedWorkMs 25
 * recorder.finished("a", clock.now()); // done("a"): workDuration { count: 1, sumMs: 25 }
 * ```
 */
export class MetricsRecorder<T> {
  /** Where counts and observations also go, if anywhere. */
  readonly #sink: MetricsSink | undefined;
  /** Invariant: exactly the queued items, each with the time it was appended. Its size is the depth (§19.1). */
  readonly #queuedAt = new Map<T, number>();
  /**
   * Invariant: exactly the items in flight, each with the time it was handed out, in hand-out order: an item is
   * inserted when it is handed out and deleted when it is finished, and a `Map` iterates in insertion order. As the
   * times never go backwards, the first entry is the longest running (§19.6) without a scan.
   */
  readonly #handedOutAt = new Map<T, number>();
  /** §19.2; only goes up. */
  #adds = 0;
  /** §19.7; only goes up. */
  #retries = 0;
  /** §19.3: the number of hand-outs, and the sum of their observations in the order they were made. */
  #queueCount = 0;
  #queueSumMs = 0;
  /** §19.4: the number of `finished` calls, and the sum of their observations in the order they were made. */
  #workCount = 0;
  #workSumMs = 0;
  /** The latest time given (`-Infinity` before the first). Invariant: never decreases. */
  #lastMs = Number.NEGATIVE_INFINITY;

  /**
   * A recorder with nothing counted, nothing queued and nothing in flight. It calls the sink's `connect`, if any,
   * with a function that reads it at `clock.now()`.
   *
   * @param options - The sink and the clock (see {@link MetricsRecorderOptions}).
   */
  constructor(options: MetricsRecorderOptions = {}) {
    this.#sink = options.sink;
    const clock = options.clock ?? realClock;
    this.#sink?.connect?.(() => this.read(clock.now()));
  }

  /** Counts an add that queued an item or marked it dirty ([docs/spec.md §19.2](../docs/spec.md#§19-metrics)). */
  added(): void {
    this.#adds++;
    this.#sink?.add();
  }

  /** Counts a `retry` that requested a requeue ([docs/spec.md §19.7](../docs/spec.md#§19-metrics)). */
  retried(): void {
    this.#retries++;
    this.#sink?.retry();
  }

  /**
   * Records that `item` was appended to the queue, by an add or by the `done` that requeued it: its queue duration
   * starts now ([docs/spec.md §19.3](../docs/spec.md#§19-metrics)). It counts no add: call {@link MetricsRecorder.added} for that.
   *
   * @param item - The item appended: neither queued nor in flight (never `undefined` or `null`, docs/spec.md §1.2).
   * @param nowMs - The queue clock's time.
   * @throws RangeError when `nowMs` is not a finite number or is earlier than a time given before.
   * @throws Error when `item` is already queued or in flight.
   */
  queued(item: T, nowMs: number): void {
    this.#checkTime(nowMs);
    if (this.#queuedAt.has(item)) throw new Error(`Cannot record queued(${show(item)}): it is already queued`);
    if (this.#handedOutAt.has(item)) throw new Error(`Cannot record queued(${show(item)}): it is in flight`);
    this.#lastMs = nowMs;
    this.#queuedAt.set(item, nowMs);
  }

  /**
   * Records that `get` or `take` handed `item` out: observes its queue duration ([docs/spec.md §19.3](../docs/spec.md#§19-metrics)) and starts its work
   * duration.
   *
   * @param item - The item handed out: a queued one.
   * @param nowMs - The queue clock's time.
   * @throws RangeError when `nowMs` is not a finite number or is earlier than a time given before.
   * @throws Error when `item` is not queued.
   */
  handedOut(item: T, nowMs: number): void {
    this.#checkTime(nowMs);
    const queuedAt = this.#queuedAt.get(item);
    if (queuedAt === undefined) throw new Error(`Cannot record handedOut(${show(item)}): it is not queued`);
    this.#lastMs = nowMs;
    this.#queuedAt.delete(item);
    this.#handedOutAt.set(item, nowMs);
    const ms = nowMs - queuedAt;
    this.#queueCount++;
    this.#queueSumMs += ms;
    this.#sink?.observeQueueDuration(ms);
  }

  /**
   * Records the `done` of `item`, which was in flight: observes its work duration ([docs/spec.md §19.4](../docs/spec.md#§19-metrics)). A `done` of an item
   * that is not in flight observes nothing: do not call this for it.
   *
   * @param item - The item whose processing ended: one in flight.
   * @param nowMs - The queue clock's time.
   * @throws RangeError when `nowMs` is not a finite number or is earlier than a time given before.
   * @throws Error when `item` is not in flight.
   */
  finished(item: T, nowMs: number): void {
    this.#checkTime(nowMs);
    const handedOutAt = this.#handedOutAt.get(item);
    if (handedOutAt === undefined) throw new Error(`Cannot record finished(${show(item)}): it is not in flight`);
    this.#lastMs = nowMs;
    this.#handedOutAt.delete(item);
    const ms = nowMs - handedOutAt;
    this.#workCount++;
    this.#workSumMs += ms;
    this.#sink?.observeWorkDuration(ms);
  }

  /**
   * Reads the metrics at `nowMs` ([docs/spec.md §19](../docs/spec.md#§19-metrics)): the counts and totals so far, and the gauges computed now.
   *
   * @param nowMs - The queue clock's time.
   * @throws RangeError when `nowMs` is not a finite number or is earlier than a time given before.
   */
  read(nowMs: number): WorkQueueMetrics {
    this.#checkTime(nowMs);
    this.#lastMs = nowMs;
    let unfinishedWorkMs = 0;
    for (const at of this.#handedOutAt.values()) unfinishedWorkMs += nowMs - at; // in hand-out order (§19.9)
    const oldest = this.#handedOutAt.values().next();
    return {
      depth: this.#queuedAt.size,
      adds: this.#adds,
      retries: this.#retries,
      queueDuration: { count: this.#queueCount, sumMs: this.#queueSumMs },
      workDuration: { count: this.#workCount, sumMs: this.#workSumMs },
      unfinishedWorkMs,
      longestRunningMs: oldest.done ? 0 : nowMs - oldest.value,
    };
  }

  /** Throws unless `nowMs` is a finite number no earlier than the latest time given. */
  #checkTime(nowMs: number): void {
    if (!(Number.isFinite(nowMs) && nowMs >= this.#lastMs)) {
      const what =
        this.#lastMs === Number.NEGATIVE_INFINITY ? "" : ` no earlier than ${this.#lastMs}, the last time given`;
      throw new RangeError(expected("nowMs", `a finite number${what}`, nowMs));
    }
  }
}
