/**
 * Replays a plan against an implementation and the model side by side, and runs the named checks after every step.
 */
import { backoffModel, type ItemState, WorkQueueModel } from "../../model/index.js";
import type { Plan } from "./commands.js";
import { type Coverage, transitionOf } from "./coverage.js";
import type { Observation, Observe } from "./driver.js";
import { type Expectation, meets } from "./expectation.js";
import { type BackedOff, invariants, type Rule, type Views } from "./invariants.js";
import type { Answer, Backoff, Operation } from "./operation.js";
import { isThenable, type MaybePromise, perform } from "./subject.js";

/**
 * One executed step of a trace: the call, and what the model and the implementation answered and showed.
 *
 * @inline
 */
export interface Step {
  /** The call. */
  readonly operation: Operation;
  /** What the model answered. */
  readonly expected: Answer;
  /** What the implementation answered. */
  readonly actual: Answer;
  /** What the model showed after the call. */
  readonly expectedViews: Views;
  /** What the implementation showed after the call, for the views it offers. */
  readonly actualViews: Views;
}

/** A broken rule: which, what went wrong, and the steps that lead to it. */
export interface Violation {
  /** The rule that broke: an invariant after a step, or a rule checked over whole runs (§3.5). */
  readonly invariant: Rule;
  /** What went wrong, in one sentence. */
  readonly detail: string;
  /** The `maxRetries` of the queue. */
  readonly maxRetries: number;
  /** The backoff of the queue's `retry`, if it was made with one ([docs/spec.md §7.3](../../docs/spec.md#§7)). */
  readonly backoff?: Backoff | undefined;
  /** The steps up to and including the failing one. */
  readonly steps: readonly Step[];
}

/**
 * One run to verify: the queue's options, the calls, and, when it was planned, what the model answered and showed
 * after each call.
 */
export interface Run {
  /** The `maxRetries` the queue is made with. */
  readonly maxRetries: number;
  /** The backoff of the queue's `retry`, if it is made with one ([docs/spec.md §7.3](../../docs/spec.md#§7)). */
  readonly backoff?: Backoff | undefined;
  /** The calls, in order. */
  readonly plan: Plan;
  /** What the model answered and showed after each call, recorded while planning (see {@link verify}). */
  readonly expected?: readonly Expectation[] | undefined;
}

/** Options of {@link verify}. */
export interface VerifyOptions {
  /** Whether error messages must equal the model's, or only the error names. */
  readonly compareMessages: boolean;
  /** Where to count the transitions exercised, if anywhere. */
  readonly coverage?: Coverage | undefined;
}

/** A model of a queue made with `maxRetries` and, if given, `backoff`. */
export function modelOf(maxRetries: number, backoff: Backoff | undefined): WorkQueueModel<unknown> {
  const rateLimiter = backoff === undefined ? undefined : backoffModel(backoff.baseMs, backoff.maxMs);
  return new WorkQueueModel<unknown>({ maxRetries, rateLimiter });
}

/**
 * Runs `run.plan` on a fresh model and, through `observe`, on the implementation, checking every invariant after
 * every step. Resolves with the first violation, or `undefined` when the implementation kept them all.
 *
 * With `run.expected`, the model's answers and views recorded while planning, a step that equals them keeps every
 * invariant (each compares the implementation with the model) and is not run on a model again; from the first
 * step that differs, the run is verified step by step on a fresh model, the steps before it from what they were
 * observed to answer. Either way the result is the same; with coverage counted, every step is run on the model.
 */
export async function verify(run: Run, observe: Observe, options: VerifyOptions): Promise<Violation | undefined> {
  const { plan, expected } = run;
  if (expected === undefined || options.coverage !== undefined) return verifyEach(run, observe, options);
  const observed: Observation[] = [];
  for (const [index, operation] of plan.entries()) {
    const next = observe(operation, index);
    const observation = isThenable(next) ? await next : next;
    observed.push(observation);
    if (!meets(expected[index] as Expectation, observation, options.compareMessages)) {
      const again: Observe = (operation, index) =>
        index < observed.length ? (observed[index] as Observation) : observe(operation, index);
      return verifyEach(run, again, options);
    }
  }
  return undefined;
}

