/**
 * Turns at the database for one queue object with prefetched leases ([docs/spec.md §20.18](../../docs/spec.md#§20-leases-on-postgresql)):
 * the statements that fill or empty its buffer of leases take the database alone; the other statements of the object
 * that may meet a buffered lease run beside each other. (The calls of leases handed on, all with a token above 0,
 * take no turn: queue.ts.)
 *
 * @internal
 */

/** A turn asked for and not yet given: whether it is alone, and how to start it. */
interface Asked {
  readonly alone: boolean;
  start(): void;
}

/**
 * A fair readers–writer lock: turns start in the order they were asked for, shared turns together, a turn alone
 * once every turn before it ended.
 *
 * @remarks
 * Why: a statement that names an item must not overlap the statement that buffers or gives back that item's lease,
 * or its answer could come from a state in which the item was in flight for the database and queued for the queue
 * object's caller (an `add` would mark it dirty, a `done` with token 0 would be refused). Fair, so that a stream of
 * `done`s never starves the fill that the waiting `take`s need.
 */
export class Turns {
  /** The shared turns running: 0 while a turn alone runs. */
  #shared = 0;
  /** Whether a turn alone runs; then no shared turn does. */
  #alone = false;
  /** The turns asked for that could not start yet, oldest first; empty while nothing runs. */
  readonly #asked: Asked[] = [];

  /** Runs `run` beside the other shared turns, once no turn alone runs or was asked for before it. */
  shared<R>(run: () => Promise<R>): Promise<R> {
    return this.#turn(false, run);
  }

  /** Runs `run` alone, once every turn asked for before it ended. */
  alone<R>(run: () => Promise<R>): Promise<R> {
    return this.#turn(true, run);
  }

  async #turn<R>(alone: boolean, run: () => Promise<R>): Promise<R> {
    if (this.#asked.length === 0 && this.#mayStart(alone)) this.#begin(alone);
    else await new Promise<void>((start) => this.#asked.push({ alone, start }));
    try {
      return await run();
    } finally {
      if (alone) this.#alone = false;
      else this.#shared -= 1;
      this.#next();
    }
  }

  /** Whether a turn may start now, the turns asked for before it aside. */
  #mayStart(alone: boolean): boolean {
    return !this.#alone && (!alone || this.#shared === 0);
  }

  #begin(alone: boolean): void {
    if (alone) this.#alone = true;
    else this.#shared += 1;
  }

  /**
   * Starts the oldest turns asked for, as many as may run together. (Over a copy, so that the loop ends whatever
   * its body does: a mutant of a loop until none may start never ended and starved the event loop.)
   */
  #next(): void {
    for (const first of [...this.#asked]) {
      if (!this.#mayStart(first.alone)) return;
      this.#asked.shift();
      this.#begin(first.alone);
      first.start();
    }
  }
}
