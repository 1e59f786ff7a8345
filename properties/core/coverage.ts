/**
 * Transition coverage: which (verb, state of the item, failure count against `maxRetries`) a suite exercised, so a
 * suite that never reaches a transition fails instead of passing vacuously. While shutting down, the failure count
 * no longer matters ([docs/spec.md §12.4](../../docs/spec.md#§12-shutdown)): such a transition is keyed `· shut down` instead.
 */
import type { ItemState, WorkQueueModel } from "../../model/index.js";
import type { Profile } from "./commands.js";
import type { ItemVerb, Operation } from "./operation.js";

/** Where an item's failure count stood against `maxRetries` before the call. */
export type Band = "below" | "at" | "above";

/** Classifies a failure count against `maxRetries`. */
function band(failures: number, maxRetries: number): Band {
  if (failures < maxRetries) return "below";
  return failures === maxRetries ? "at" : "above";
}

/**
 * A transition as a readable key: `retry · in flight + dirty · at`. `get` is keyed by the item it hands out
 * (always queued), or `get · empty`; a call with a value that is not an item is `add · not an item`; a call while
 * shutting down is `add · in flight · shut down`; `shutDown` itself is `shutDown · first` or `shutDown · again`.
 */
export type Transition = string;

/** The key of a call of `verb` on an item in `state` whose failure count stood in `countBand`. */
export function transition(
  verb: ItemVerb | "get" | "shutDown" | "addAfter" | "advance",
  state: ItemState | "empty" | "not an item" | "first" | "again" | string,
  countBand?: Band | "shut down",
) {
  return countBand === undefined ? `${verb} · ${state}` : `${verb} · ${state} · ${countBand}`;
}

/** The key of `operation`, made on a queue that is in the state of `model` (before the call). */
export function transitionOf(operation: Operation, model: WorkQueueModel<unknown>): Transition {
  if (operation.verb === "shutDown") return transition("shutDown", model.shuttingDown ? "again" : "first");
  if (operation.verb === "advance") return advanceOf(operation.ms, model);
  if (operation.verb === "addAfter") return addAfterOf(operation.item, operation.delayMs, model);
  const item = "item" in operation ? operation.item : model.snapshot().queue[0];
  if ("item" in operation && (item === undefined || item === null)) return transition(operation.verb, "not an item");
  const shut = model.shuttingDown ? "shut down" : undefined;
  if (item === undefined) return transition(operation.verb, "empty", shut);
  return transition(operation.verb, stateOf(item, model), shut ?? band(model.failures(item), model.maxRetries));
}

/** An item's state, with ` + waiting` when it waits ([docs/spec.md §17](../../docs/spec.md#§17-delayed-adds)). */
function stateOf(item: unknown, model: WorkQueueModel<unknown>): string {
  return model.dueOf(item) === undefined ? model.stateOf(item) : `${model.stateOf(item)} + waiting`;
}

/** The key of an `advance`: whether nothing, one item, or items due at the same time fall due, and while shutting down. */
function advanceOf(ms: number, model: WorkQueueModel<unknown>): Transition {
  const dues = model
    .snapshot()
    .waiting.map(([, due]) => due)
    .filter((due) => due <= model.now + ms);
  const tie = new Set(dues).size < dues.length;
  const what = dues.length === 0 ? "nothing due" : tie ? "a tie falls due" : "falls due";
  return transition("advance", what, model.shuttingDown ? "shut down" : undefined);
}

/** The key of an `addAfter`: the item's state, and whether the delay is not positive, later, earlier, or not a delay. */
function addAfterOf(item: unknown, delayMs: unknown, model: WorkQueueModel<unknown>): Transition {
  if (item === undefined || item === null) return transition("addAfter", "not an item");
  if (typeof delayMs !== "number" || !Number.isFinite(delayMs)) return transition("addAfter", "not a delay");
  const due = model.dueOf(item);
  const when =
    delayMs <= 0 ? "now" : due === undefined ? "later" : model.now + delayMs < due ? "earlier" : "not earlier";
  return transition("addAfter", `${stateOf(item, model)} · ${when}`, model.shuttingDown ? "shut down" : undefined);
}

const bands: readonly Band[] = ["below", "at", "above"];
const allStates: readonly ItemState[] = ["absent", "queued", "in flight", "in flight + dirty"];
const heldStates: readonly ItemState[] = ["in flight", "in flight + dirty"];

