/**
 * Prefetched leases ([docs/spec.md §20.18](../../docs/spec.md#§20-leases-on-postgresql)): a `get` or `take` that finds the buffer empty
 * leases the heads of the queue for itself, the calls waiting beside it and `size` more in one statement; the
 * surplus waits here, in the queue's order, for the queue object's next calls, which it serves without a statement.
 * A hand-on that leaves half of `size` or fewer refills the buffer in the background, behind the buffered leases.
 * A `take` woken after its look found nothing, finding the buffer empty, leases for the calls waiting alone, and
 * buffers nothing.
 *
 * @internal
 */
import { Turns } from "./turns.js";

/** A lease in the buffer: live for the database under its own token, not yet handed on. */
export interface Prefetched {
  readonly item: string;
  /** Until when, on {@link BufferSource.now}, it may be handed on: while at least half its lease is left. */
  readonly freshUntil: number;
}

/** What the buffer asks of the queue: one statement each for its fills and its give-backs, and the time. */
export interface BufferSource<P extends Prefetched> {
  /** Leases up to `count` heads of the queue in one statement, in the queue's order; `verb` names its error. */
  fetch(verb: "get" | "take", count: number): Promise<readonly P[]>;
  /**
   * Leases up to `count` heads of the queue in one statement, in the queue's order, for calls that take them at
   * once: the leases are never buffered, so never given back, and need no place (`get`, or `get_many` for several).
   */
  direct(verb: "get" | "take", count: number): Promise<readonly P[]>;
  /** Gives `leases` back in one statement, each to its place in the queue; a lease no longer live stays as it is. */
  release(leases: readonly P[]): Promise<void>;
  /** The time {@link Prefetched.freshUntil} is on. */
  now(): number;
  /** Calls `fire` at `at` (on {@link now}'s time) unless cancelled; it must not keep the process alive. */
  schedule(at: number, fire: () => void): () => void;
  /** Told when a fill left leases in the buffer, which a `take` of the object sleeping meanwhile may want. */
  filled(): void;
}

/** A `get` or `take` waiting for the fill in progress. */
interface Waiter<P> {
  readonly verb: "get" | "take";
  resolve(lease: P | undefined): void;
  reject(error: unknown): void;
}

/**
 * The buffer of one queue object. Two live leases on one key stay impossible by construction: every lease here was
 * handed out by the database under its own token, and the buffer hands each on once or gives it back.
 *
 * @remarks
 * Statements that may meet a buffered lease run in {@link shared} turns, the fills and give-backs alone
 * ({@link Turns}), so that while one runs the set of buffered items does not change. (A call whose tokens are all
 * above 0 needs none: no buffered lease carries a token a caller holds.)
 */
export class LeaseBuffer<P extends Prefetched> {
  /** How many leases a fill asks for beyond the calls waiting for it. A positive integer. */
  readonly #size: number;
  readonly #source: BufferSource<P>;
  /**
   * The leases not yet handed on, from `#head` on, in the queue's order, so in order of `freshUntil` (fills come one
   * after another): each live for the database under its token, each item once; its items are `#items`.
   */
  #leases: P[] = [];
  /** Where the buffer starts in `#leases`: handing on moves it, O(1); a fill compacts. */
  #head = 0;
  /** The items of the buffered leases. */
  readonly #items = new Set<string>();
  /**
   * The `get`s and `take`s waiting for the fill in progress, in the order they were called; empty while none runs.
   * While one waits, the buffer is empty or its head is stale, and every later call waits behind it.
   */
  #waiters: Waiter<P>[] = [];
  /** Whether a fill runs: a call's, or a refill begun by a hand-on; either serves the waiters until none is left. */
  #filling = false;
  /**
   * Whether a hand-on that leaves half of `size` or fewer starts a refill: after a fetch that brought all it asked
   * for. Not after one that brought fewer (nothing more was queued) or failed: then the next fill is that of a call
   * that finds the buffer empty, so that an empty queue or a database that is down costs no statement per hand-on.
   */
  // Stryker disable next-line BooleanLiteral: equivalent: read only while a lease is buffered, and only a round that sets it buffers one
  #refills = false;
  /** Cancels the timer that gives back the head when it stops being fresh, while one is set. */
  #cancelTimer: (() => void) | undefined;
  readonly #turns = new Turns();

  /**
   * @param size - How many leases a fill asks for beyond the waiting calls: a positive integer.
   * @param source - The statements and the time.
   */
  constructor(size: number, source: BufferSource<P>) {
    this.#size = size;
    this.#source = source;
  }

  /** How many leases are buffered. */
  get count(): number {
    return this.#leases.length - this.#head;
  }

