/**
 * The options every check has — how many runs, the seed, time, the shrinking and timeout budgets — and the one
 * place their defaults are written. Each check qualifies its own options once, from these, into a value with every
 * default filled (as fast-check's `QualifiedParameters`); its runner never writes a default again.
 */
import { defaultShrinkTimeMs } from "./shrink-budget.js";

/** The options every check has. Each check documents them in its own options, with these defaults. */
export interface BaseOptions {
  readonly runs?: number | undefined;
  readonly seed?: number | undefined;
  readonly time?: boolean | undefined;
  readonly shrinkTimeMs?: number | undefined;
  readonly timeoutMs?: number | undefined;
}

/** {@link BaseOptions} with every default filled; the seed is left to the check, whose replay may decide it. */
export interface QualifiedBase {
  /** How many runs. */
  readonly runs: number;
  /** Whether the queues have time (docs/spec.md §17). */
  readonly time: boolean;
  /** The safety net of time for shrinking, in milliseconds. */
  readonly shrinkTimeMs: number;
  /** How long a call, a view or a round may take to settle, in milliseconds. */
  readonly timeoutMs: number;
}

/** How many runs a check makes when it is not told. */
export const defaultRuns = 100;

/**
 * How long, in milliseconds, a call, a view or a round may take to settle when a check or a driver is not told:
 * the default of every `timeoutMs`.
 */
export const defaultTimeoutMs = 5000;

/** The options every check has, with their defaults: 100 runs, no time, 120 s to shrink, 5 s a call. */
export function qualifyBase(options: BaseOptions): QualifiedBase {
  return {
    runs: options.runs ?? defaultRuns,
    time: options.time === true,
    shrinkTimeMs: options.shrinkTimeMs ?? defaultShrinkTimeMs,
    timeoutMs: options.timeoutMs ?? defaultTimeoutMs,
  };
}

/** A fresh seed, for a check given none: printed in its report, so that the same runs can be made again. */
export function freshSeed(): number {
  return Date.now() ^ (Math.random() * 0x100000000);
}
