/**
 * The executable specification of the metrics (docs/spec.md §19): every transition is appended to a log, and every
 * reading is computed from the whole log again, rule by rule. No counters, no caches. It never imports the reference
 * implementation.
 */

import { same, show, sum } from "./words.js";

/** One transition the queue reported, with its time when it has one. */
interface MetricsEvent<T> {
  readonly kind: "added" | "retried" | "queued" | "handedOut" | "finished" | "read";
  readonly item?: T;
  readonly atMs?: number;
}

/**
 * A reading of the model ([docs/spec.md §19](../docs/spec.md#§19-metrics)), in the shape of the reference's `WorkQueueMetrics`.
 *
 * @public
 */
export interface MetricsModelReading {
  /** [§19.1](../docs/spec.md#§19-metrics) */
  readonly depth: number;
  /** [§19.2](../docs/spec.md#§19-metrics) */
  readonly adds: number;
  /** [§19.7](../docs/spec.md#§19-metrics) */
  readonly retries: number;
  /** [§19.3](../docs/spec.md#§19-metrics): the count and the sum of the observations. */
  readonly queueDuration: {
    /** How many observations. */
    readonly count: number;
    /** Their sum in milliseconds, added in the order they were made. */
    readonly sumMs: number;
  };
  /** [§19.4](../docs/spec.md#§19-metrics): the count and the sum of the observations. */
  readonly workDuration: {
    /** How many observations. */
    readonly count: number;
    /** Their sum in milliseconds, added in the order they were made. */
    readonly sumMs: number;
  };
  /** [§19.5](../docs/spec.md#§19-metrics) */
  readonly unfinishedWorkMs: number;
  /** [§19.6](../docs/spec.md#§19-metrics) */
  readonly longestRunningMs: number;
}

/** Whether a transition after the `i`-th of `events` is of the same item. */
function laterFor<T>(events: readonly MetricsEvent<T>[], i: number): boolean {
  return events.slice(i + 1).some((e) => same(e.item, events[i]?.item as T));
}

/**
 * The model of the metrics: the same transitions as the reference's `MetricsRecorder`, the same readings and the
 * same errors, computed naively from the log of every transition.
 *
 * @typeParam T - The item type.
 * @example
 * ```ts
 * import { MetricsModel } from "workqueue-spec/model";
 *
 * const model = new MetricsModel<string>();
 * model.added();
 * model.queued("a", 0);
 * model.handedOut("a", 10);
 * model.read(25); // depth 0, adds 1, queueDuration { count: 1, sumMs: 10 }, unfinishedWorkMs 15
 * model.queueDurations(); // [10]
 * ```
 *
 * @public
 */
export class MetricsModel<T> {
  /** Every transition and reading, in the order they were made. */
  #log: MetricsEvent<T>[] = [];

  /** [§19.2](../docs/spec.md#§19-metrics): an add that queued an item or marked it dirty. */
  added(): void {
    this.#log.push({ kind: "added" });
  }

  /** [§19.7](../docs/spec.md#§19-metrics): a `retry` that requested a requeue. */
  retried(): void {
    this.#log.push({ kind: "retried" });
  }

  /**
   * [§19.3](../docs/spec.md#§19-metrics): `item` was appended to the queue.
   *
   * @param item - An item neither queued nor in flight.
   * @param nowMs - The time ([§19.9](../docs/spec.md#§19-metrics)).
   */
  queued(item: T, nowMs: number): void {
    this.#checkTime(nowMs);
    const state = this.stateOf(item);
    if (state !== "absent") {
      throw new Error(`Cannot record queued(${show(item)}): it is ${state === "queued" ? "already queued" : state}`);
    }
    this.#log.push({ kind: "queued", item, atMs: nowMs });
  }

  /**
   * [§19.3](../docs/spec.md#§19-metrics): `item` was handed out.
   *
   * @param item - A queued item.
   * @param nowMs - The time ([§19.9](../docs/spec.md#§19-metrics)).
   */
  handedOut(item: T, nowMs: number): void {
    this.#checkTime(nowMs);
    if (this.stateOf(item) !== "queued") throw new Error(`Cannot record handedOut(${show(item)}): it is not queued`);
    this.#log.push({ kind: "handedOut", item, atMs: nowMs });
  }

