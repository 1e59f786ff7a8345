/**
 * The shrinking budget: counted in work (calls made to the implementation, or runs), so that the same
 * implementation, seed and options give the same counterexample, byte for byte, however busy the machine is. A
 * wall-clock limit stays as a safety net for a pathologically slow implementation; a report says which one stopped.
 */
import * as fc from "fast-check";

/**
 * How many calls shrinking a sequence may make to the implementation: enough for the deepest counterexamples of the
 * suites (tens of thousands of calls each run) to shrink to their end, and seconds of work on a 2-core machine
 * (docs/performance.md, "Shrinking").
 *
 * @internal
 */
export const defaultShrinkCalls = 500_000;

/**
 * How many runs shrinking a run of the lifecycle or of overlapping calls may make: each run is a few dozen calls
 * under fast-check's scheduler, so this is a few seconds at most.
 *
 * @internal
 */
export const defaultShrinkRuns = 2_000;

/**
 * How long shrinking may take, in milliseconds, whatever work is left: a safety net for an implementation so slow
 * that the work budget would take minutes. It is the only limit that depends on the machine.
 *
 * @internal
 */
export const defaultShrinkTimeMs = 120_000;

/**
 * What stopped shrinking before its end: its work budget (`calls` or `runs`), or the safety net of time.
 *
 * @inline
 */
export type ShrinkStop = "calls" | "runs" | "time";

/**
 * A budget of work for shrinking, with a limit of time as a safety net. Charge each attempt's work after it; ask
 * `exhausted` before the next. The first attempt always runs: the failure must be seen again before it is shrunk.
 */
export class ShrinkBudget {
  readonly #limit: number;
  readonly #unit: "calls" | "runs";
  readonly #deadline: number;
  #spent = 0;
  #stoppedBy: ShrinkStop | undefined;

  /**
   * @param limit - The work allowed, in `unit`s.
   * @param unit - What one unit of work is: a call made to the implementation, or a run.
   * @param timeMs - The safety net: how long, from now, shrinking may take.
   */
  constructor(limit: number, unit: "calls" | "runs", timeMs: number) {
    this.#limit = limit;
    this.#unit = unit;
    this.#deadline = performance.now() + timeMs;
  }

  /** Counts `work` units done. */
  charge(work: number): void {
    this.#spent += work;
  }

  /** The work done so far. */
  get spent(): number {
    return this.#spent;
  }

  /** What stopped shrinking, once `exhausted` said so; `undefined` while it may go on. */
  get stoppedBy(): ShrinkStop | undefined {
    return this.#stoppedBy;
  }

  /**
   * Whether no further attempt may be made: the work is spent, or the time is up. Once true, stays true; false
   * until some work was charged.
   */
  get exhausted(): boolean {
    if (this.#spent === 0) return false;
    if (this.#stoppedBy === undefined && this.#spent >= this.#limit) this.#stoppedBy = this.#unit;
    if (this.#stoppedBy === undefined && performance.now() > this.#deadline) this.#stoppedBy = "time";
    return this.#stoppedBy !== undefined;
  }

  /**
   * Inside a fast-check property that is shrinking: interrupts fast-check, which then reports the shortest failure
   * so far (its path replays it), once the budget is exhausted, or once `share` of it is spent.
   *
   * @param share - The part of the budget the caller may spend, from 0 to 1. @defaultValue 1
   * @throws fc.PreconditionFailure marked to interrupt the execution, when exhausted or past the share.
   */
  guard(share = 1): void {
    if (this.exhausted || this.#spent >= this.#limit * share) throw new fc.PreconditionFailure(true);
  }
}
