/**
 * The shrinking of a check's failure: fast-check runs the failing sequence again, by its path, and shrinks it
 * within the budget of work; the counts of its macros are cut while it still fails (`compact.ts`), then calls are
 * removed from the shrunk plan while it still fails (`minimize.ts`), a
 * wrong size is told apart (`diagnose.ts`), and the result runs once more on another fresh queue. A replay follows
 * its token's path and makes exactly the removals the original made, so that it prints the same counterexample.
 */
import * as fc from "fast-check";
import { replayPathOf } from "../core/arbitraries.js";
import type { Driver } from "../core/driver.js";
import { encodeReplay, type Replay } from "../core/replay.js";
import { ShrinkBudget } from "../core/shrink-budget.js";
import { type Violation, verifyStarted } from "../core/verify.js";
import { compact } from "./compact.js";
import { diagnose } from "./diagnose.js";
import { minimize } from "./minimize.js";
import { type QualifiedOptions, tokenOptions } from "./options.js";
import { planOf } from "./plan.js";
import type { Counterexample } from "./report.js";
import { runsFrom } from "./runs.js";
import type { SurveyResult } from "./survey.js";
import type { Tally } from "./tally.js";

/** What a report adds to a counterexample whose calls did not fail when they were made again on a fresh queue. */
const onceMore =
  " (but these calls kept every invariant when made once more on another fresh queue: the queue's answers depend on more than the calls shown, such as state shared between queues, the time or chance)";

/** The part of the shrinking budget fast-check's own shrinking may spend; `minimize` has the rest. */
const fastCheckShare = 0.2;

/** Thrown inside the property so that fast-check shrinks the sequence and hands the violation back. */
class ViolationError extends Error {
  constructor(readonly counterexample: Violation) {
    super(`${counterexample.invariant.name}: ${counterexample.detail}`);
  }
}

/** The token that replays a counterexample of the check `options` qualified. */
export function tokenOf(
  options: QualifiedOptions,
  fields: Pick<Replay, "path" | "replayPath" | "removals" | "minimal">,
): string {
  return encodeReplay({ ...tokenOptions(options), seed: options.seed, ...fields });
}

/** The limits a counterexample reports: the `shrinkCalls` and `shrinkTimeMs` options. */
export function limitsOf(options: QualifiedOptions): Pick<Counterexample, "shrinkCalls" | "shrinkTimeMs"> {
  return { shrinkCalls: options.shrinkCalls, shrinkTimeMs: options.shrinkTimeMs };
}

/**
 * Shrinks the survey's failing run (or follows a replay's path): the counterexample, or `undefined` when the run
 * passed when made again and the survey had found nothing (a replay of a run that conforms).
 *
 * An error thrown by the driver itself, rather than an answer of the implementation, is rethrown, unshrunk.
 */
