import { expected } from "./validate.js";

/**
 * A time source and a timer ([docs/spec.md §18.8](../docs/spec.md#§18-backoff-and-rate-limiters)): milliseconds on a monotonic clock. Write your own by implementing
 * the two methods; {@link realClock} and {@link VirtualClock} are the two that ship.
 *
 * @remarks
 * `schedule` takes an absolute time, so a clock that runs a callback exactly at `atMs` makes every delay exact:
 * `now()` inside the callback equals `atMs`.
 *
 * @public
 * @example
 * ```ts
 * const clock: Clock = {
 *   now: () => performance.now(),
 *   schedule(atMs, callback) {
 *     const timer = setTimeout(callback, Math.max(0, atMs - performance.now()));
 *     return () => clearTimeout(timer);
 *   },
 * };
 * ```
 */
export interface Clock {
  /** The current time in milliseconds. It must never go backwards. */
  now(): number;
  /**
   * Runs `callback` once, at `atMs` or as soon as possible after it (at once if `atMs` has passed), unless the
   * returned function is called first. Calling it after the callback ran must change nothing.
   *
   * @param atMs - When to run it, on this clock's time line, in milliseconds.
   * @param callback - What to run.
   */
  schedule(atMs: number, callback: () => void): () => void;
}

/**
 * The real clock: `performance.now()` and `setTimeout`.
 *
 * @remarks The timer is ref'd: while it is armed, it keeps the Node.js process alive. A timer armed for work that
 * was asked for is that work, and nothing asked for is lost ([§12](../docs/spec.md#§12-shutdown)); an unref'd timer would let a `for await` loop
 * end with exit code 13 (a top-level await that never settles) while its work still waits.
 *
 * @public
 * @example
 * ```ts
 * const cancel = realClock.schedule(realClock.now() + 100, () => console.log("100 ms later"));
 * ```
 */
export const realClock: Clock = {
  now: () => performance.now(),
  schedule(atMs, callback) {
    const timer = setTimeout(callback, atMs - performance.now()); // a negative delay runs it at the next turn
    return () => clearTimeout(timer);
  },
};

/**
 * How many timers callbacks may arm, during one `advance`, for a time that has come, at one instant: past it, a
 * callback is re-arming itself and `advance` would never end ([docs/spec.md §18.9](../docs/spec.md#§18-backoff-and-rate-limiters)).
 */
const maxOverdue = 10_000;

/** The error of a callback that re-arms itself for a time that has come, again and again ([docs/spec.md §18.9](../docs/spec.md#§18-backoff-and-rate-limiters)). */
function livelock(nowMs: number): Error {
  return new Error(
    `Expected the timers armed during advance() to fall due later, but more than ${maxOverdue.toLocaleString("en-US")} were armed for ${nowMs} ms or earlier at ${nowMs} ms: a timer that re-arms itself for a time that has come would keep advance() from ending`,
  );
}

/** A timer armed on a {@link VirtualClock}. */
interface VirtualTimer {
  /** Its due time: timers run earliest first, the first armed among equals. */
  readonly atMs: number;
  /** When it runs: `atMs`, or, for a timer armed for a time that had come, the time it was armed at. */
  readonly runsAtMs: number;
  readonly callback: () => void;
}

/**
 * A clock on which time moves only when the test calls {@link VirtualClock.advance} ([docs/spec.md §18.9](../docs/spec.md#§18-backoff-and-rate-limiters)): every
 * delay on it is exact and reproducible, and no test sleeps.
 *
 * @public
 * @example
 * ```ts
 * const clock = new VirtualClock();
 * clock.schedule(100, () => console.log(clock.now())); // armed: clock.pending is 1
 * clock.advance(150); // prints 100; clock.now() is then 150
 * ```
 */
