/**
 * The executable specification of leases ([docs/spec.md §20](../docs/spec.md#§20-leases-on-postgresql)): a `WorkQueueModel` for the rules of §4–§12,
 * and beside it, naively, the latest lease of every item. Every method cites the rule it implements.
 */
import { backoffModel } from "./clock-model.js";
import { message } from "./words.js";
import { WorkQueueModel } from "./work-queue-model.js";

/**
 * A lease as the model hands it out ([§20.2](../docs/spec.md#§20-leases-on-postgresql)).
 *
 * @public
 */
export interface ModelLease {
  /** The item. */
  readonly item: string;
  /** Its fencing token. */
  readonly token: number;
  /** When it expires, in milliseconds. */
  readonly expiresAt: number;
}

/** The latest lease of an item and what became of it ([§20.4](../docs/spec.md#§20-leases-on-postgresql)). */
interface Held {
  readonly token: number;
  expiresAt: number;
  /** Its item's place in the queue when it was handed out ({@link LeaseModel.places}): a give-back restores it (§20.18). */
  readonly place: number;
  /** How it ended, if it did: by `done`, by expiring (§20.3) or by a give-back (§20.18), which makes its token stale. */
  ended?: "done" | "expired" | "given back";
}

/**
 * What a fenced call answered: its answer, or `"stale"` when the lease was refused and nothing changed
 * ([§20.4](../docs/spec.md#§20-leases-on-postgresql)).
 *
 * @public
 */
export type Fenced<V> =
  | {
      /** Accepted. */
      readonly stale: false;
      /** The call's answer. */
      readonly value: V;
    }
  | {
      /** Refused: nothing changed. */
      readonly stale: true;
    };

/**
 * The model of a queue with leases ([docs/spec.md §20](../docs/spec.md#§20-leases-on-postgresql)), on a clock that starts at 0 and moves only by `advance`.
 *
 * @public
 * @example
 * ```ts
 * const model = new LeaseModel({ maxRetries: 5, leaseMs: 100 });
 * model.add("a");
 * const lease = model.get(); // { item: "a", token: 1, expiresAt: 100 }
 * model.advance(100); // the lease expires: "a" is queued again
 * model.done(lease!); // { stale: true }: refused, nothing changed
 * ```
 */
export class LeaseModel {
  /** The rules of §4–§12, and the clock. */
  readonly queue: WorkQueueModel<string>;
  /** [§20.2](../docs/spec.md#§20-leases-on-postgresql): how long a lease lasts. */
  readonly leaseMs: number;
  /** [§20.2](../docs/spec.md#§20-leases-on-postgresql): the latest lease of each item that was ever handed out. */
  readonly #leases = new Map<string, Held>();
  /** [§20.2](../docs/spec.md#§20-leases-on-postgresql): the last token handed out; tokens only grow. */
  #tokens = 0;
  /**
   * [§20.18](../docs/spec.md#§20-leases-on-postgresql): the place of each queued item, a number that grows with each entry into the queue, so that the
   * queue is in the order of its places; filled in by `#stamp` before the places are read.
   */
  readonly #places = new Map<string, number>();
  /** The last place given out. */
  #entries = 0;

  /**
   * @param options - `maxRetries` ([§3.1](../docs/spec.md#§3-construction)), `leaseMs`, a positive finite number, and the exponential backoff of
   *   `retry`, if any ([§18.2](../docs/spec.md#§18-backoff-and-rate-limiters)).
   * @throws RangeError when `leaseMs` is not a positive finite number, or `maxRetries` not valid (§3.1).
   */
  constructor(options: {
    readonly maxRetries: number;
    readonly leaseMs: number;
    readonly backoff?: { readonly baseMs: number; readonly maxMs: number } | undefined;
  }) {
    const { leaseMs } = options;
    if (!(Number.isFinite(leaseMs) && leaseMs > 0)) {
      throw new RangeError(message("leaseMs", "a positive finite number of milliseconds", leaseMs));
    }
    const { backoff } = options;
    const rateLimiter = backoff === undefined ? undefined : backoffModel(backoff.baseMs, backoff.maxMs);
    this.queue = new WorkQueueModel<string>({ maxRetries: options.maxRetries, rateLimiter });
    this.leaseMs = leaseMs;
  }

  /** The time, in milliseconds. */
  get now(): number {
    return this.queue.now;
  }

