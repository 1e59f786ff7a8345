/**
 * Deliberately wrong timed queues (docs/spec.md §17, §7.3), each with one realistic mistake, to prove that the
 * gate rejects them. `TimedQueue` with no defect is a plain, correct timed queue (arrays and Maps, one timer at a
 * time on the gate's clock); each defect changes one rule.
 */
import type { SubjectOptions } from "../../engine/subject.js";

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
 */
export type TimedDefect =
  | "add keeps the wait"
  | "latest due wins"
  | "ties LIFO"
  | "shutdown drops waits"
  | "retry ignores backoff"
  | "backoff overflows"
  | "late by one"
  | "re-arms forever";

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
  #waits: Wait[] = [];
  #requests = 0;
  #shut = false;
  #cancel: (() => void) | undefined;

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

  add(item: unknown): void {
    check(item);
    if (this.#shut) return;
    if (this.#defect !== "add keeps the wait") this.#waits = this.#waits.filter((w) => w.item !== item);
    this.#enter(item);
    this.#arm();
  }

  addAfter(item: unknown, delayMs: number): void {
    check(item);
    if (typeof delayMs !== "number") throw new TypeError(`not a delay: ${String(delayMs)}`);
    if (!Number.isFinite(delayMs)) throw new RangeError(`not a finite delay: ${delayMs}`);
    if (delayMs <= 0) {
      this.add(item);
      return;
    }
    if (this.#shut) return;
    this.#wait(item, delayMs);
  }

  get(): unknown {
    if (this.#queue.length === 0) return undefined;
    const item = this.#queue.shift();
    this.#states.set(item, "in flight");
    return item;
  }

  done(item: unknown): void {
    check(item);
    const state = this.#states.get(item);
    if (state === "in flight") this.#states.delete(item);
    if (state === "in flight + dirty") {
      this.#states.set(item, "queued");
      this.#queue.push(item);
    }
  }

  retry(item: unknown): boolean {
    check(item);
    const count = (this.#counts.get(item) ?? 0) + 1;
    this.#counts.set(item, count);
    if (count >= this.#maxRetries || this.#shut) return false;
    const delay = this.#delayOf(count);
    if (delay > 0) this.#wait(item, delay);
    else this.add(item);
    return true;
  }

  forget(item: unknown): void {
    check(item);
    this.#counts.delete(item);
  }

  failures(item: unknown): number {
    check(item);
    return this.#counts.get(item) ?? 0;
  }

  shutDown(): void {
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
    let delay = baseMs;
    for (let n = 1; n < count && delay < maxMs; n++) delay *= 2;
    return Math.min(delay, maxMs);
  }

  #wait(item: unknown, delayMs: number): void {
    const state = this.#states.get(item);
    if (state === "queued" || state === "in flight + dirty") return;
    const due = this.#clock.now() + delayMs;
    const wait = this.#waits.find((w) => w.item === item);
    if (wait === undefined) this.#waits.push({ item, due, order: ++this.#requests });
    else if (due < wait.due || this.#defect === "latest due wins")
      Object.assign(wait, { due, order: ++this.#requests });
    this.#arm();
  }

  #enter(item: unknown): void {
    const state = this.#states.get(item);
    if (state === undefined) {
      this.#states.set(item, "queued");
      this.#queue.push(item);
    } else if (state === "in flight") this.#states.set(item, "in flight + dirty");
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
    for (const w of due) this.#enter(w.item);
    this.#arm();
  }
}

function check(item: unknown): void {
  if (item === undefined || item === null) throw new TypeError(`not an item: ${String(item)}`);
}