export async function shrink(
  driver: Driver,
  options: QualifiedOptions,
  surveyed: SurveyResult | undefined,
  tally: Tally,
): Promise<Counterexample | undefined> {
  const { replay } = options;
  let broken: { error: unknown } | undefined;
  // Made once the survey is over, its look-ahead runs read: only the work of shrinking is charged to it.
  /** Whether the failing run passed when fast-check made it again; `undefined` until it was made. */
  let passedAgain: boolean | undefined;
  const budget = new ShrinkBudget(options.shrinkCalls, "calls", options.shrinkTimeMs);
  const verifyOptions = { compareMessages: options.compareMessages, coverage: options.coverage };
  const property = fc.asyncProperty(runsFrom(options, replay?.replayPath), async (input) => {
    if (broken !== undefined) return; // the driver broke: pass at once, so fast-check neither shrinks nor goes on
    // Past its share of the budget, fast-check stops with the shortest so far: each of its attempts runs the whole
    // sequence again, macros expanded (a deep run's tens of thousands of calls), where removing calls from the plan
    // (`minimize`) halves it in a few attempts.
    if (replay === undefined) budget.guard(fastCheckShare);
    const { plan, expected } = planOf(input);
    let violation: Violation | undefined;
    try {
      const { maxRetries, backoff } = input;
      const run = { maxRetries, backoff, plan, expected };
      violation = await verifyStarted(driver.start(maxRetries, plan, backoff), run, verifyOptions);
    } catch (error) {
      broken = { error };
      throw error;
    }
    if (replay !== undefined && tally.runs === 0) tally.run(plan);
    else tally.shrinking(plan);
    budget.charge(plan.length);
    passedAgain ??= violation === undefined; // the first run is the failing one, made again
    if (violation !== undefined) throw new ViolationError(violation);
  });
  const path = replay?.path ?? String(surveyed?.failing);
  const shrinkStart = performance.now();
  // fast-check's shrinking has no bound of its own: the budget interrupts it (see `guard`) with the best
  // counterexample so far, whose path replays it exactly (a replay follows the path and does not shrink again).
  const details = await fc.check(property, { seed: options.seed, path, endOnFailure: replay !== undefined });
  if (broken !== undefined) throw broken.error;
  if (!details.failed || details.counterexample === null) {
    // The implementation answered differently the second time, or the budget ran out before fast-check ran the
    // failing run again: report the survey's run as it failed, unshrunk.
    const violation = surveyed?.violation;
    if (violation === undefined) return undefined;
    const unshrunk = {
      shrinks: 0,
      minimal: false,
      stoppedBy: budget.stoppedBy,
      shrinkMs: performance.now() - shrinkStart,
      ...limitsOf(options),
      shrinkRuns: tally.shrinkRuns,
      shrinkCommands: tally.shrinkCommands,
    };
    const again = tokenOf(options, { path, replayPath: "", removals: 0, minimal: false });
    const detail = passedAgain === true ? `${violation.detail}${onceMore}` : violation.detail;
    return { ...violation, detail, ...unshrunk, replay: again };
  }
  if (!(details.errorInstance instanceof ViolationError)) throw details.errorInstance;
  const [input] = details.counterexample ?? [];
  // fast-check's shrinking ends where removing a command changes what the others do; removing calls from the
  // concrete plan goes further, within what is left of the budget. A replay makes exactly the removals the
  // original made, so it prints the same counterexample however long either took.
  const compare = { compareMessages: options.compareMessages };
  // What repeats goes first: the macros' counts, each attempt planned again on the model (`compact.ts`); then
  // single calls. A replay makes the same removals of both, in the same order.
  const compacted =
    input === undefined
      ? { violation: details.errorInstance.counterexample, removals: 0, runs: 0, commands: 0 }
      : await compact(
          input,
          details.errorInstance.counterexample,
          driver,
          compare,
          replay === undefined ? { budget } : { removals: replay.removals },
        );
  const minimized = await minimize(
    compacted.violation,
    driver,
    options.profile,
    compare,
    replay === undefined ? { budget } : { removals: replay.removals - compacted.removals },
  );
  const diagnosed = await diagnose(minimized.violation, driver);
  // Run once more on another fresh queue: a counterexample that passes there depends on more than its calls.
  const shrunk = diagnosed.violation;
  const plan = shrunk.steps.map((step) => step.operation);
  const started = driver.start(shrunk.maxRetries, plan, shrunk.backoff);
  const repeated = await verifyStarted(
    started,
    { maxRetries: shrunk.maxRetries, backoff: shrunk.backoff, plan },
    compare,
  );
  tally.shrinking(plan);
  const detail = repeated === undefined ? `${shrunk.detail}${onceMore}` : shrunk.detail;
  const minimal = replay?.minimal ?? budget.stoppedBy === undefined;
  const again = tokenOf(options, {
    path: details.counterexamplePath ?? path,
    replayPath: input === undefined ? "" : replayPathOf(input),
    removals: compacted.removals + minimized.removals,
    minimal,
  });
  return {
    ...shrunk,
    detail,
    shrinks: details.numShrinks + compacted.removals + minimized.removals,
    minimal,
    ...(replay === undefined && budget.stoppedBy !== undefined ? { stoppedBy: budget.stoppedBy } : {}),
    shrinkMs: performance.now() - shrinkStart,
    ...limitsOf(options),
    shrinkRuns: tally.shrinkRuns + compacted.runs + minimized.runs + diagnosed.runs,
    shrinkCommands: tally.shrinkCommands + compacted.commands + minimized.commands + diagnosed.commands,
    replay: again,
  };
}
