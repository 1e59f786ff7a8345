/**
 * How the lifecycle check paces a queue whose calls answer promises (a queue over a database, `awaitCalls`): the
 * scheduler releases one step at a time, each once the queue settled after the one before — its calls answered,
 * its takes and drains, then its views, agreeing with the model's, or `timeoutMs` passed — and then they are compared.
 */
import type * as fc from "fast-check";
import { showValue } from "../core/render.js";
import { flush, promised } from "../core/turns.js";
import { type LifecycleRule, lifecycleRules as rules } from "./rules.js";
import type { Run } from "./run.js";
import type { LifecycleSubject } from "./scenario.js";
import type { Shown } from "./views.js";

/**
 * How the check waits for a queue whose calls answer promises: after each step, until its takes, drains and views
 * agree with the model's, for at most `timeoutMs`.
 */
export interface Awaiting {
  readonly timeoutMs: number;
}

/** What settling reads of one run, and how it compares it. */
export interface Settling {
  readonly run: Run;
  readonly queue: LifecycleSubject;
  /** The last step whose calls were made, for the log. */
  last(): string;
  /**
   * Whether every take and drain stands where the model's does, or one never will before the next step: it settled
   * otherwise than the model's (a promise settles once).
   */
  callsSettled(): boolean;
  /** How the takes and drains differ from the model's now: each the rule it breaks and what went wrong. */
  brokenCalls(): readonly [LifecycleRule, string][];
  /** The views, awaited. */
  awaitViews(): Promise<Shown>;
  /** Whether the views shown are the model's. */
  viewsAgree(shown: Shown): boolean;
  /**
   * Compares everything: an item swallowed (its rule the sharper one), the takes and drains — those `broken` before
   * the views were read, then as they stand — and the views shown.
   */
  compare(shown: Shown, broken: readonly [LifecycleRule, string][]): void;
}

/** A pause between two looks at a queue that has not settled yet: a timer, not a turn, so that its I/O can happen. */
function pause(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 1));
}

/** Each task released only once the queue settled after the one before, until none is left. */
export async function drive(s: fc.Scheduler, it: Settling, awaiting: Awaiting): Promise<void> {
  for (;;) {
    await settle(it, awaiting);
    if (s.count() === 0) return;
    await s.waitNext(1);
  }
}

/**
 * Waits until the calls of the steps released have answered and the queue's takes and drains, then its views,
 * agree with the model's — at most `timeoutMs`, not at all once a rule broke — then compares them. Takes and
 * drains are awaited before any view is read: reading a view settles what happened by then (a due item is queued,
 * §17.5) and may wake a waiting take, which the queue must do by itself.
 */
async function settle(it: Settling, { timeoutMs }: Awaiting): Promise<void> {
  const { run } = it;
  const deadline = performance.now() + timeoutMs;
  if (!(await run.settle(timeoutMs))) {
    run.fail(rules.answers, `after ${it.last()}, a call did not answer within ${timeoutMs} ms`);
  }
  const waits = (agrees: () => boolean) => !run.failed && !agrees() && performance.now() < deadline;
  await quiet(it);
  while (waits(() => it.callsSettled())) await pause().then(() => quiet(it));
  const broken = it.brokenCalls(); // before a view is read, which may wake a take
  let shown = await it.awaitViews();
  while (waits(() => it.viewsAgree(shown))) {
    await pause().then(() => quiet(it));
    shown = await it.awaitViews();
  }
  it.compare(shown, broken);
}

/** Waits until none of the queue's calls is in progress, as far as it tells (`idle`), and a turn more. */
async function quiet({ run, queue }: Settling): Promise<void> {
  await promised(async () => queue.idle?.()).catch((error: unknown) => {
    run.fail(rules.answers, `idle() rejected with ${showValue(error)}`);
  });
  await flush();
}