/** {@link verify}, every step run on the model and checked. */
async function verifyEach(run: Run, observe: Observe, options: VerifyOptions): Promise<Violation | undefined> {
  const { plan, maxRetries, backoff } = run;
  const model = modelOf(maxRetries, backoff);
  const steps: Step[] = [];
  const reasked = new Set<unknown>();
  const fellAt = new Map<unknown, number>();
  const backedOff = new Map<unknown, BackedOff>();
  for (const [index, operation] of plan.entries()) {
    const keyed = "item" in operation ? operation.item : undefined;
    const valid = !("item" in operation) || (keyed !== undefined && keyed !== null);
    // Only the checks of `done`, `retry` and `addAfter` look at the state before the call; the scans are not paid
    // for other calls.
    const before: ItemState | undefined =
      (operation.verb === "done" || operation.verb === "retry" || operation.verb === "addAfter") &&
      valid &&
      keyed !== undefined
        ? model.stateOf(keyed)
        : undefined;
    options.coverage?.record(transitionOf(operation, model));
    const waitedBefore = operation.verb === "advance" ? model.snapshot().waiting : [];
    // A second due time asked for a waiting item: by addAfter, or by a retry that backs off (§7.3 waits as §17 does).
    const asks = operation.verb === "addAfter" || operation.verb === "retry";
    const dueBefore = asks && valid ? model.dueOf(keyed) : undefined;
    const expected = perform(model, operation) as Answer;
    const fellDue = waitedBefore.filter(([item]) => model.dueOf(item) === undefined);
    fellDue.sort((a, b) => a[1] - b[1]);
    if (dueBefore !== undefined) reasked.add(keyed);
    for (const [item, due] of fellDue) if (model.stateOf(item) === "queued") fellAt.set(item, due);
    const dueAfter = asks && valid ? model.dueOf(keyed) : undefined;
    if (dueAfter !== undefined && dueAfter !== dueBefore) {
      const delayMs = dueAfter - model.now;
      if (operation.verb === "retry") backedOff.set(keyed, { failures: model.failures(keyed), delayMs, due: dueAfter });
      else backedOff.delete(keyed);
    }
    const observed = observe(operation, index);
    const { answer: actual, views } = isThenable(observed) ? await observed : observed;
    const expectedViews: Views = {
      size: model.size,
      inFlight: model.inFlight,
      // The count is compared when the implementation shows it, and named when a retry answers wrongly.
      failures:
        valid && keyed !== undefined && (views.failures !== undefined || operation.verb === "retry")
          ? model.failures(keyed)
          : undefined,
      shuttingDown: model.shuttingDown,
      waiting: model.waiting,
      metrics: views.metrics === undefined ? undefined : model.metrics(),
    };
    const actualViews: Views = {
      size: views.size,
      inFlight: views.inFlight,
      failures: expectedViews.failures === undefined ? undefined : views.failures,
      shuttingDown: views.shuttingDown,
      waiting: views.waiting,
      metrics: views.metrics,
    };
    const step = { operation, expected, actual, expectedViews, actualViews };
    steps.push(step);
    // Spelled out, not spread from `step`: a spread object is a slow shape for the checks (a fifth of the gate's time).
    const facts = {
      operation,
      expected,
      actual,
      expectedViews,
      actualViews,
      before: keyed === undefined ? undefined : before,
      model,
      compareMessages: options.compareMessages,
      fellDue,
      reasked,
      fellAt,
      backedOff,
    };
    for (const invariant of invariants) {
      const detail = invariant.check(facts);
      if (detail !== undefined) return { invariant, detail, maxRetries, ...(backoff ? { backoff } : {}), steps };
    }
    for (const [item] of fellDue) backedOff.delete(item);
    if (operation.verb === "get" && expected.kind === "value") {
      reasked.delete(expected.value);
      fellAt.delete(expected.value);
    }
  }
  return undefined;
}

/** Verifies `run`, started on a driver, once it is ready (see {@link verify}). */
export async function verifyStarted(
  started: MaybePromise<Observe>,
  run: Run,
  options: VerifyOptions,
): Promise<Violation | undefined> {
  return verify(run, isThenable(started) ? await started : started, options);
}
