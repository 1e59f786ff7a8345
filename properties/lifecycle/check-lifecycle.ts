/**
 * The lifecycle check: waiting takes, drains, aborts and `for await` (docs/spec.md §12–§14, §17.7) of any queue,
 * under fast-check's scheduler, against the model of the lifecycle; a failure shrunk within a time budget to a short
 * interleaving, named by the rule it breaks, with its seed and a replay token.
 */
import * as fc from "fast-check";
import { ClockModel } from "../../model/index.js";
import { OptionError } from "../core/errors.js";
import { freshSeed, qualifyBase } from "../core/options.js";
import { encodeLifecycleReplay, readLifecycleReplay } from "../core/replay.js";
import { defaultShrinkRuns, ShrinkBudget, type ShrinkStop } from "../core/shrink-budget.js";
import { LifecycleRun } from "./actors.js";
import { type LifecycleRule, lifecycleRules } from "./rules.js";
import { LifecycleViolation, Run } from "./run.js";
import {
  type Features,
  type LifecycleFactory,
  type LifecycleScenario,
  type LifecycleSubject,
  lifecycleScenario,
} from "./scenario.js";
import type { Awaiting } from "./settle.js";
import { lifecycleViews } from "./views.js";

/**
 * Options of {@link checkLifecycle}.
 *
 * @example
 * ```ts
 * import { checkLifecycle, type LifecycleOptions } from "workqueue-spec/properties";
 *
 * const options: LifecycleOptions = { runs: 200, time: true };
 * const report = await checkLifecycle((queueOptions) => new MyQueue(queueOptions), options);
 * ```
 *
 * @public
 */
export interface LifecycleOptions {
  /** How many random runs. @defaultValue `100` */
  readonly runs?: number | undefined;
  /**
   * The random seed. @defaultValue a fresh one, printed in the report; in `lifecycleTests`, the environment variable
   * `WORKQUEUE_SEED`, if set
   */
  readonly seed?: number | undefined;
  /**
   * Replays exactly one counterexample: the `replay` token of a failed report. It carries `time`; a check with the
   * other `time` refuses it with an `OptionError`.
   * @defaultValue none; in `lifecycleTests`, the environment variable `WORKQUEUE_REPLAY`, if it holds a lifecycle
   * token
   */
  readonly replay?: string | undefined;
  /**
   * Whether the queues have time ([docs/spec.md §17](../../docs/spec.md#§17-delayed-adds)): producers then also call `addAfter`, the clock moves at
   * moments the scheduler chooses, and drains and takes must wait for waiting items (§17.7). Each queue is made with
   * `clock`, which only the check moves. @defaultValue `false`
   */
  readonly time?: boolean | undefined;
  /**
   * How many runs shrinking a failure may make: a budget of work, so that the same queue and seed give the same
   * counterexample on any machine. When it runs out, the report gives the shortest counterexample found so far,
   * says it may not be minimal, and its token still replays exactly that one. @defaultValue 2000
   */
  readonly shrinkRuns?: number | undefined;
  /**
   * How long shrinking may take, in milliseconds, whatever is left of `shrinkRuns`: a safety net for a very slow
   * queue, the only limit that depends on the machine. @defaultValue 120000
   */
  readonly shrinkTimeMs?: number | undefined;
  /**
   * Whether the queue's calls answer promises, as a queue over a database does: the check then awaits each call
   * (the model makes it when the queue's promise settled), reads the views by awaiting them, and releases the next
   * step only once the queue settled — its takes, drains and views agree with the model's, or `timeoutMs` passed,
   * when they are compared. @defaultValue `false`: each call takes effect when it is made (an in-process queue)
   */
  readonly awaitCalls?: boolean | undefined;
  /**
   * With `awaitCalls`: how long, after each step, the check waits for the queue to settle, in milliseconds.
   * @defaultValue 5000
   */
  readonly timeoutMs?: number | undefined;
  /**
   * Whether the queue hands out leases ([docs/spec.md §20.10](../../docs/spec.md#§20-leases-on-postgresql)): while it is shutting down, a take with nothing
   * queued also waits while an item is in flight, and resolves with `undefined` at the `done` of the last one (§14.2).
   * @defaultValue `false`
   */
  readonly leases?: boolean | undefined;
}

/**
 * A shrunk failing run: the rule it broke, the interleaving, and how to replay it.
 *
 * @inline
 */