  /**
   * [§19.4](../docs/spec.md#§19-metrics): the `done` of `item`, which was in flight.
   *
   * @param item - An item in flight.
   * @param nowMs - The time ([§19.9](../docs/spec.md#§19-metrics)).
   */
  finished(item: T, nowMs: number): void {
    this.#checkTime(nowMs);
    if (this.stateOf(item) !== "in flight")
      throw new Error(`Cannot record finished(${show(item)}): it is not in flight`);
    this.#log.push({ kind: "finished", item, atMs: nowMs });
  }

  /**
   * Where `item` is, as the transitions say: the kind of its last `queued`, `handedOut` or `finished`.
   *
   * @param item - Any value.
   */
  stateOf(item: T): "absent" | "queued" | "in flight" {
    const last = this.#log.filter((e) => same(e.item, item)).at(-1);
    if (last?.kind === "queued") return "queued";
    return last?.kind === "handedOut" ? "in flight" : "absent";
  }

  /** [§19.3](../docs/spec.md#§19-metrics): one observation per hand-out, since the last time the item was queued. */
  queueDurations(): number[] {
    return this.#since("handedOut");
  }

  /** [§19.4](../docs/spec.md#§19-metrics): one observation per `finished`, since the last time the item was handed out. */
  workDurations(): number[] {
    return this.#since("finished");
  }

  /**
   * [§19](../docs/spec.md#§19-metrics): the metrics at `nowMs`, from the whole log.
   *
   * @param nowMs - The time ([§19.9](../docs/spec.md#§19-metrics)).
   */
  read(nowMs: number): MetricsModelReading {
    this.#checkTime(nowMs);
    this.#log.push({ kind: "read", atMs: nowMs });
    const items = [...new Set(this.#log.map((e) => e.item))].filter((item) => item !== undefined) as T[];
    // §19.5, §19.6: the last transition of each item in flight is its hand-out; in the order of the log.
    const flying = this.#log.filter((e, i) => this.stateOf(e.item as T) === "in flight" && !laterFor(this.#log, i));
    const ages = flying.map((e) => nowMs - (e.atMs as number));
    return {
      depth: items.filter((item) => this.stateOf(item) === "queued").length, // §19.1
      adds: this.#log.filter((e) => e.kind === "added").length, // §19.2
      retries: this.#log.filter((e) => e.kind === "retried").length, // §19.7
      queueDuration: { count: this.queueDurations().length, sumMs: sum(this.queueDurations()) }, // §19.3
      workDuration: { count: this.workDurations().length, sumMs: sum(this.workDurations()) }, // §19.4
      unfinishedWorkMs: sum(ages), // §19.5, added in hand-out order (§19.9)
      longestRunningMs: Math.max(0, ...ages), // §19.6: 0 when nothing is in flight
    };
  }

  /**
   * For each `end` transition, its time minus that of the item's transition before it: the `queued` before a
   * `handedOut`, the `handedOut` before a `finished` (the only transitions that can come before them).
   */
  #since(end: "handedOut" | "finished"): number[] {
    return this.#log.flatMap((e, i) => {
      if (e.kind !== end) return [];
      const before = this.#log.slice(0, i).filter((s) => same(s.item, e.item as T));
      return [(e.atMs as number) - (before.at(-1)?.atMs as number)];
    });
  }

  /** [§19.9](../docs/spec.md#§19-metrics): a time is a finite number, no earlier than the last one given. */
  #checkTime(nowMs: number): void {
    const times = this.#log.flatMap((e) => (e.atMs === undefined ? [] : [e.atMs]));
    if (Number.isFinite(nowMs) && times.every((t) => t <= nowMs)) return;
    const last = times.at(-1);
    const what = last === undefined ? "" : ` no earlier than ${last}, the last time given`;
    const type = nowMs === null ? "null" : typeof nowMs;
    throw new RangeError(`Expected \`nowMs\` to be a finite number${what}, got \`${show(nowMs)}\` (${type})`);
  }
}
