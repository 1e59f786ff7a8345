/**
 * The report of the sequential check and of `checkConformance`: the verdict, the figures, and the shortest
 * counterexample with the token that replays it.
 */
import type { Profile } from "../core/commands.js";
import type { Invariant, Rule } from "../core/invariants.js";
import type { Backoff } from "../core/operation.js";
import type { ShrinkStop } from "../core/shrink-budget.js";
import type { Step } from "../core/verify.js";
import type { OverlapCall } from "../overlap/runs.js";

/**
 * The outcome of {@link checkConformance}.
 *
 * @example
 * ```ts
 * import { checkConformance, type ConformanceReport, formatReport } from "workqueue-spec/properties";
 *
 * const report: ConformanceReport = await checkConformance((options) => new MyQueue(options));
 * if (report.verdict !== "conforms") console.log(report.counterexample?.steps.length, report.counterexample?.replay);
 * console.log(formatReport(report, (token) => `replay with { replay: "${token}" }`));
 * ```
 *
 * @public
 */
export interface ConformanceReport {
  /** Whether every sequence kept every invariant and every answer matched the model's. */
  readonly verdict: "conforms" | "does not conform";
  /** The profile that was checked. */
  readonly profile: Profile;
  /**
   * Sequences run, up to and including the first failure (1 for a replay); shrinking is counted apart, in the
   * counterexample.
   */
  readonly runs: number;
  /** Calls made on implementations by those sequences; shrinking is counted apart, in the counterexample. */
  readonly commands: number;
  /** The named checks run after every step. */
  readonly invariants: readonly Invariant[];
  /** The seed, to run the same sequences again. */
  readonly seed: number;
  /** The name of the item universe the runs drew from (`stringItems`, `anyItems` or the `name` of your own). */
  readonly items: string;
  /**
   * The views the implementation never showed, so that the checks that compare them were skipped: `size`,
   * `inFlight`, `failures`, and `shuttingDown` when shutdown was checked. Empty when it showed them all.
   */
  readonly unchecked: readonly UncheckedView[];
  /** On failure: the shortest failing sequence found. */
  readonly counterexample?: Counterexample | undefined;
  /** The runs of overlapping calls (§10.8) and their calls, when they were made; they are not counted in `runs`. */
  readonly overlapping?:
    | {
        /** The runs of overlapping calls, shrinking runs included. */
        readonly runs: number;
        /** The calls they made. */
        readonly commands: number;
      }
    | undefined;
}

/**
 * A shrunk failing sequence: what broke, the numbered steps, and how to replay it.
 *
 * @inline
 */
export interface Counterexample {
  /** The rule that broke: the invariant the last step breaks, or the rule of a check over whole runs. */
  readonly invariant: Rule;
  /** What went wrong at the last step, in one sentence. */
  readonly detail: string;
  /**
   * How the counterexample's queue was made, in the language of the implementation checked (`new WorkQueue({ … })`
   * in process, the `new` request over the protocol), with the options of the check that decided the run (`time`,
   * `shutDown`) after it; absent, a report shows `new WorkQueue({ … })` with `maxRetries` and the backoff.
   */
  readonly construction?: string | undefined;
  /** The `maxRetries` the queue was made with. */
  readonly maxRetries: number;
  /** The backoff its `retry` requeued with, when time was checked and the run drew one ([docs/spec.md §7.3](../../docs/spec.md#§7)). */
  readonly backoff?: Backoff | undefined;
  /** The steps, the failing one last: each call with the model's and the implementation's answers and views. */
  readonly steps: readonly Step[];
  /** How many shrinking steps led from the first failing sequence to this one. */
  readonly shrinks: number;
  /**
   * Whether shrinking ran to its end within its budget; `false` when the budget ran out first (see `stoppedBy`), so
   * that a shorter counterexample may exist.
   */
  readonly minimal: boolean;
  /**
   * What stopped shrinking before its end: `calls`, the `shrinkCalls` budget (the same on any machine), or `time`,
   * the `shrinkTimeMs` safety net. Absent when it ran to its end, or was not made (a replay, a shared-state probe).
   */
  readonly stoppedBy?: ShrinkStop | undefined;
  /** How long shrinking took, in milliseconds. */
  readonly shrinkMs: number;
  /** The budget of calls it had: the `shrinkCalls` option. */
  readonly shrinkCalls: number;
  /** The safety net of time it had, in milliseconds: the `shrinkTimeMs` option. */
  readonly shrinkTimeMs: number;
  /** How many runs shrinking made, each on a fresh queue. */
  readonly shrinkRuns: number;
  /** How many calls those runs made. */
  readonly shrinkCommands: number;
  /** The token that replays exactly this counterexample: pass it back as the `replay` option. */
  readonly replay: string;
  /**
   * When overlapping calls broke the rules (§10.8): every call, in the order they were made, with its round and
   * answer; `steps` is then empty and `detail` shows the calls round by round.
   */
  readonly overlapping?: readonly OverlapCall[] | undefined;
  /** With `overlapping`: the round that no order of its calls explains; absent when a call never answered. */
  readonly round?: number | undefined;
}

/**
 * The `replayPath` of a token that replays a run of overlapping calls rather than a sequence.
 *
 * @internal
 */
export const overlapReplay = "overlapping";

/**
 * A view that a check may have had to do without.
 *
 * @inline
 */
export type UncheckedView = "size" | "inFlight" | "failures" | "shuttingDown" | "waiting" | "metrics";

/** What each view's absence skips, as reports say it. @internal */
export const skippedChecks: Readonly<Record<UncheckedView, string>> = {
  size: "the size after every call (§9.1), and what only the size shows of §10.2, §10.3 and §12.3",
  inFlight: "the number of items in flight after every call (§9.2)",
  failures: "the failure count after every call on an item (§7.1, §8.1, §9.3)",
  shuttingDown: "the flag after shutDown (§12.2)",
  waiting: "the number of waiting items after every call (§17.6), and what only it shows of §17.4",
  metrics: "the metrics after every call (§19)",
};
