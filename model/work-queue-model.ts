/**
 * The executable specification: docs/spec.md, rule by rule, as naive as it can be. Plain arrays and linear scans,
 * no caches, no cleverness; every method cites the rule it implements. It answers every call, misuse included.
 * It never imports the reference implementation.
 */

import type { MetricsModelReading } from "./metrics-model.js";
import { message, same, sum } from "./words.js";

/**
 * The state of one item ([docs/spec.md §2](../docs/spec.md#§2-state-and-the-callers-protocol)).
 *
 * @public
 */
export type ItemState = "absent" | "queued" | "in flight" | "in flight + dirty";

/**
 * A plain copy of a model's state, for comparing two models and for printing.
 *
 * @public
 */
export interface ModelSnapshot<T> {
  /** The queued items, oldest first. */
  readonly queue: readonly T[];
  /** The in-flight items, in the order they were handed out. */
  readonly inFlight: readonly T[];
  /** The in-flight items that are marked dirty, in the order they were marked. */
  readonly dirty: readonly T[];
  /** The items with a non-zero failure count and their counts, in the order they last failed. */
  readonly failures: readonly (readonly [T, number])[];
  /** Whether the queue is shutting down. */
  readonly shuttingDown: boolean;
  /** The current time, in milliseconds ([§17](../docs/spec.md#§17-delayed-adds)). */
  readonly now: number;
  /** The waiting items and their due times, in the order their due times were set ([§17](../docs/spec.md#§17-delayed-adds)). */
  readonly waiting: readonly (readonly [T, number])[];
}

/**
 * A rate limiter as [docs/spec.md §18.1](../docs/spec.md#§18-backoff-and-rate-limiters) defines it: the delay of the requeue after an item's `failures`-th failure.
 *
 * @public
 */
export interface ModelRateLimiter<T> {
  /**
   * The delay in milliseconds ([§18.1](../docs/spec.md#§18-backoff-and-rate-limiters)).
   *
   * @param item - The item that failed.
   * @param failures - Its failure count, this failure included.
   * @param nowMs - The current time.
   */
  when(item: T, failures: number, nowMs: number): number;
  /**
   * Forgets what the limiter remembers of `item` ([§18.1](../docs/spec.md#§18-backoff-and-rate-limiters)).
   *
   * @param item - The item that was forgotten.
   */
  forget?(item: T): void;
}

/**
 * The options of a model: `maxRetries` ([§3.1](../docs/spec.md#§3-construction)) and a rate limiter ([§3.3](../docs/spec.md#§3-construction)).
 *
 * @public
 */
export interface ModelOptions<T> {
  /** [§3.1](../docs/spec.md#§3-construction) */
  readonly maxRetries: number;
  /** [§3.3](../docs/spec.md#§3-construction), [§7.3](../docs/spec.md#§7) @defaultValue none: a requeue is an `add` */
  readonly rateLimiter?: ModelRateLimiter<T> | undefined;
}

/** A waiting item ([§17](../docs/spec.md#§17-delayed-adds)): its due time, and when that due time was set, for ties ([§17.5](../docs/spec.md#§17-delayed-adds)). */
interface Wait<T> {
  readonly item: T;
  due: number;
  order: number;
}

/**
 * The model of a work queue. Same verbs as `WorkQueue`, same answers, same errors; in addition it shows its state
 * (`stateOf`, `snapshot`) so that properties can reason about it.
 *
 * @typeParam T - The item type.
 * @example
 * ```ts
 * import { WorkQueueModel } from "workqueue-spec/model";
 *
 * const model = new WorkQueueModel<string>({ maxRetries: 1 });
 * model.add("a");
 * model.get(); // "a"
 * model.add("a"); // marked dirty: it is in flight
 * model.stateOf("a"); // "in flight + dirty"
 * model.retry("a"); // false: the first failure reaches maxRetries 1
 * model.done("a"); // requeued by its dirty mark
 * model.snapshot().queue; // ["a"]
 * ```
 *
 * @public
 */