/** Which transitions to expect besides the profile's: those of sequences that call `shutDown`, or move time. */
export interface ReachableOptions {
  /** Whether sequences call `shutDown` (docs/spec.md §12). @defaultValue `false` */
  readonly shutDown?: boolean | undefined;
  /** Whether sequences call `addAfter` and move time (docs/spec.md §17). @defaultValue `false` */
  readonly time?: boolean | undefined;
}

/**
 * Every transition a sequence of the profile can reach, over all `maxRetries` from 0 to `Infinity`; with
 * `shutDown`, also every transition while shutting down.
 */
export function reachable(profile: Profile, options: ReachableOptions = {}): Transition[] {
  const open = [...reachableOpen(profile), ...(options.time === true ? reachableTimed(profile, options) : [])];
  if (options.shutDown !== true) return open;
  const shut = (verb: ItemVerb | "get", states: readonly (ItemState | "empty")[]) =>
    states.map((state) => transition(verb, state, "shut down"));
  const held = profile === "contract" ? heldStates : allStates;
  return [
    ...open,
    transition("shutDown", "first"),
    transition("shutDown", "again"),
    ...shut("add", allStates),
    ...shut("get", ["queued", "empty"]),
    ...shut("done", held),
    ...shut("retry", held),
    ...shut("forget", allStates),
  ];
}

/**
 * The transitions time adds: every verb on a waiting item (absent or in flight), `addAfter` on every state with
 * each kind of delay, and `advance` with nothing, one item or a tie falling due — also while shutting down.
 */
function reachableTimed(profile: Profile, options: ReachableOptions): Transition[] {
  const waitingStates = ["absent + waiting", "in flight + waiting"];
  const held = profile === "contract" ? ["in flight + waiting"] : waitingStates;
  const keyed = (verb: ItemVerb, states: readonly string[]) =>
    states.flatMap((state) => bands.map((b) => transition(verb, state, b)));
  const shut = options.shutDown === true;
  const after = (states: readonly string[], whens: readonly string[]) =>
    states.flatMap((state) =>
      whens.flatMap((when) => {
        const key = transition("addAfter", `${state} · ${when}`);
        return shut ? [key, `${key} · shut down`] : [key];
      }),
    );
  const advances = ["nothing due", "falls due", "a tie falls due"].flatMap((what) => {
    const key = transition("advance", what);
    return shut ? [key, `${key} · shut down`] : [key];
  });
  return [
    ...keyed("add", waitingStates),
    ...keyed("done", held),
    ...keyed("retry", held),
    ...keyed("forget", waitingStates),
    ...after(allStates, ["now", "later"]),
    ...after(waitingStates, ["now", "earlier", "not earlier"]),
    ...advances,
    ...(profile === "robust" ? [transition("addAfter", "not an item"), transition("addAfter", "not a delay")] : []),
  ];
}

/** Every transition of a sequence of the profile that does not call `shutDown`. */
function reachableOpen(profile: Profile): Transition[] {
  const each = (verb: ItemVerb | "get", states: readonly ItemState[]) =>
    states.flatMap((state) => bands.map((b) => transition(verb, state, b)));
  const held = profile === "contract" ? heldStates : allStates;
  const keyed = [
    ...each("add", allStates),
    ...each("get", ["queued"]),
    transition("get", "empty"),
    ...each("done", held),
    ...each("retry", held),
    ...each("forget", allStates),
  ];
  if (profile === "contract") return keyed;
  const verbs: readonly ItemVerb[] = ["add", "done", "retry", "forget"];
  return [...keyed, ...verbs.map((verb) => transition(verb, "not an item"))];
}

/** Counts how often each transition was exercised. */
export class Coverage {
  /** Hits per transition. */
  readonly hits = new Map<Transition, number>();

  /** Counts one exercise of `key`. */
  record(key: Transition): void {
    this.hits.set(key, (this.hits.get(key) ?? 0) + 1);
  }

  /** The transitions of `profile` (with `options`, see {@link reachable}) that were never exercised. */
  missed(profile: Profile, options: ReachableOptions = {}): Transition[] {
    return reachable(profile, options).filter((key) => !this.hits.has(key));
  }
}