export interface LifecycleCounterexample {
  /** The first rule the run broke. */
  readonly rule: LifecycleRule;
  /** What went wrong, in one sentence. */
  readonly detail: string;
  /** What happened, in order: `▸` a task the scheduler released, indented what followed from it. */
  readonly log: readonly string[];
  /** The run's input: producers, consumers, shutdown, drains, steps of the clock. */
  readonly scenario: string;
  /** The scheduler's report: each scheduled task, in the order it released them, and its outcome. */
  readonly schedule: readonly string[];
  /** How many shrinking steps led from the first failing run to this one. */
  readonly shrinks: number;
  /** Whether shrinking ran to its end within its budget. */
  readonly minimal: boolean;
  /** What stopped shrinking before its end: `runs`, the `shrinkRuns` budget, or `time`, the safety net. */
  readonly stoppedBy?: ShrinkStop | undefined;
  /** The token that replays exactly this run: pass it as `replay`, or in `WORKQUEUE_REPLAY`. */
  readonly replay: string;
}

/**
 * The outcome of {@link checkLifecycle}.
 *
 * @example
 * ```ts
 * import { checkLifecycle, type LifecycleReport } from "workqueue-spec/properties";
 *
 * const report: LifecycleReport = await checkLifecycle((options) => new MyQueue(options));
 * if (report.verdict !== "conforms") console.log(report.counterexample?.replay); // the token that replays it
 * ```
 *
 * @public
 */
export interface LifecycleReport {
  /** Whether every run kept every rule. */
  readonly verdict: "conforms" | "does not conform";
  /** Runs made, up to and including the first failure (1 for a replay). */
  readonly runs: number;
  /** The seed, to run the same runs again. */
  readonly seed: number;
  /** Whether time was checked. */
  readonly time: boolean;
  /** The rules checked. */
  readonly rules: readonly LifecycleRule[];
  /** The optional verbs and views the queue does not offer, so that what needs them was not checked. */
  readonly unchecked: readonly string[];
  /** On failure: the shortest failing run found. */
  readonly counterexample?: LifecycleCounterexample | undefined;
}

/**
 * Runs `scenario` under the scheduler `s` on `queue`, checking it against the model of the lifecycle before every
 * step. Throws a `LifecycleViolation` naming the first broken rule.
 */
async function runLifecycle(
  s: fc.Scheduler,
  scenario: LifecycleScenario,
  queue: LifecycleSubject,
  features: Features,
  clock: ClockModel | undefined,
  seen: Set<string>,
  awaiting: Awaiting | undefined,
): Promise<void> {
  const run = new Run(s);
  try {
    const it = new LifecycleRun(run, scenario, queue, features, clock, seen, awaiting);
    for (const [p, steps] of scenario.producers.entries()) it.produce(steps, p);
    for (const [c, consumer] of scenario.consumers.entries()) it.consume(consumer, c);
    if (scenario.shutDown === "shutDown") run.at("shutDown()", () => it.shutDown("shutDown()"));
    const drains = scenario.shutDown === "shutDownWithDrain" ? [false, ...scenario.drains] : scenario.drains;
    for (const [d, aborts] of drains.entries()) {
      const name = `shutDownWithDrain() #${d + 1}`;
      run.at(name, () => it.drain(name, aborts));
    }
    for (const ms of scenario.advances) run.at(`advance(${ms})`, () => it.advance(ms));
    await it.end(s);
    await run.finish();
  } finally {
    run.close();
  }
}

/** What a queue offers, and what it lacks. */
function featuresOf(
  queue: LifecycleSubject,
  time: boolean,
  leases: boolean,
): { features: Features; missing: string[] } {
  const has = (name: PropertyKey) => typeof (queue as unknown as Record<PropertyKey, unknown>)[name] === "function";
  for (const verb of ["add", "done", "retry", "forget", "take", ...(time ? ["addAfter"] : [])]) {
    if (!has(verb)) throw new OptionError(`The queue has no \`${verb}\` method, which the lifecycle check needs`);
  }
  const features = {
    shutDown: has("shutDown"),
    drain: has("shutDownWithDrain"),
    iterate: has(Symbol.asyncIterator),
    time,
    leases,
  };
  const missing = [
    ...(features.shutDown ? [] : ["shutDown"]),
    ...(features.drain ? [] : ["shutDownWithDrain"]),
    ...(features.iterate ? [] : ["for await"]),
  ];
  return { features, missing };
}

