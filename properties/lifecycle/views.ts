/**
 * The views the lifecycle check compares with the model's (docs/spec.md §9, §12.2, §17.6): read from the queue as a
 * property, a getter or a method — awaited, for a queue whose calls answer promises — and their differences in
 * words.
 */
import type { WorkQueueModel } from "../../model/index.js";
import { showValue } from "../core/render.js";
import { promised } from "../core/turns.js";
import type { LifecycleSubject } from "./scenario.js";

/** The views compared after every step, when the queue shows them. */
export const lifecycleViews = ["size", "inFlight", "shuttingDown", "waiting"] as const;

/** One of them. */
export type LifecycleView = (typeof lifecycleViews)[number];

/** The views as the queue shows them: one key per view read, `undefined` for those it does not show. */
export type Shown = Partial<Record<LifecycleView, unknown>>;

/** Makes a call on the queue, answering `undefined` when it threw (which the caller books). */
export type Caller = (label: string, thunk: () => unknown) => unknown;

/** The views compared: `waiting` with time only. */
function compared(time: boolean): readonly LifecycleView[] {
  return lifecycleViews.filter((view) => view !== "waiting" || time);
}

/** A view as `queue` shows it: a property, a getter or a method's answer, through `call`. */
export function shownView(queue: LifecycleSubject, view: LifecycleView, call: Caller): unknown {
  const shown: unknown = queue[view];
  return typeof shown === "function" ? call(view, () => shown.call(queue)) : shown;
}

/** The views `queue` shows, read at once. */
export function readViews(queue: LifecycleSubject, time: boolean, call: Caller): Shown {
  const shown: Shown = {};
  for (const view of compared(time)) shown[view] = shownView(queue, view, call);
  return shown;
}

/** The views of a queue whose calls are awaited, one after the other; one that rejects is `rejected`'s, then `undefined`. */
export async function awaitViews(
  queue: LifecycleSubject,
  time: boolean,
  call: Caller,
  rejected: (view: LifecycleView, error: unknown) => void,
): Promise<Shown> {
  const shown: Shown = {};
  for (const view of compared(time)) {
    shown[view] = await promised(async () => shownView(queue, view, call)).catch((error: unknown) => {
      rejected(view, error);
      return undefined;
    });
  }
  return shown;
}

/**
 * How the views shown differ from `model`'s, each in words; `swallowed` when more items are in flight than in the
 * model. Each view the queue showed is added to `seen`.
 */
export function viewDiff(
  model: WorkQueueModel<string>,
  shown: Shown,
  seen: Set<string>,
): { wrong: string[]; swallowed: boolean } {
  const wrong: string[] = [];
  let swallowed = false;
  for (const view of lifecycleViews) {
    const actual = shown[view];
    if (actual === undefined) continue;
    seen.add(view);
    const expected = model[view];
    if (actual === expected) continue;
    wrong.push(`${view} is ${showValue(actual)}, not ${showValue(expected)}`);
    swallowed ||= view === "inFlight" && (actual as number) > model.inFlight;
  }
  return { wrong, swallowed };
}
