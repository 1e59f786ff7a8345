/**
 * A deadline that measures the implementation, not the gate: it counts only the time during which the gate was ready
 * to read an answer. A stall of the gate's own event loop (checking, planning, a busy machine) is never charged.
 */

/** The longest tick, in milliseconds: how often the count is brought up to date while an answer is awaited. */
export const tickMs = 100;

/**
 * Counts towards `timeoutMs` while it is armed, in ticks of at most {@link tickMs}; calls `expire` once the count
 * reaches it. A tick that fires more than one tick late means the gate's event loop stalled, and adds nothing;
 * a tick on time adds the time since the one before. Before it expires it yields once (`setImmediate`), so that
 * answers already waiting — in a pipe, in a promise — are read first and count as progress.
 *
 * The caller arms it while it awaits an answer, calls `progress` when one arrives, and `disarm`s it when nothing is
 * awaited any more; `expire` is called at most once per arming. It does not know what is awaited: the caller's
 * `awaiting` says, at each tick, whether to go on counting.
 *
 * @remarks One timer at most, re-armed only when it fires: arming and progress cost an assignment each.
 */
export class Deadline {
  readonly #timeoutMs: number;
  readonly #tick: number;
  readonly #awaiting: () => boolean;
  readonly #expire: () => void;
  /** The time counted since the last progress, in milliseconds; the deadline passes when it reaches the timeout. */
  #counted = 0;
  /** When the running tick was set. */
  #since = 0;
  #timer: NodeJS.Timeout | NodeJS.Immediate | undefined;

  constructor(timeoutMs: number, awaiting: () => boolean, expire: () => void) {
    this.#timeoutMs = timeoutMs;
    this.#tick = Math.max(1, Math.min(tickMs, timeoutMs));
    this.#awaiting = awaiting;
    this.#expire = expire;
  }

  /** The timeout, in milliseconds. */
  get timeoutMs(): number {
    return this.#timeoutMs;
  }

  /** Starts counting, if it is not already: the count starts from zero when it was disarmed. */
  arm(): void {
    if (this.#timer !== undefined) return;
    this.#counted = 0;
    this.#schedule();
  }

  /** An answer arrived: the count starts again from zero. */
  progress(): void {
    this.#counted = 0;
  }

  /** Stops counting; nothing expires until it is armed again. */
  disarm(): void {
    clearTimeout(this.#timer as NodeJS.Timeout);
    clearImmediate(this.#timer as NodeJS.Immediate);
    this.#timer = undefined;
  }

  #schedule(): void {
    this.#since = performance.now();
    this.#timer = setTimeout(() => this.#fired(), this.#tick);
  }

  #fired(): void {
    this.#timer = undefined;
    if (!this.#awaiting()) return;
    const elapsed = performance.now() - this.#since;
    // A tick more than one tick late: the event loop was busy with something else, so no answer could be read.
    if (elapsed <= 2 * this.#tick) this.#counted += elapsed;
    if (this.#counted < this.#timeoutMs) {
      this.#schedule();
      return;
    }
    // Answers waiting to be read (I/O is polled before immediates run) get their turn before the verdict.
    this.#timer = setImmediate(() => {
      this.#timer = undefined;
      if (!this.#awaiting()) return;
      if (this.#counted >= this.#timeoutMs) this.#expire();
      else this.#schedule();
    });
  }
}
