/**
 * The books of a workers run: every accepted `add` (a demand for one more handling of its key) and every handler
 * run with its outcome, so that the end of the run can tell whether anything asked for was lost (docs/spec.md
 * §10.3, §15.6).
 */
import { showValue } from "../../core/render.js";
import { type LifecycleInvariant, lifecycle } from "./invariants.js";

/** One call of the handler. */
export interface HandlerRun {
  /** Its key. */
  readonly key: string;
  /** When it started: the line of the run's log that says so. */
  readonly started: number;
  /** How it ended; `undefined` while it runs. */
  outcome: "succeeded" | "failed" | undefined;
  /** Whether the queue gives up on the key at this failure (docs/spec.md §7.2, §12.4), so `onGiveUp` must be called. */
  givesUp: boolean;
  /** Whether `onGiveUp` was called for it. */
  givenUp: boolean;
  /** Whether `onError` got its error. */
  reported: boolean;
}

/** An accepted `add`: its key must be handled again, by a run that starts after it. */
interface Demand {
  readonly key: string;
  readonly at: number;
  /** Whether a handler of the key was running when it was added (docs/spec.md §10.3). */
  readonly whileRunning: boolean;
}

/** The books. */
export class Ledger {
  /** Every handler run, in the order they started. */
  readonly runs: HandlerRun[] = [];
  /** The run of each key whose handler is running. */
  readonly running = new Map<string, HandlerRun>();
  readonly #demands: Demand[] = [];

  /** Books kept on `clock`: the number of the log line that tells of the event being booked. */
  constructor(readonly clock: () => number) {}

  /** Records an `add` of `key` that the queue accepted. */
  added(key: string): void {
    this.#demands.push({ key, at: this.clock(), whileRunning: this.running.has(key) });
  }

  /** Records the start of a handler run. */
  started(key: string): HandlerRun {
    const run: HandlerRun = {
      key,
      started: this.clock(),
      outcome: undefined,
      givesUp: false,
      givenUp: false,
      reported: false,
    };
    this.runs.push(run);
    this.running.set(key, run);
    return run;
  }

  /** Records the end of a handler run. */
  ended(run: HandlerRun, outcome: "succeeded" | "failed", givesUp: boolean): void {
    run.outcome = outcome;
    run.givesUp = givesUp;
    this.running.delete(run.key);
  }

  /** The last run of `key`. */
  last(key: string): HandlerRun | undefined {
    return this.runs.filter((run) => run.key === key).at(-1);
  }

  /**
   * What the books say went wrong, once every worker stopped: a failure neither given up nor reported as it must be,
   * and each demand that no later run met (successfully, or given up) and that is not still `queued`.
   */
  *broken(queued: readonly string[]): Generator<[LifecycleInvariant, string]> {
    for (const run of this.runs.filter((r) => r.outcome === "failed")) {
      const what = `handler(${showValue(run.key)}) of line ${run.started} failed`;
      if (run.givesUp !== run.givenUp) {
        yield [lifecycle.giveUp, `${what}; the queue gave up: ${run.givesUp}, onGiveUp called: ${run.givenUp}`];
      }
      if (!run.reported) yield [lifecycle.protocol, `${what}, and onError never got its error`];
    }
    for (const demand of this.#demands) {
      const met = this.runs.some(
        (run) => run.key === demand.key && run.started > demand.at && (run.outcome === "succeeded" || run.givenUp),
      );
      if (met || queued.includes(demand.key)) continue;
      const invariant = demand.whileRunning ? lifecycle.again : lifecycle.handled;
      const added = `${showValue(demand.key)} was added at line ${demand.at}${demand.whileRunning ? ", while its handler ran," : ""}`;
      yield [invariant, `${added} but no handler of it started after that and succeeded or gave up, nor is it queued`];
    }
  }
}