export class WorkQueueModel<T> {
  /** The failure count at which `retry` gives up ([§3](../docs/spec.md#§3-construction)). */
  readonly maxRetries: number;
  /** [§2](../docs/spec.md#§2-state-and-the-callers-protocol): queued items, oldest first. */
  #queue: T[] = [];
  /** [§2](../docs/spec.md#§2-state-and-the-callers-protocol): in-flight items. */
  #inFlight: T[] = [];
  /** [§2](../docs/spec.md#§2-state-and-the-callers-protocol): in-flight items marked dirty. */
  #dirty: T[] = [];
  /** [§2](../docs/spec.md#§2-state-and-the-callers-protocol): failure counts; an item that is not listed has count 0. */
  #counts: [T, number][] = [];
  /** [§2](../docs/spec.md#§2-state-and-the-callers-protocol): the shutting-down flag. */
  #shuttingDown = false;
  /** [§3.3](../docs/spec.md#§3-construction): the rate limiter, if any. */
  readonly #rateLimiter: ModelRateLimiter<T> | undefined;
  /** [§17](../docs/spec.md#§17-delayed-adds): the time, in milliseconds; it starts at 0. */
  #now = 0;
  /** [§17](../docs/spec.md#§17-delayed-adds): the waiting items, in no particular order. */
  #waiting: Wait<T>[] = [];
  /** [§17.5](../docs/spec.md#§17-delayed-adds): how many due times were set, so that ties are broken by it. */
  #requests = 0;
  /** [§19.2](../docs/spec.md#§19-metrics): the adds counted. */
  #adds = 0;
  /** [§19.7](../docs/spec.md#§19-metrics): the retries counted. */
  #retries = 0;
  /** [§19.3](../docs/spec.md#§19-metrics), [§19.4](../docs/spec.md#§19-metrics): each queued or in-flight item and when it was queued or handed out. */
  readonly #since = new Map<T, number>(); // a Map compares keys as `same` does (§1.1)
  /** [§19.3](../docs/spec.md#§19-metrics): the queue durations observed: how many, and their sum in the order they were observed ([§19.9](../docs/spec.md#§19-metrics)). */
  #queueDuration = { count: 0, sumMs: 0 };
  /** [§19.4](../docs/spec.md#§19-metrics): the work durations observed, likewise. */
  #workDuration = { count: 0, sumMs: 0 };

  /**
   * [§3](../docs/spec.md#§3-construction): an empty queue.
   *
   * @param options - `maxRetries`: a non-negative integer or `Infinity` ([§3.1](../docs/spec.md#§3-construction)); `rateLimiter`, if any ([§3.3](../docs/spec.md#§3-construction)).
   * @throws TypeError when `options` is not an object ([§3.2](../docs/spec.md#§3-construction)), or `rateLimiter` not a limiter ([§3.3](../docs/spec.md#§3-construction)).
   * @throws RangeError when `maxRetries` is not a non-negative integer or `Infinity` ([§3.1](../docs/spec.md#§3-construction)).
   */
  constructor(options: ModelOptions<T>) {
    if (typeof options !== "object" || options === null) {
      throw new TypeError(message("options", "an object such as { maxRetries: 5 }", options));
    }
    const m = options.maxRetries;
    const valid = m === Number.POSITIVE_INFINITY || (Number.isInteger(m) && m >= 0);
    if (!valid) throw new RangeError(message("maxRetries", "a non-negative integer or Infinity", m));
    const limiter = options.rateLimiter;
    const limits =
      limiter === undefined ||
      (typeof limiter === "object" &&
        limiter !== null &&
        typeof limiter.when === "function" &&
        (limiter.forget === undefined || typeof limiter.forget === "function"));
    if (!limits) throw new TypeError(message("rateLimiter", "undefined or an object with a `when` method", limiter)); // §3.3
    this.maxRetries = m;
    this.#rateLimiter = limiter;
  }

