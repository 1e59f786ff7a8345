/**
 * Deliberately wrong timed queues (docs/spec.md §17, §7.3), each with one realistic mistake, to prove that the
 * gate rejects them. `TimedQueue` with no defect is a plain, correct timed queue (arrays and Maps, one timer at a
 * time on the gate's clock); each defect changes one rule.
 */
import type { SubjectOptions } from "../../core/subject.js";

/**
 * The mistakes:
 * - `add keeps the wait`: an `add` of a waiting item does not end the wait, so it is processed again later
 *   (client-go, kubernetes/kubernetes#126027);
 * - `latest due wins`: a second `addAfter` replaces the due time even when it is later;
 * - `ties LIFO`: items due at the same time are added newest first;
 * - `shutdown drops waits`: `shutDown` forgets the waiting items (client-go's delaying queue);
 * - `retry ignores backoff`: `retry` requeues at once;
 * - `backoff overflows`: the exponential backoff is computed with a 32-bit shift, which wraps to a negative delay
 *   after 32 failures, so the item comes back at once;
 * - `late by one`: an item falls due only once the time is past its due time;
 * - `re-arms forever`: the timer takes only items due before now, and re-arms for the earliest due time, which has
 *   come: it runs again at once, for ever.
 * - `retry clears the dirty mark`: a `retry` that backs off makes an item in flight and dirty wait, clearing its
 *   mark, where §17.2 says it does not wait and nothing changes (4 calls: `add`, `get`, `add`, `retry`);
 * - `rounds due times up`: time is kept in whole milliseconds, a due time rounded up to the next one (as a timer
 *   API that takes integers would), so an item due at a fraction falls due late (§17.5; 2 calls with a fractional
 *   delay, never with whole ones);
 * - `rounds due times down`: the same, rounded down, so an item due at a fraction falls due early (§17.5; 2 calls:
 *   `addAfter(a, 0.5)`, `advance(0)`);
 * - `forget keeps the backoff`: the backoff counts the item's failures itself, as client-go's limiters do, and
 *   `forget` clears the queue's count but not that one, so the next backoff after a `forget` is too long (§8.1,
 *   §18.2; 6 calls: `retry`, `add`, `get`, `forget`, `retry`, `advance`);
 * - `zero delay waits`: `addAfter` with a delay that is not positive makes the item wait until now, so it is added
 *   only at the next `advance`, where §17.1 makes it an `add` (1 call);
 * - `whole delays only`: `addAfter` refuses a delay that is not a whole number of milliseconds with a
 *   `RangeError`, where §17.8 allows any finite delay (1 call, with a fractional delay);
 * - `falling due refused while shutting down`: an item that falls due while the queue shuts down is added through
 *   `add`, which refuses it, so the wait asked for before the shutdown is lost (client-go's delaying queue stops
 *   its waiting loop at shutdown; §17.7; 3 calls: `addAfter`, `shutDown`, `advance`);
 * - `backoff from the second failure`: the backoff after the `n`-th failure is `baseMs · 2^n`, one doubling too
 *   many (§18.2).
 *
 * And in the metrics (docs/spec.md §19), mostly client-go's own definitions where §16 says why ours differ:
 * - `depth counts dirty`: the depth counts the items marked dirty in flight as well (client-go);
 * - `latency from the first add`: the queue duration starts at the add that marked the item dirty, not when it was
 *   queued (client-go);
 * - `every add counts`: an add of an item already queued or dirty is counted too;
 * - `give-ups count as retries`: a `retry` that gives up is counted;
 * - `gauges on a ticker`: the unfinished work and the longest running are computed at the time of the queue's last
 *   call, not when they are read (client-go updates them every 500 ms).
 */
export type TimedDefect =
  | "add keeps the wait"
  | "latest due wins"
  | "ties LIFO"
  | "shutdown drops waits"
  | "retry ignores backoff"
  | "backoff overflows"
  | "late by one"
  | "re-arms forever"
  | "retry clears the dirty mark"
  | "rounds due times up"
  | "rounds due times down"
  | "forget keeps the backoff"
  | "backoff from the second failure"
  | "zero delay waits"
  | "whole delays only"
  | "falling due refused while shutting down"
  | "depth counts dirty"
  | "latency from the first add"
  | "every add counts"
  | "give-ups count as retries"
  | "gauges on a ticker";

type State = "queued" | "in flight" | "in flight + dirty";

interface Wait {
  readonly item: unknown;
  due: number;
  order: number;
}

