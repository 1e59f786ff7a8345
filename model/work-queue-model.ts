/**
 * The executable specification: docs/spec.md, rule by rule, as naive as it can be. Plain arrays and linear scans,
 * no caches, no cleverness; every method cites the rule it implements. It answers every call, misuse included.
 * It never imports the reference implementation.
 */

/** The state of one item (docs/spec.md §2). */
export type ItemState = "absent" | "queued" | "in flight" | "in flight + dirty";

/** A plain copy of a model's state, for comparing two models and for printing. */
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
}

/** Renders a value for an error message the way docs/spec.md §1.2 and §3 show it. */
function show(value: unknown): string {
  if (typeof value === "string") return JSON.stringify(value);
  try {
    return String(value);
  } catch {
    return Object.prototype.toString.call(value);
  }
}

/** The error message of docs/spec.md §1.2 and §3. */
function message(name: string, what: string, value: unknown): string {
  return `Expected \`${name}\` to be ${what}, got \`${show(value)}\` (${value === null ? "null" : typeof value})`;
}

/**
 * The model of a work queue. Same verbs as `WorkQueue`, same answers, same errors; in addition it shows its state
 * (`stateOf`, `snapshot`) so that properties can reason about it.
 *
 * @typeParam T - The item type.
 */
export class WorkQueueModel<T> {
  /** The failure count at which `retry` gives up (§3). */
  readonly maxRetries: number;
  /** §2: queued items, oldest first. */
  #queue: T[] = [];
  /** §2: in-flight items. */
  #inFlight: T[] = [];
  /** §2: in-flight items marked dirty. */
  #dirty: T[] = [];
  /** §2: failure counts; an item that is not listed has count 0. */
  #counts: [T, number][] = [];
  /** §2: the shutting-down flag. */
  #shuttingDown = false;

  /**
   * §3: an empty queue.
   *
   * @throws TypeError when `options` is not an object (§3.2).
   * @throws RangeError when `maxRetries` is not a non-negative integer or `Infinity` (§3.1).
   */
  constructor(options: { readonly maxRetries: number }) {
    if (typeof options !== "object" || options === null) {
      throw new TypeError(message("options", "an object such as { maxRetries: 5 }", options));
    }
    const m = options.maxRetries;
    const valid = m === Number.POSITIVE_INFINITY || (Number.isInteger(m) && m >= 0);
    if (!valid) throw new RangeError(message("maxRetries", "a non-negative integer or Infinity", m));
    this.maxRetries = m;
  }

  /** §2: which of the four states `item` is in. */
  stateOf(item: T): ItemState {
    if (this.#queue.includes(item)) return "queued";
    if (!this.#inFlight.includes(item)) return "absent";
    return this.#dirty.includes(item) ? "in flight + dirty" : "in flight";
  }

  /** §4 */
  add(item: T): void {
    check(item);
    if (this.#shuttingDown) return; // §12.3
    const state = this.stateOf(item);
    if (state === "absent") this.#queue.push(item); // §4.1
    if (state === "in flight") this.#dirty.push(item); // §4.3
  }

  /** §5 */
  get(): T | undefined {
    if (this.#queue.length === 0) return undefined; // §5.1
    const item = this.#queue.shift() as T; // §5.2
    this.#inFlight.push(item);
    return item;
  }

  /** §6 */
  done(item: T): void {
    check(item);
    if (this.stateOf(item) === "in flight + dirty") {
      this.#dirty = this.#dirty.filter((x) => !same(x, item)); // §6.2, while shutting down too (§12.5)
      this.#queue.push(item);
    }
    this.#inFlight = this.#inFlight.filter((x) => !same(x, item)); // §6.1; §6.3: not in flight, nothing changes
  }

  /** §7 */
  retry(item: T): boolean {
    check(item);
    const count = this.failures(item) + 1; // §7.1
    this.#counts = [...this.#counts.filter(([x]) => !same(x, item)), [item, count]];
    if (count >= this.maxRetries || this.#shuttingDown) return false; // §7.2, §12.4
    this.add(item); // §7.3
    return true;
  }

  /** §8.1 */
  forget(item: T): void {
    check(item);
    this.#counts = this.#counts.filter(([x]) => !same(x, item));
  }

  /** §12.1 */
  shutDown(): void {
    this.#shuttingDown = true;
  }

  /** §12.2 */
  get shuttingDown(): boolean {
    return this.#shuttingDown;
  }

  /** §9.1 */
  get size(): number {
    return this.#queue.length;
  }

  /** §9.2 */
  get inFlight(): number {
    return this.#inFlight.length;
  }

  /** §9.3 */
  failures(item: T): number {
    check(item);
    return this.#counts.find(([x]) => same(x, item))?.[1] ?? 0;
  }

  /** A copy of the state, in plain arrays. */
  snapshot(): ModelSnapshot<T> {
    return {
      queue: [...this.#queue],
      inFlight: [...this.#inFlight],
      dirty: [...this.#dirty],
      failures: this.#counts.map(([x, n]) => [x, n] as const),
      shuttingDown: this.#shuttingDown,
    };
  }
}

/** §1.1: items are compared as `Map` keys are (SameValueZero), which is what `Array#includes` does. */
function same<T>(a: T, b: T): boolean {
  return [a].includes(b);
}

/** §1.2: `undefined` and `null` are not items. */
function check(item: unknown): void {
  if (item === undefined || item === null) {
    throw new TypeError(message("item", "a value other than undefined or null", item));
  }
}