  /**
   * [§2](../docs/spec.md#§2-state-and-the-callers-protocol): which of the four states `item` is in.
   *
   * @param item - Any value; `undefined` and `null` are never queued, so they are `absent`.
   */
  stateOf(item: T): ItemState {
    if (this.#queue.includes(item)) return "queued";
    if (!this.#inFlight.includes(item)) return "absent";
    return this.#dirty.includes(item) ? "in flight + dirty" : "in flight";
  }

  /**
   * [§4](../docs/spec.md#§4)
   *
   * @param item - The item to add ([§4](../docs/spec.md#§4)).
   */
  add(item: T): void {
    check(item);
    if (this.#shuttingDown) return; // §12.3
    this.#waiting = this.#waiting.filter((w) => !same(w.item, item)); // §17.4: an add ends the wait
    this.#enter(item);
  }

  /** [§4.1](../docs/spec.md#§4), [§4.3](../docs/spec.md#§4): what an accepted add does, also when a wait falls due ([§17.5](../docs/spec.md#§17-delayed-adds)). */
  #enter(item: T): void {
    const state = this.stateOf(item);
    if (state === "absent" || state === "in flight") this.#adds++; // §19.2
    if (state === "absent") this.#push(item); // §4.1
    if (state === "in flight") this.#dirty.push(item); // §4.3
  }

  /** [§4.1](../docs/spec.md#§4), [§6.2](../docs/spec.md#§6): `item` goes to the tail, and its queue duration starts ([§19.3](../docs/spec.md#§19-metrics)). */
  #push(item: T): void {
    this.#queue.push(item);
    this.#since.set(item, this.#now);
  }

  /** [§19.3](../docs/spec.md#§19-metrics), [§19.4](../docs/spec.md#§19-metrics): the time since `item` was queued or handed out, and it is no longer. */
  #elapsed(item: T): number {
    const at = this.#since.get(item) as number;
    this.#since.delete(item);
    return this.#now - at;
  }

