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
  verb: ItemVerb | "get" | "shutDown",
  state: ItemState | "empty" | "not an item" | "first" | "again",
  countBand?: Band | "shut down",
) {
  return countBand === undefined ? `${verb} · ${state}` : `${verb} · ${state} · ${countBand}`;
}

/** The key of `operation`, made on a queue that is in the state of `model` (before the call). */
export function transitionOf(operation: Operation, model: WorkQueueModel<unknown>): Transition {
  if (operation.verb === "shutDown") return transition("shutDown", model.shuttingDown ? "again" : "first");
  const item = "item" in operation ? operation.item : model.snapshot().queue[0];
  if ("item" in operation && (item === undefined || item === null)) return transition(operation.verb, "not an item");
  const shut = model.shuttingDown ? "shut down" : undefined;
  if (item === undefined) return transition(operation.verb, "empty", shut);
  return transition(operation.verb, model.stateOf(item), shut ?? band(model.failures(item), model.maxRetries));
}

const bands: readonly Band[] = ["below", "at", "above"];
const allStates: readonly ItemState[] = ["absent", "queued", "in flight", "in flight + dirty"];
const heldStates: readonly ItemState[] = ["in flight", "in flight + dirty"];

/** Which transitions to expect besides the profile's: those of sequences that call `shutDown`. */
export interface ReachableOptions {
  /** Whether sequences call `shutDown` (docs/spec.md §12). @defaultValue `false` */
  readonly shutDown?: boolean | undefined;
}

/**
 * Every transition a sequence of the profile can reach, over all `maxRetries` from 0 to `Infinity`; with
 * `shutDown`, also every transition while shutting down.
 */
export function reachable(profile: Profile, options: ReachableOptions = {}): Transition[] {
  const open = reachableOpen(profile);
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