  /** Whether the lease of `item` is buffered. */
  has(item: string): boolean {
    return this.#items.has(item);
  }

  /**
   * The next lease, in the queue's order and in the order the calls were made: at once from the buffer while it
   * holds a fresh one and no call waits (a refill may run meanwhile), otherwise from a fill; `undefined` when
   * nothing is queued. Rejects with the error of the fill's statement sent while it waited. A hand-on that leaves
   * half of `size` or fewer, while no fill runs, starts a refill in the background (see {@link #refills}).
   *
   * `direct`: the call comes after a look of its caller found nothing queued (a waiting `take` woken): when it
   * finds the buffer empty and no fill running, the fill's first statement leases only for the calls waiting, and
   * buffers nothing ({@link #direct}); any other call that finds the buffer empty fills it. So that the lone item an
   * idle worker is woken for costs the cheapest statement that leases it, not a fill of `size` more.
   */
  next(verb: "get" | "take", direct = false): Promise<P | undefined> {
    const head = this.#leases[this.#head];
    if (this.#waiters.length === 0 && head !== undefined && this.#source.now() <= head.freshUntil) {
      const lease = this.#shift();
      // Early, so that the next leases are buffered before the calls need them: a fill costs 30–140 ms.
      if (!this.#filling && this.#refills && this.count <= this.#size / 2) void this.#fill(verb);
      return Promise.resolve(lease);
    }
    return new Promise<P | undefined>((resolve, reject) => {
      this.#waiters.push({ verb, resolve, reject });
      if (!this.#filling) void this.#fill(verb, direct && this.count === 0);
    });
  }

  /**
   * Runs `run` (a statement naming `items`) while none of their leases is buffered: those that are go back first,
   * each to its place, with the statement in the same turn, so that no fill takes them again in between.
   */
  async around<R>(items: readonly string[], run: () => Promise<R>): Promise<R> {
    await this.freshen();
    const buffered = () => items.some((item) => this.#items.has(item));
    // Stryker disable next-line ConditionalExpression: equivalent when true: the shared turn finds them buffered and answers undefined, and the turn alone below runs
    if (!buffered()) {
      const ran = await this.#turns.shared(async () => (buffered() ? undefined : { value: await run() }));
      if (ran !== undefined) return ran.value;
      // a fill took one while this waited for its turn
    }
    return this.#turns.alone(async () => {
      await this.#release(this.#from((lease) => items.includes(lease.item)));
      return run();
    });
  }

  /** Runs `run` while the buffer does not change, after the leases no longer fresh went back. */
  async shared<R>(run: () => Promise<R>): Promise<R> {
    await this.freshen();
    return this.#turns.shared(run);
  }

  /** Gives back, each to its place, the buffered leases that are no longer fresh. Never rejects. */
  async freshen(): Promise<void> {
    if (!this.#stale()) return;
    await this.#turns.alone(() => this.#release(this.#staleOnes()));
  }

  /** Gives back every buffered lease, each to its place, and stops the timer. Never rejects. */
  async releaseAll(): Promise<void> {
    // after a fill in progress, whose leases go back too
    await this.#turns.alone(() => this.#release(this.#from(() => true)));
    this.#cancelTimer?.();
    this.#cancelTimer = undefined;
  }

  /**
   * Brings the buffer back to `size` leases beyond the waiters, in one statement each round, and serves the waiters,
   * until none is left: a round at least, so that a refill (`verb` names its error) runs with none waiting. With
   * `direct`, the first round is {@link #direct}.
   */
  async #fill(verb: "get" | "take", direct = false): Promise<void> {
    this.#filling = true;
    // Read after the turn ended, so that a call made as it ended is served. `ran` is there for mutation testing: a
    // mutant that empties the round or this body ends the loop instead of starving the event loop for ever.
    let ran: boolean;
    let first = direct;
    do {
      const lone = first;
      first = false;
      ran = await this.#turns.alone(() => (lone ? this.#direct() : this.#round(verb)));
    } while (ran && this.#waiters.length > 0);
    this.#filling = false;
    this.#arm();
    if (this.count > 0) this.#source.filled();
  }

  /** One round of {@link #fill}, alone: the leases fetched go after the buffered ones, which were heads before them. */
  async #round(verb: "get" | "take"): Promise<true> {
    await this.#release(this.#staleOnes());
    this.#serve();
    const waiting = this.#waiters.length;
    const first = this.#waiters[0];
    const asked = waiting + this.#size - this.count; // at least 1: a refill starts at half of `size` or fewer
    let fetched: readonly P[];
    try {
      fetched = await this.#source.fetch(first?.verb ?? verb, asked);
    } catch (error) {
      this.#refills = false;
      // A refill's error is nobody's: the calls that came meanwhile get a statement of their own, the next round.
      if (first === undefined) return true;
      // The error names the call its caller made: only those of that verb are answered with it.
      const failed = this.#waiters.filter((waiter) => waiter.verb === first.verb);
      this.#waiters = this.#waiters.filter((waiter) => waiter.verb !== first.verb);
      for (const waiter of failed) waiter.reject(error);
      return true;
    }
    this.#leases = [...this.#leases.slice(this.#head), ...fetched];
    this.#head = 0;
    for (const lease of fetched) this.#items.add(lease.item);
    this.#refills = fetched.length === asked;
    // A head that went stale during the statement goes back, with every lease after it, before any is handed on.
    const stale = this.#staleOnes();
    await this.#release(stale);
    this.#serve();
    // Fewer than asked for, and none given back: nothing more is queued, which each remaining call answers.
    if (fetched.length < asked && stale.length === 0) {
      for (const waiter of this.#waiters.splice(0)) waiter.resolve(undefined);
    }
    return true;
  }

  /**
   * A round of {@link #fill} for the calls waiting alone, while the buffer is empty: one statement leasing a head
   * for each ({@link BufferSource.direct}), which answers them in the order they were made, `undefined` to those
   * beyond what is queued; nothing is buffered, so nothing goes back. The calls made meanwhile wait for the next
   * round, a fill. Alone all the same, so that its statement overlaps no statement of the object a fill would not.
   */
  async #direct(): Promise<true> {
    const waiters = this.#waiters.splice(0);
    const [first] = waiters as [Waiter<P>]; // a waiter at least: the one whose call began the fill
    let leased: readonly P[];
    try {
      leased = await this.#source.direct(first.verb, waiters.length);
    } catch (error) {
      // as a fill's error: only the calls of the verb it was sent for, the others wait for the next round, first
      this.#waiters = [...waiters.filter((waiter) => waiter.verb !== first.verb), ...this.#waiters];
      for (const waiter of waiters) if (waiter.verb === first.verb) waiter.reject(error);
      return true;
    }
    for (const [i, waiter] of waiters.entries()) waiter.resolve(leased[i]);
    return true;
  }

  /**
   * Hands the buffer's leases to the waiters, oldest first, as far as they go: the first `count` waiters, or all
   * of them when fewer. (A loop of one at a time until either runs out did the same, but a mutant of its condition
   * never ended and starved the event loop, so no test could fail fast.)
   */
  #serve(): void {
    for (const waiter of this.#waiters.splice(0, this.count)) waiter.resolve(this.#shift());
  }

  /** Takes the head out of the buffer; the caller knows it holds one. */
  #shift(): P {
    const lease = this.#leases[this.#head] as P;
    this.#head += 1;
    this.#items.delete(lease.item);
    return lease;
  }