  /**
   * [§17](../docs/spec.md#§17-delayed-adds)
   *
   * @param item - The item to add later ([§17](../docs/spec.md#§17-delayed-adds)).
   * @param delayMs - How long it waits, in milliseconds ([§17.1](../docs/spec.md#§17-delayed-adds), [§17.8](../docs/spec.md#§17-delayed-adds)).
   */
  addAfter(item: T, delayMs: number): void {
    check(item); // §17.8
    if (typeof delayMs !== "number") throw new TypeError(message("delayMs", "a number", delayMs)); // §17.8
    if (!Number.isFinite(delayMs)) throw new RangeError(message("delayMs", "a finite number", delayMs)); // §17.8
    if (delayMs <= 0) {
      this.add(item); // §17.1
      return;
    }
    if (this.#shuttingDown) return; // §17.7
    const state = this.stateOf(item);
    if (state === "queued" || state === "in flight + dirty") return; // §17.2
    const due = this.#now + delayMs;
    const wait = this.#waiting.find((w) => same(w.item, item));
    if (wait === undefined)
      this.#waiting.push({ item, due, order: ++this.#requests }); // §17.2
    else if (due < wait.due) Object.assign(wait, { due, order: ++this.#requests }); // §17.3: the earlier wins
  }

  /**
   * [§18.9](../docs/spec.md#§18-backoff-and-rate-limiters): time moves forward by `ms`; every waiting item whose due time is passed falls due ([§17.5](../docs/spec.md#§17-delayed-adds)) at its due
   * time, earliest first, ties in the order their due times were set.
   *
   * @param ms - How far to move, in milliseconds: a non-negative finite number ([§18.9](../docs/spec.md#§18-backoff-and-rate-limiters)).
   */
  advance(ms: number): void {
    if (!(Number.isFinite(ms) && ms >= 0)) throw new RangeError(message("ms", "a non-negative finite number", ms));
    const end = this.#now + ms;
    // What falls due is known before anything does: falling due adds, and an add never makes an item wait.
    const due = this.#waiting.filter((w) => w.due <= end).sort((a, b) => a.due - b.due || a.order - b.order);
    for (const wait of due) {
      this.#now = wait.due;
      this.#waiting = this.#waiting.filter((w) => w !== wait);
      this.#enter(wait.item); // §17.5, while shutting down too (§17.7)
    }
    this.#now = end;
  }

  /** [§5](../docs/spec.md#§5) */
  get(): T | undefined {
    if (this.#queue.length === 0) return undefined; // §5.1
    const item = this.#queue.shift() as T; // §5.2
    this.#inFlight.push(item);
    this.#queueDuration = observe(this.#queueDuration, this.#elapsed(item)); // §19.3
    this.#since.set(item, this.#now); // §19.4: its work starts
    return item;
  }

  /**
   * [§6](../docs/spec.md#§6)
   *
   * @param item - The item whose processing ended ([§6](../docs/spec.md#§6)).
   */
  done(item: T): void {
    check(item);
    const state = this.stateOf(item);
    if (state.startsWith("in flight")) this.#workDuration = observe(this.#workDuration, this.#elapsed(item)); // §19.4; §6.3: nothing
    if (state === "in flight + dirty") {
      this.#dirty = this.#dirty.filter((x) => !same(x, item)); // §6.2, while shutting down too (§12.5)
      this.#push(item);
    }
    this.#inFlight = this.#inFlight.filter((x) => !same(x, item)); // §6.1; §6.3: not in flight, nothing changes
  }

  /**
   * [§20.3](../docs/spec.md#§20-leases-on-postgresql): the lease of `item`, which is in flight, expired. It goes back to the tail of the queue, dirty or
   * not, while shutting down too, as the `done` of a dirty item does (§6.2); its wait ends, as an add's does (§17.4),
   * and its failure count is kept. An item that is not in flight: nothing changes.
   *
   * @param item - The item whose lease expired.
   */
  expire(item: T): void {
    if (this.stateOf(item) === "in flight") {
      this.#waiting = this.#waiting.filter((w) => !same(w.item, item)); // §17.4: the requeue serves the wait
      this.#dirty.push(item); // §20.3: the requeue a dirty mark asks for
    }
    this.done(item); // §6.2: a dirty item is requeued; §6.3: an item not in flight, nothing
  }

  /**
   * [§20.18](../docs/spec.md#§20-leases-on-postgresql): the lease of `item`, which is in flight, is given back: it is queued again at `index` of the
   * queue (0 is the head; past the tail is the tail), its dirty mark and its wait served by that, its failure count
   * kept. Its queue duration (§19.3) counts from when it was handed out: what the caller knows of its place is an
   * index, not a time. An item that is not in flight: nothing changes.
   *
   * @param item - The item whose lease is given back.
   * @param index - Where it goes in the queue.
   */
  restore(item: T, index: number): void {
    if (!this.stateOf(item).startsWith("in flight")) return;
    this.#inFlight = this.#inFlight.filter((x) => !same(x, item));
    this.#dirty = this.#dirty.filter((x) => !same(x, item)); // §20.18: the requeue serves the dirty mark
    this.#waiting = this.#waiting.filter((w) => !same(w.item, item)); // §20.18: and the wait
    this.#queue.splice(index, 0, item);
  }

  /**
   * [§7](../docs/spec.md#§7)
   *
   * @param item - The item that failed ([§7](../docs/spec.md#§7)).
   */
  retry(item: T): boolean {
    check(item);
    const count = this.failures(item) + 1; // §7.1
    const givesUp = count >= this.maxRetries || this.#shuttingDown; // §7.2, §12.4
    const delay = givesUp ? 0 : (this.#rateLimiter?.when(item, count, this.#now) ?? 0); // §7.3: asked only for a requeue
    if (!Number.isFinite(delay))
      throw new RangeError(message("rateLimiter.when(item, failures, nowMs)", "a finite number", delay)); // §7.3
    this.#counts = [...this.#counts.filter(([x]) => !same(x, item)), [item, count]];
    if (givesUp) return false;
    this.#retries++; // §19.7
    this.addAfter(item, delay); // §7.3: a delay that is not positive is an add (§17.1)
    return true;
  }

  /**
   * [§8.1](../docs/spec.md#§8)
   *
   * @param item - The item whose count is cleared ([§8](../docs/spec.md#§8)).
   */
  forget(item: T): void {
    check(item);
    this.#counts = this.#counts.filter(([x]) => !same(x, item));
    this.#rateLimiter?.forget?.(item); // §8.1
  }

  /** [§12.1](../docs/spec.md#§12-shutdown) */
  shutDown(): void {
    this.#shuttingDown = true;
  }

  /** [§12.2](../docs/spec.md#§12-shutdown) */
  get shuttingDown(): boolean {
    return this.#shuttingDown;
  }

  /** [§9.1](../docs/spec.md#§9-views) */
  get size(): number {
    return this.#queue.length;
  }

  /** [§9.2](../docs/spec.md#§9-views) */
  get inFlight(): number {
    return this.#inFlight.length;
  }

  /** [§9.4](../docs/spec.md#§9-views), [§17.6](../docs/spec.md#§17-delayed-adds) */
  get waiting(): number {
    return this.#waiting.length;
  }

  /** [§17](../docs/spec.md#§17-delayed-adds): the current time, in milliseconds. */
  get now(): number {
    return this.#now;
  }

  /**
   * [§17](../docs/spec.md#§17-delayed-adds): when `item` falls due, or `undefined` when it is not waiting.
   *
   * @param item - Any value.
   */
  dueOf(item: T): number | undefined {
    return this.#waiting.find((w) => same(w.item, item))?.due;
  }

  /**
   * [§9.3](../docs/spec.md#§9-views)
   *
   * @param item - The item whose count is read ([§9.3](../docs/spec.md#§9-views)).
   */
  failures(item: T): number {
    check(item);
    return this.#counts.find(([x]) => same(x, item))?.[1] ?? 0;
  }

  /**
   * [§19](../docs/spec.md#§19-metrics): the metrics now, computed from every transition since the queue was made.
   */
  metrics(): MetricsModelReading {
    const ages = this.#inFlight.map((item) => this.#now - (this.#since.get(item) as number));
    return {
      depth: this.#queue.length, // §19.1
      adds: this.#adds, // §19.2
      retries: this.#retries, // §19.7
      queueDuration: this.#queueDuration, // §19.3
      workDuration: this.#workDuration, // §19.4
      unfinishedWorkMs: sum(ages), // §19.5, in hand-out order (§19.9)
      longestRunningMs: ages.reduce((a, b) => Math.max(a, b), 0), // §19.6: 0 when nothing is in flight
    };
  }

  /** A copy of the state, in plain arrays. */
  snapshot(): ModelSnapshot<T> {
    return {
      queue: [...this.#queue],
      inFlight: [...this.#inFlight],
      dirty: [...this.#dirty],
      failures: this.#counts.map(([x, n]) => [x, n] as const),
      shuttingDown: this.#shuttingDown,
      now: this.#now,
      waiting: [...this.#waiting].sort((a, b) => a.order - b.order).map((w) => [w.item, w.due] as const),
    };
  }
}

/** [§19.3](../docs/spec.md#§19-metrics), [§19.4](../docs/spec.md#§19-metrics): the totals with one more observation of `ms`, added last ([§19.9](../docs/spec.md#§19-metrics)). */
function observe(totals: { count: number; sumMs: number }, ms: number): { count: number; sumMs: number } {
  return { count: totals.count + 1, sumMs: totals.sumMs + ms };
}

/** [§1.2](../docs/spec.md#§1-items): `undefined` and `null` are not items. */
function check(item: unknown): void {
  if (item === undefined || item === null) {
    throw new TypeError(message("item", "a value other than undefined or null", item));
  }
}