/** A timed queue on the gate's clock, correct unless given a defect. */
export class TimedQueue {
  readonly #maxRetries: number;
  readonly #clock: NonNullable<SubjectOptions["clock"]>;
  readonly #backoff: SubjectOptions["backoff"];
  readonly #defect: TimedDefect | undefined;
  readonly #states = new Map<unknown, State>();
  readonly #queue: unknown[] = [];
  readonly #counts = new Map<unknown, number>();
  /** The backoff's own failure counts, used only by `forget keeps the backoff`. */
  readonly #backoffCounts = new Map<unknown, number>();
  #waits: Wait[] = [];
  #requests = 0;
  #shut = false;
  #cancel: (() => void) | undefined;
  /** The metrics: counts, observations, and when each queued or in-flight item was queued or handed out. */
  #adds = 0;
  #retries = 0;
  readonly #queuedAt = new Map<unknown, number>();
  readonly #handedOutAt = new Map<unknown, number>();
  readonly #queueDuration = { count: 0, sumMs: 0 };
  readonly #workDuration = { count: 0, sumMs: 0 };
  #lastCall = 0;

  constructor(options: SubjectOptions, defect?: TimedDefect) {
    if (options.clock === undefined) throw new TypeError("a timed queue needs a clock");
    this.#maxRetries = options.maxRetries;
    this.#clock = options.clock;
    this.#backoff = options.backoff;
    this.#defect = defect;
  }

  get size(): number {
    return this.#queue.length;
  }