/**
 * Checks the lifecycle of the queues `factory` makes — `take`, `shutDownWithDrain`, aborts and `for await`
 * ([docs/spec.md §12](../../docs/spec.md#§12-shutdown)–[§14](../../docs/spec.md#§14-waiting-for-work), with `time` also [§17.7](../../docs/spec.md#§17-delayed-adds)) — under fast-check's scheduler: producers, consumers, a shutdown,
 * drains, aborts (and steps of the clock) at moments it chooses, each call made on the queue and on the model of the
 * lifecycle at the same moment, every take, drain and view compared before every step. Optional verbs the queue
 * lacks are left out and listed in `unchecked`.
 *
 * @param factory - Makes a fresh, empty queue from `{ maxRetries }` (and `clock`, with `time`), once per run, and
 * once up front to see which verbs it offers.
 * @param options - How many runs, the seed, a replay, time, the shrinking budget.
 * @throws OptionError when the queue lacks a verb the check needs, or the replay token is not one of this check's.
 * @example
 * ```ts
 * import { checkLifecycle, formatReport } from "workqueue-spec/properties";
 *
 * const report = await checkLifecycle((options) => new MyQueue(options));
 * if (report.verdict !== "conforms") console.log(formatReport(report));
 * ```
 *
 * @public
 */
export async function checkLifecycle(
  factory: LifecycleFactory,
  options: LifecycleOptions = {},
): Promise<LifecycleReport> {
  const qualified = { ...qualifyBase(options), shrinkRuns: options.shrinkRuns ?? defaultShrinkRuns };
  const { time, timeoutMs } = qualified;
  const awaiting: Awaiting | undefined = options.awaitCalls === true ? { timeoutMs } : undefined;
  const make = async () => {
    const clock = time ? new ClockModel() : undefined;
    return { clock, queue: await factory({ maxRetries: 1, ...(clock ? { clock } : {}) }) };
  };
  const { features, missing } = featuresOf((await make()).queue, time, options.leases === true);
  const replay = options.replay === undefined ? undefined : readLifecycleReplay(options.replay, time);
  const seed = replay?.seed ?? options.seed ?? freshSeed();
  const seen = new Set<string>();
  /** The shrinking budget, from the first failure on: the runs before it are not shrinking. */
  let budget: ShrinkBudget | undefined;
  let last: { violation: LifecycleViolation; scheduler: fc.Scheduler } | undefined;
  const property = fc.asyncProperty(fc.scheduler(), lifecycleScenario(features), async (s, scenario) => {
    budget?.guard(); // the budget is spent: fast-check stops with the shortest failure so far
    budget?.charge(1);
    const clock = time ? new ClockModel() : undefined;
    const queue = await factory({ maxRetries: scenario.maxRetries, ...(clock ? { clock } : {}) });
    try {
      await runLifecycle(s, scenario, queue, features, clock, seen, awaiting);
    } catch (error) {
      budget ??= new ShrinkBudget(qualified.shrinkRuns, "runs", qualified.shrinkTimeMs);
      if (error instanceof LifecycleViolation) last = { violation: error, scheduler: s };
      throw error;
    }
  });
  const parameters =
    replay === undefined ? { seed, numRuns: qualified.runs } : { seed, path: replay.path, endOnFailure: true };
  const details = await fc.check(property, parameters);
  const unchecked = [...missing, ...lifecycleViews.filter((view) => !seen.has(view) && (time || view !== "waiting"))];
  const base = { runs: details.numRuns, seed, time, rules: Object.values(lifecycleRules), unchecked };
  if (!details.failed) return { ...base, verdict: "conforms" };
  if (!(details.errorInstance instanceof LifecycleViolation) || last === undefined) throw details.errorInstance;
  const { violation } = last;
  const [, scenario] = details.counterexample ?? [];
  const counterexample: LifecycleCounterexample = {
    rule: violation.invariant,
    detail: violation.detail,
    log: violation.log,
    scenario: fc.stringify(scenario),
    schedule: last.scheduler.report().map((task) => `[task ${task.taskId}] ${task.label} ${task.status}`),
    shrinks: details.numShrinks,
    minimal: budget?.stoppedBy === undefined,
    ...(budget?.stoppedBy === undefined ? {} : { stoppedBy: budget.stoppedBy }),
    replay: encodeLifecycleReplay({ seed, time, path: details.counterexamplePath ?? "" }),
  };
  return { ...base, verdict: "does not conform", counterexample };
}
