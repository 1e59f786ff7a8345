/**
 * The random inputs: `maxRetries`, the items, and command sequences of two shapes — `few` items hit hard (every
 * state of an item meets every verb, failure counts climb past `maxRetries`) and `many` items (the queue grows
 * deep, dozens of items at once, so any internal growth of an implementation is exercised).
 */
import * as fc from "fast-check";
import { CallCommand, HeldCommand, type Profile, type QueueCommand } from "./commands.js";

/**
 * The items a suite draws from.
 *
 * @public
 */
export interface ItemUniverse {
  /** The universe's name, which reports show and replay tokens carry. @defaultValue `"custom"` */
  readonly name?: string;
  /** A handful of items, drawn often; the first one is where shrinking leads. Include the awkward ones. */
  readonly few: readonly unknown[];
  /** The `i`-th of many distinct items, for deep queues (`i` from 0 to 63). */
  readonly many: (i: number) => unknown;
  /** Values that are not items ([docs/spec.md §1.2](../../docs/spec.md#§1-items)), sent now and then by the robust profile. */
  readonly invalid: readonly unknown[];
}

/**
 * String items, as the wire protocol carries them: plain keys, the empty string, keys that are special to plain
 * objects, and a non-ASCII key.
 *
 * @example
 * ```ts
 * import { checkConformance, stringItems } from "workqueue-spec/properties";
 *
 * // A queue whose items are strings only, as over the wire:
 * await checkConformance((options) => new MyQueue(options), { items: stringItems });
 * ```
 *
 * @public
 */
export const stringItems: ItemUniverse = {
  name: "strings",
  few: ["a", "b", "", "__proto__", "constructor", "ключ/ü"],
  many: (i) => `ns/k${i}`,
  invalid: [undefined, null],
};

/**
 * The items the reference queue is checked with: the string items, plus `0` (falsy) and `NaN` (not equal to
 * itself under `===`, the same item under SameValueZero), which catch truthiness and equality mistakes.
 */
export const referenceItems: ItemUniverse = {
  ...stringItems,
  name: "strings, 0 and NaN",
  few: [...stringItems.few, 0, Number.NaN],
};

/**
 * The two shapes of a sequence.
 *
 * @public
 */
export type Shape = "few" | "many";

/** One run's input: the queue's `maxRetries` and the commands to run on it. */
export interface Scenario {
  /** The `maxRetries` the queue is made with. */
  readonly maxRetries: number;
  /** The commands, as `fc.commands` generates and shrinks them. */
  readonly commands: Iterable<QueueCommand>;
}

/** `maxRetries` from 0 to 6; shrinks towards 0. */
const finiteMaxRetries = fc.integer({ min: 0, max: 6 });

/** `maxRetries` from 0 to 6, and sometimes `Infinity`; shrinks towards 0. */
export const maxRetries: fc.Arbitrary<number> = fc.oneof(
  { weight: 7, arbitrary: finiteMaxRetries },
  { weight: 1, arbitrary: fc.constant(Number.POSITIVE_INFINITY) },
);

/** How often each verb is drawn, per shape. */
const weights: Record<Shape, Record<"add" | "get" | "done" | "retry" | "forget", number>> = {
  few: { add: 3, get: 3, done: 3, retry: 3, forget: 2 },
  many: { add: 8, get: 3, done: 3, retry: 2, forget: 1 },
};

/** The longest sequence, per shape. */
const maxCommands: Record<Shape, number> = { few: 100, many: 250 };

/**
 * How many other commands are drawn for each `shutDown`, per shape, when sequences call it: about once in a
 * sequence, near its middle, so that most sequences reach a shutdown with items queued, in flight and dirty.
 */
const commandsPerShutDown: Record<Shape, number> = { few: 50, many: 125 };

/** The arbitrary of one command, given the profile, the shape and the items. */
export function command(profile: Profile, shape: Shape, universe: ItemUniverse): fc.Arbitrary<QueueCommand> {
  // The first two of the few items come up half the time, so that one item goes through many cycles.
  const few = fc.oneof(fc.constantFrom(...universe.few.slice(0, 2)), fc.constantFrom(...universe.few));
  const valid = shape === "few" ? few : fc.nat(63).map(universe.many);
  const item =
    profile === "robust" && universe.invalid.length > 0
      ? fc.oneof({ weight: 19, arbitrary: valid }, { weight: 1, arbitrary: fc.constantFrom(...universe.invalid) })
      : valid;
  const w = weights[shape];
  const onItem = (verb: "add" | "done" | "retry" | "forget") => item.map((x) => new CallCommand(verb, x));
  const held = (verb: "done" | "retry") =>
    profile === "contract" ? fc.nat(7).map((pick) => new HeldCommand(verb, pick)) : onItem(verb);
  return fc.oneof(
    { weight: w.add, arbitrary: onItem("add") },
    { weight: w.get, arbitrary: fc.constant(new CallCommand("get")) },
    { weight: w.done, arbitrary: held("done") },
    { weight: w.retry, arbitrary: held("retry") },
    { weight: w.forget, arbitrary: onItem("forget") },
  );
}

/** What a run's arbitrary is made of. */
export interface ScenarioSpec {
  /** Which calls the sequence may make. */
  readonly profile: Profile;
  /** Few items hit hard, or many items in a deep queue. */
  readonly shape: Shape;
  /** The items to draw from. */
  readonly items: ItemUniverse;
  /** The longest sequence; by default 100 for `few` and 250 for `many`. */
  readonly maxCommands?: number | undefined;
  /** The fast-check hint that a replay of a shrunk command sequence needs besides its seed and path. */
  readonly replayPath?: string | undefined;
  /** Whether `maxRetries` must be finite. @defaultValue `false` */
  readonly finite?: boolean;
  /**
   * Whether sequences also call `shutDown` ([docs/spec.md §12](../../docs/spec.md#§12-shutdown)). Without it, the sequences are exactly those of a
   * queue that has no shutdown.
   */
  readonly shutDown?: boolean | undefined;
}

/** The arbitrary of a whole run: `maxRetries` and a command sequence. */
export function scenario(spec: ScenarioSpec): fc.Arbitrary<Scenario> {
  const limits = { maxCommands: spec.maxCommands ?? maxCommands[spec.shape], size: "max" as const };
  const call = command(spec.profile, spec.shape, spec.items);
  const shutDown = fc.constant(new CallCommand("shutDown"));
  const commands = fc.commands(
    [
      spec.shutDown === true
        ? fc.oneof({ weight: commandsPerShutDown[spec.shape], arbitrary: call }, { weight: 1, arbitrary: shutDown })
        : call,
    ],
    spec.replayPath === undefined ? limits : { ...limits, replayPath: spec.replayPath },
  );
  return fc.record({ maxRetries: spec.finite === true ? finiteMaxRetries : maxRetries, commands });
}

/** The fast-check replay hint of a generated command sequence, as it prints it: `/*replayPath="…"*\/`. */
export function replayPathOf(input: Scenario): string {
  return /replayPath="([^"]*)"/.exec(String(input.commands))?.[1] ?? "";
}