  get inFlight(): number {
    return [...this.#states.values()].filter((s) => s !== "queued").length;
  }

  get waiting(): number {
    return this.#waits.length;
  }

  get shuttingDown(): boolean {
    return this.#shut;
  }

  /** The metrics now, in milliseconds. */
  metrics() {
    const now = this.#defect === "gauges on a ticker" ? this.#lastCall : this.#clock.now();
    const ages = [...this.#handedOutAt.values()].map((at) => now - at);
    const total = (values: number[]) => values.reduce((a, b) => a + b, 0);
    const dirty = [...this.#states.values()].filter((s) => s === "in flight + dirty").length;
    return {
      depth: this.#queue.length + (this.#defect === "depth counts dirty" ? dirty : 0),
      adds: this.#adds,
      retries: this.#retries,
      queueDuration: { ...this.#queueDuration },
      workDuration: { ...this.#workDuration },
      unfinishedWorkMs: total(ages),
      longestRunningMs: ages.reduce((a, b) => Math.max(a, b), 0),
    };
  }

  add(item: unknown): void {
    check(item);
    this.#lastCall = this.#clock.now();
    if (this.#shut) return;
    if (this.#defect !== "add keeps the wait") this.#waits = this.#waits.filter((w) => !same(w.item, item));
    this.#enter(item);
    this.#arm();
  }

  addAfter(item: unknown, delayMs: number): void {
    check(item);
    if (typeof delayMs !== "number") throw new TypeError(`not a delay: ${String(delayMs)}`);
    if (!Number.isFinite(delayMs)) throw new RangeError(`not a finite delay: ${delayMs}`);
    if (this.#defect === "whole delays only" && !Number.isInteger(delayMs)) {
      throw new RangeError(`not a whole number of milliseconds: ${delayMs}`);
    }
    if (delayMs <= 0 && this.#defect === "zero delay waits") {
      if (!this.#shut) this.#wait(item, 0);
      return;
    }
    if (delayMs <= 0) {
      this.add(item);
      return;
    }
    if (this.#shut) return;
    this.#wait(item, delayMs);
  }

  get(): unknown {
    this.#lastCall = this.#clock.now();
    if (this.#queue.length === 0) return undefined;
    const item = this.#queue.shift();
    this.#states.set(item, "in flight");
    this.#queueDuration.count++;
    this.#queueDuration.sumMs += this.#clock.now() - (this.#queuedAt.get(item) as number);
    this.#queuedAt.delete(item);
    this.#handedOutAt.set(item, this.#clock.now());
    return item;
  }

  done(item: unknown): void {
    check(item);
    this.#lastCall = this.#clock.now();
    const state = this.#states.get(item);
    if (state === "in flight" || state === "in flight + dirty") {
      this.#workDuration.count++;
      this.#workDuration.sumMs += this.#clock.now() - (this.#handedOutAt.get(item) as number);
      this.#handedOutAt.delete(item);
    }
    if (state === "in flight") this.#states.delete(item);
    if (state === "in flight + dirty") {
      this.#states.set(item, "queued");
      this.#queue.push(item);
      if (!this.#queuedAt.has(item)) this.#queuedAt.set(item, this.#clock.now());
    }
  }

  retry(item: unknown): boolean {
    check(item);
    this.#lastCall = this.#clock.now();
    const count = (this.#counts.get(item) ?? 0) + 1;
    this.#counts.set(item, count);
    const givesUp = count >= this.#maxRetries || this.#shut;
    if (!givesUp || this.#defect === "give-ups count as retries") this.#retries++;
    if (givesUp) return false;
    const own = (this.#backoffCounts.get(item) ?? 0) + 1;
    this.#backoffCounts.set(item, own);
    const delay = this.#delayOf(this.#defect === "forget keeps the backoff" ? own : count);
    if (delay <= 0) this.add(item);
    else if (this.#defect === "retry clears the dirty mark" && this.#states.get(item) === "in flight + dirty") {
      this.#states.set(item, "in flight");
      this.#wait(item, delay);
    } else this.#wait(item, delay);
    return true;
  }

  forget(item: unknown): void {
    check(item);
    this.#lastCall = this.#clock.now();
    this.#counts.delete(item);
    if (this.#defect !== "forget keeps the backoff") this.#backoffCounts.delete(item);
  }

  failures(item: unknown): number {
    check(item);
    return this.#counts.get(item) ?? 0;
  }

  shutDown(): void {
    this.#lastCall = this.#clock.now();
    this.#shut = true;
    if (this.#defect === "shutdown drops waits") {
      this.#waits = [];
      this.#arm();
    }
  }

  /** The backoff after the `count`-th failure. */
  #delayOf(count: number): number {
    if (this.#backoff === undefined || this.#defect === "retry ignores backoff") return 0;
    const { baseMs, maxMs } = this.#backoff;
    if (this.#defect === "backoff overflows") return Math.min(maxMs, baseMs * (1 << (count - 1)));
    let delay = this.#defect === "backoff from the second failure" ? 2 * baseMs : baseMs;
    for (let n = 1; n < count && delay < maxMs; n++) delay *= 2;
    return Math.min(delay, maxMs);
  }

  #wait(item: unknown, delayMs: number): void {
    const state = this.#states.get(item);
    if (state === "queued" || state === "in flight + dirty") return;
    const exact = this.#clock.now() + delayMs;
    const rounded = this.#defect === "rounds due times up" ? Math.ceil(exact) : Math.floor(exact);
    const due = this.#defect === "rounds due times up" || this.#defect === "rounds due times down" ? rounded : exact;
    const wait = this.#waits.find((w) => same(w.item, item));
    if (wait === undefined) this.#waits.push({ item, due, order: ++this.#requests });
    else if (due < wait.due || this.#defect === "latest due wins")
      Object.assign(wait, { due, order: ++this.#requests });
    this.#arm();
  }

  #enter(item: unknown): void {
    const state = this.#states.get(item);
    if (state === undefined || state === "in flight" || this.#defect === "every add counts") this.#adds++;
    if (state === undefined) {
      this.#states.set(item, "queued");
      this.#queue.push(item);
      this.#queuedAt.set(item, this.#clock.now());
    } else if (state === "in flight") {
      this.#states.set(item, "in flight + dirty");
      if (this.#defect === "latency from the first add") this.#queuedAt.set(item, this.#clock.now());
    }
  }

  /** Arms one timer for the earliest due time (one millisecond later with `late by one`). */
  #arm(): void {
    this.#cancel?.();
    this.#cancel = undefined;
    if (this.#waits.length === 0) return;
    const first = Math.min(...this.#waits.map((w) => w.due));
    this.#cancel = this.#clock.schedule(first + (this.#defect === "late by one" ? 1 : 0), () => this.#fire());
  }

  #fire(): void {
    const now = this.#clock.now();
    const late = this.#defect === "late by one" || this.#defect === "re-arms forever";
    const due = this.#waits.filter((w) => (late ? w.due < now : w.due <= now));
    due.sort((a, b) => a.due - b.due || (this.#defect === "ties LIFO" ? b.order - a.order : a.order - b.order));
    this.#waits = this.#waits.filter((w) => !due.includes(w));
    for (const w of due)
      if (!(this.#shut && this.#defect === "falling due refused while shutting down")) this.#enter(w.item);
    this.#arm();
  }
}

/** Whether two items are the same item: SameValueZero, as a `Map` compares keys (docs/spec.md §1.1). */
function same(a: unknown, b: unknown): boolean {
  return a === b || (Number.isNaN(a) && Number.isNaN(b));
}

function check(item: unknown): void {
  if (item === undefined || item === null) throw new TypeError(`not an item: ${String(item)}`);
}