  /**
   * [§4](../docs/spec.md#§4)
   *
   * @param item - The item.
   */
  add(item: string): void {
    this.queue.add(item);
  }

  /**
   * [§17](../docs/spec.md#§17-delayed-adds)
   *
   * @param item - The item.
   * @param delayMs - The delay, in milliseconds.
   */
  addAfter(item: string, delayMs: number): void {
    this.queue.addAfter(item, delayMs);
  }

  /** [§5](../docs/spec.md#§5), [§20.2](../docs/spec.md#§20-leases-on-postgresql): the oldest queued item under a new lease with a greater token. */
  get(): ModelLease | undefined {
    this.#stamp();
    const item = this.queue.get();
    if (item === undefined) return undefined;
    const place = this.#places.get(item) as number;
    this.#places.delete(item);
    const held: Held = { token: ++this.#tokens, expiresAt: this.now + this.leaseMs, place };
    this.#leases.set(item, held);
    return { item, token: held.token, expiresAt: held.expiresAt };
  }

  /**
   * Gives a place to each queued item that has none: those entered the queue since the last stamp, at its tail, so
   * in the queue's order each gets the next place.
   */
  #stamp(): void {
    for (const item of this.queue.snapshot().queue) {
      if (!this.#places.has(item)) this.#places.set(item, ++this.#entries);
    }
  }

  /**
   * [§20.18](../docs/spec.md#§20-leases-on-postgresql) (`lease_many`): up to `count` leases, each as `get` hands one out, so the oldest queued items in
   * the queue's order, each under its own token; fewer when fewer are queued, none when `count` is less than 1.
   *
   * @param count - How many leases at most.
   */
  getMany(count: number): ModelLease[] {
    const leases: ModelLease[] = [];
    for (let k = 0; k < count; k++) {
      const lease = this.get();
      if (lease === undefined) break;
      leases.push(lease);
    }
    return leases;
  }

  /**
   * [§20.18](../docs/spec.md#§20-leases-on-postgresql) (`release_many`): gives `leases` back, one after another, each fenced by its token: a live lease
   * ends and its item is queued again at the place it had when it was handed out, its dirty mark and wait served by
   * that, while shutting down too; a lease that is not live (done, expired, given back or superseded) changes
   * nothing. The answer is how many went back.
   *
   * @param leases - Leases `get` or `getMany` answered.
   */
  giveBack(leases: readonly ModelLease[]): number {
    let released = 0;
    for (const lease of leases) {
      const held = this.#leases.get(lease.item);
      if (held === undefined || held.token !== lease.token || held.ended !== undefined) continue;
      this.#stamp();
      // Stryker disable next-line EqualityOperator: equivalent: a place is given once, and the item that had held.place is in flight, not queued
      const ahead = this.queue.snapshot().queue.filter((item) => (this.#places.get(item) as number) < held.place);
      held.ended = "given back";
      this.queue.restore(lease.item, ahead.length);
      this.#places.set(lease.item, held.place);
      released += 1;
    }
    return released;
  }

  /**
   * [§14.1](../docs/spec.md#§14-waiting-for-work), [§14.2](../docs/spec.md#§14-waiting-for-work), [§20.10](../docs/spec.md#§20-leases-on-postgresql): what a `take` made now answers at once: the oldest queued item under a new lease, as `get`;
   * `undefined` when the queue is shutting down and nothing is queued, waiting or in flight; otherwise `"waits"`
   * (nothing changes). A live lease keeps a shutting-down take waiting: its expiry may queue its item again.
   */
  take(): ModelLease | undefined | "waits" {
    if (this.size > 0) return this.get();
    if (this.shuttingDown && this.waiting === 0 && this.inFlight === 0) return undefined;
    return "waits";
  }

  /**
   * [§20.4](../docs/spec.md#§20-leases-on-postgresql): whether a call may act with `lease`: it is the item's latest and live (it neither expired nor
   * was done); or its token is 0, the caller holding no lease, and no lease of the item is live.
   */
  #accepts(lease: ModelLease): boolean {
    if (lease.token === 0)
      return this.queue.stateOf(lease.item) === "absent" || this.queue.stateOf(lease.item) === "queued";
    const held = this.#leases.get(lease.item);
    return held !== undefined && held.token === lease.token && held.ended === undefined;
  }

  /** Runs `change` if `lease` is accepted (§20.4); otherwise nothing changes. */
  #fenced<V>(lease: ModelLease, change: () => V): Fenced<V> {
    if (!this.#accepts(lease)) return { stale: true };
    return { stale: false, value: change() };
  }

  /**
   * [§6](../docs/spec.md#§6), fenced ([§20.4](../docs/spec.md#§20-leases-on-postgresql)).
   *
   * @param lease - What `get` answered, or `{ item, token: 0 }` for an item never handed out.
   */
  done(lease: ModelLease): Fenced<void> {
    return this.#fenced(lease, () => {
      const held = this.#leases.get(lease.item);
      if (held !== undefined) held.ended = "done"; // §20.2: done ends the lease
      this.queue.done(lease.item);
    });
  }

