/**
 * Transition coverage: which (verb, state of the item, failure count against `maxRetries`) a suite exercised, so a
 * suite that never reaches a transition fails instead of passing vacuously.
 */
import type { ItemState } from "../model/index.js";
import type { Profile } from "./commands.js";
import type { ItemVerb } from "./operation.js";

/** Where an item's failure count stood against `maxRetries` before the call. */
export type Band = "below" | "at" | "above";

/** Classifies a failure count against `maxRetries`. */
export function band(failures: number, maxRetries: number): Band {
  if (failures < maxRetries) return "below";
  return failures === maxRetries ? "at" : "above";
}

/**
 * A transition as a readable key: `retry · in flight + dirty · at`. `get` is keyed by the item it hands out
 * (always queued), or `get · empty`; a call with a value that is not an item is `add · not an item`.
 */
export type Transition = string;

/** The key of a call of `verb` on an item in `state` whose failure count stood in `countBand`. */
export function transition(verb: ItemVerb | "get", state: ItemState | "empty" | "not an item", countBand?: Band) {
  return countBand === undefined ? `${verb} · ${state}` : `${verb} · ${state} · ${countBand}`;
}

const bands: readonly Band[] = ["below", "at", "above"];
const allStates: readonly ItemState[] = ["absent", "queued", "in flight", "in flight + dirty"];
const heldStates: readonly ItemState[] = ["in flight", "in flight + dirty"];

/** Every transition a sequence of the profile can reach, over all `maxRetries` from 0 to `Infinity`. */
export function reachable(profile: Profile): Transition[] {
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

  /** The transitions of `profile` that were never exercised. */
  missed(profile: Profile): Transition[] {
    return reachable(profile).filter((key) => !this.hits.has(key));
  }
}