export class VirtualClock {
  /** Invariant: never decreases. */
  #now: number;
  /**
   * The armed timers, in the order they were armed. Invariant: none has run or been cancelled, and each one's
   * `runsAtMs` is the later of its `atMs` and `#now` (so running the earliest never moves time backwards: a timer
   * due before `#now` was armed at `#now`, since time moves only to the earliest due time or past every due time).
   */
  #timers: VirtualTimer[] = [];
  /** Whether `advance` is running its timers. */
  #advancing = false;
  /** The instant of the timers armed for a time that had come, during this advance, and how many there were. */
  #overdue = { at: Number.NaN, count: 0 };

  /**
   * A clock that reads `startMs` until it is advanced.
   *
   * @param startMs - The time the clock starts at, in milliseconds.
   * @defaultValue `startMs` is 0.
   * @throws RangeError when `startMs` is not a finite number.
   */
  constructor(startMs = 0) {
    if (!Number.isFinite(startMs)) throw new RangeError(expected("startMs", "a finite number", startMs));
    this.#now = startMs;
  }

  /** The current virtual time in milliseconds. */
  now(): number {
    return this.#now;
  }

  /**
   * Arms a timer for `atMs`; it runs during the {@link VirtualClock.advance} that reaches `atMs`, never before.
   *
   * @param atMs - When to run it, in virtual milliseconds.
   * @param callback - What to run.
   */
  schedule(atMs: number, callback: () => void): () => void {
    const runsAtMs = Math.max(atMs, this.#now); // a timer armed in the past runs now: time never goes backwards
    if (this.#advancing && runsAtMs <= this.#now) {
      if (this.#overdue.at !== this.#now) this.#overdue = { at: this.#now, count: 0 };
      if (++this.#overdue.count > maxOverdue) throw livelock(this.#now);
    }
    const timer = { atMs, runsAtMs, callback };
    this.#timers.push(timer);
    return () => {
      this.#timers = this.#timers.filter((t) => t !== timer);
    };
  }

  /** How many timers are armed: not run yet and not cancelled. */
  get pending(): number {
    return this.#timers.length;
  }

  /**
   * Moves time forward by `ms`, running every timer that falls due on the way, earliest first (timers due at the
   * same time in the order they were armed), each at its own due time: `now()` inside a callback equals its `atMs`.
   * A timer armed by a callback runs too if it falls due before the end. Time then reads the end.
   *
   * @param ms - How far to move the time, in milliseconds: a non-negative number.
   * @throws RangeError when `ms` is not a non-negative finite number; time does not move.
   * @throws Error when callbacks arm more than 10,000 timers for a time that has come at one instant, which only a
   * timer re-arming itself does; time then stops at that instant. An error a callback throws also stops it there.
   */
  advance(ms: number): void {
    if (!(Number.isFinite(ms) && ms >= 0)) throw new RangeError(expected("ms", "a non-negative finite number", ms));
    const end = this.#now + ms;
    this.#advancing = true;
    this.#overdue = { at: Number.NaN, count: 0 };
    try {
      // The removal is in the loop's head, not its body: every turn removes a timer, and a timer armed during the
      // advance that would keep time still counts towards maxOverdue, so the loop ends. Time moves to what
      // `schedule` computed (no comparison here that a slip could turn into "time stands still, uncounted").
      for (let next = this.#takeDue(end); next !== undefined; next = this.#takeDue(end)) {
        this.#now = next.runsAtMs;
        next.callback();
      }
    } finally {
      this.#advancing = false;
    }
    this.#now = end;
  }

  /** Removes and answers the earliest armed timer due at or before `end` (the first armed among equals), if any. */
  #takeDue(end: number): VirtualTimer | undefined {
    let best = -1;
    for (const [i, t] of this.#timers.entries()) {
      if (t.atMs <= end && (best < 0 || t.atMs < (this.#timers[best] as VirtualTimer).atMs)) best = i;
    }
    return best < 0 ? undefined : this.#timers.splice(best, 1)[0];
  }
}