  /**
   * [§7](../docs/spec.md#§7), fenced ([§20.4](../docs/spec.md#§20-leases-on-postgresql)).
   *
   * @param lease - As for `done`.
   */
  retry(lease: ModelLease): Fenced<boolean> {
    return this.#fenced(lease, () => this.queue.retry(lease.item));
  }

  /**
   * [§8](../docs/spec.md#§8), fenced ([§20.4](../docs/spec.md#§20-leases-on-postgresql)).
   *
   * @param lease - As for `done`.
   */
  forget(lease: ModelLease): Fenced<void> {
    return this.#fenced(lease, () => this.queue.forget(lease.item));
  }

  /**
   * [§8](../docs/spec.md#§8) and then [§6](../docs/spec.md#§6) with the same lease, as `PostgresWorkQueue.finish`
   * makes them in one statement ([§20.12](../docs/spec.md#§20-leases-on-postgresql)): `forget`, and `done` when the
   * forget was accepted; refused when either is.
   *
   * @param lease - As for `done`.
   */
  finish(lease: ModelLease): Fenced<void> {
    const forgot = this.forget(lease);
    return forgot.stale ? forgot : this.done(lease);
  }

  /**
   * [§20.5](../docs/spec.md#§20-leases-on-postgresql): a live lease lasts `leaseMs` more from now; the answer is its new expiry. A lease that is not live is
   * refused.
   *
   * @param lease - A lease `get` answered.
   */
  extend(lease: ModelLease): Fenced<number> {
    const held = this.#leases.get(lease.item);
    if (!(this.#accepts(lease) && held !== undefined && !held.ended)) return { stale: true };
    held.expiresAt = this.now + this.leaseMs;
    return { stale: false, value: held.expiresAt };
  }

  /**
   * [§20.3](../docs/spec.md#§20-leases-on-postgresql): time moves forward by `ms`, and every live lease whose expiry is passed expires at its expiry,
   * earliest first, ties in the order the leases were handed out: its item goes back to the tail of the queue.
   *
   * @param ms - A non-negative finite number of milliseconds.
   */
  advance(ms: number): void {
    // An infinite `ms` is refused before any lease expires; a negative one expires nothing, and `queue.advance`
    // refuses it with the same error.
    if (!Number.isFinite(ms)) throw new RangeError(message("ms", "a non-negative finite number", ms));
    const end = this.now + ms;
    const expiring = [...this.#leases]
      .filter(([, held]) => !held.ended && held.expiresAt <= end)
      .sort(([, a], [, b]) => a.expiresAt - b.expiresAt || a.token - b.token);
    for (const [item, held] of expiring) {
      this.queue.advance(held.expiresAt - this.now);
      held.ended = "expired";
      this.queue.expire(item);
    }
    this.queue.advance(end - this.now);
  }

  /** [§9.1](../docs/spec.md#§9-views) */
  get size(): number {
    return this.queue.size;
  }

  /** [§9.2](../docs/spec.md#§9-views) */
  get inFlight(): number {
    return this.queue.inFlight;
  }

  /** [§9.4](../docs/spec.md#§9-views) */
  get waiting(): number {
    return this.queue.waiting;
  }

  /**
   * [§9.3](../docs/spec.md#§9-views)
   *
   * @param item - The item.
   */
  failures(item: string): number {
    return this.queue.failures(item);
  }

  /** [§12.1](../docs/spec.md#§12-shutdown) */
  shutDown(): void {
    this.queue.shutDown();
  }

  /** [§12.2](../docs/spec.md#§12-shutdown) */
  get shuttingDown(): boolean {
    return this.queue.shuttingDown;
  }
}