  /** Whether the head is no longer fresh. */
  #stale(): boolean {
    const head = this.#leases[this.#head];
    return head !== undefined && this.#source.now() > head.freshUntil;
  }

  /** Every lease, once the head is no longer fresh (see {@link #from}); none otherwise. */
  #staleOnes(): P[] {
    return this.#stale() ? this.#from(() => true) : [];
  }

  /**
   * Takes the first lease `chosen` picks and every lease after it out of the buffer. Why every one after: they are
   * younger, and a lease given back without them would be handed out after them, out of the queue's order (§10.5).
   */
  #from(chosen: (lease: P) => boolean): P[] {
    const leases = this.#leases.slice(this.#head);
    const first = leases.findIndex(chosen);
    const taken = first === -1 ? [] : leases.slice(first);
    this.#leases = first === -1 ? leases : leases.slice(0, first);
    this.#head = 0;
    for (const lease of taken) this.#items.delete(lease.item);
    return taken;
  }

  /**
   * Gives `leases` back in one statement. A give-back that fails is not reported: its leases expire in time, and
   * their items are handed out again then (at least once, §20.7); only their place in the queue is lost.
   */
  async #release(leases: readonly P[]): Promise<void> {
    if (leases.length === 0) return;
    await this.#source.release(leases).catch(() => undefined);
    this.#arm();
  }

  /** Sets the timer for when the head stops being fresh: the buffer then gives back what is stale by itself. */
  #arm(): void {
    this.#cancelTimer?.();
    this.#cancelTimer = undefined;
    const head = this.#leases[this.#head];
    if (head === undefined) return;
    this.#cancelTimer = this.#source.schedule(head.freshUntil, () => {
      this.#cancelTimer = undefined;
      void this.freshen().then(() => this.#arm());
    });
  }
}
