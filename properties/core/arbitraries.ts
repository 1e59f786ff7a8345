/**
 * The random inputs: `maxRetries`, the items, and command sequences of two shapes — `few` items hit hard (every
 * state of an item meets every verb, failure counts climb past `maxRetries`) and `many` items (the queue grows
 * deep, dozens of items at once, so any internal growth of an implementation is exercised).
 */
import * as fc from "fast-check";
import {
  AdvanceToDueCommand,
  CallCommand,
  HeldCommand,
  type Landing,
  type Profile,
  type QueueCommand,
  TieCommand,
} from "./commands.js";
import { FlakyCommand } from "./flaky.js";
import { MacroCommand, type MacroKind } from "./macros.js";
import type { Backoff } from "./operation.js";
import type { ItemUniverse } from "./universes.js";
import { WorkerStepCommand } from "./worker-step.js";

/**
 * The two shapes of a sequence.
 *
 * @inline
 */
export type Shape = "few" | "many" | "deep";

/** One run's input: the queue's `maxRetries` and the commands to run on it. */
export interface Scenario {
  /** The `maxRetries` the queue is made with. */
  readonly maxRetries: number;
  /** The commands, as `fc.commands` generates and shrinks them. */
  readonly commands: Iterable<QueueCommand>;
  /** When time is checked, the backoff of `retry` in this run, if any ([docs/spec.md §7.3](../../docs/spec.md#§7)). */
  readonly backoff?: Backoff | undefined;
}

/**
 * Which delays `addAfter` is given: `finite` numbers only (the protocol carries JSON numbers), or `any`, which
 * adds `NaN`, the infinities and a string in the robust profile ([docs/spec.md §17.8](../../docs/spec.md#§17-delayed-adds)).
 */
export type Delays = "finite" | "any";

/**
 * A fraction of a millisecond or a few: `k / 8` for `k` from 1 to 24 (0.125 to 3). The spec allows any finite
 * delay, step and backoff base (docs/spec.md §17.2, §18.2, §18.9), and a queue that keeps time in whole
 * milliseconds passes every run of whole ones. Dyadic fractions (`k / 2^j`) are drawn, not decimal ones such as
 * `0.1`: their sums, halves and doublings are exact in binary floating point, so a due time is the same number
 * whatever order a queue adds its parts in (`now + delay`, or the remaining delay of a timer), an advance lands
 * exactly on it, and the protocol's JSON carries it exactly. A decimal fraction would blame a queue for an ulp of
 * rounding that the spec does not decide; a dyadic one blames only a queue that rounds.
 */
const fraction: fc.Arbitrary<number> = fc.integer({ min: 1, max: 24 }).map((k) => k / 8);

/**
 * A delay: small ones most of the time, so that items fall due at the same instant (ties) and re-delays cross;
 * fractions of a millisecond often; sometimes zero or negative (an `add`, §17.1), sometimes long.
 */
const delay: fc.Arbitrary<number> = fc.oneof(
  // Shrinking may move a long delay to a short one, not only within its own kind.
  { withCrossShrink: true },
  { weight: 5, arbitrary: fc.constantFrom(1, 2, 3, 5) },
  { weight: 3, arbitrary: fraction },
  { weight: 2, arbitrary: fc.constantFrom(0, -1, -0.5) },
  { weight: 2, arbitrary: fc.integer({ min: 1, max: 40 }) },
  { weight: 1, arbitrary: fc.constantFrom(1_000, 2 ** 40) },
);

/**
 * How far an `advance` moves when it does not aim at a due time (see {@link AdvanceToDueCommand}): mostly a few
 * milliseconds or a fraction of one, so that some waits fall due and some do not.
 */
const step: fc.Arbitrary<number> = fc.oneof(
  // Shrinking may move a long step to a short one, not only within its own kind.
  { withCrossShrink: true },
  { weight: 5, arbitrary: fc.constantFrom(0, 1, 1, 2, 3) },
  { weight: 2, arbitrary: fraction },
  { weight: 2, arbitrary: fc.integer({ min: 1, max: 40 }) },
  { weight: 1, arbitrary: fc.constant(1_000) },
);

/**
 * The backoff of a timed run ([docs/spec.md §18.2](../../docs/spec.md#§18-backoff-and-rate-limiters)): none in a
 * fifth of the runs, otherwise small bases, fractions among them, so that successive backoffs of one item (`baseMs`,
 * twice that, …) fall between whole milliseconds. Three times in four the cap is 2, 4, 8 or 32 times the base, so
 * that the backoff doubles at least once, as a real one does, before it reaches the cap within a few failures: a
 * queue that counts the failures wrongly (or does not restart from the base after a `forget`) waits too long only
 * while the backoff still grows. Otherwise a cap drawn on its own: below the base, zero, between two doublings or
 * out of reach.
 */
const backoff: fc.Arbitrary<Backoff | undefined> = fc.oneof(
  { weight: 1, arbitrary: fc.constant(undefined) },
  {
    weight: 4,
    arbitrary: fc
      .tuple(
        fc.constantFrom(1, 2, 0.5, 5, 1.5, 0.25, 0),
        fc.oneof(
          { weight: 3, arbitrary: fc.constantFrom(4, 2, 8, 32).map((doublings) => ({ doublings })) },
          { weight: 1, arbitrary: fc.constantFrom(4, 1, 0, 40, 1_000_000, 2.5, 0.75).map((maxMs) => ({ maxMs })) },
        ),
      )
      .map(([baseMs, cap]) => ({ baseMs, maxMs: "maxMs" in cap ? cap.maxMs : baseMs * cap.doublings })),
  },
);

/**
 * The timed commands: `addAfter` of an item, with a drawn delay or one that ties with a waiting item's due time, and
 * `advance` of the clock, by a drawn step or to (or just before or past) a waiting item's due time ([docs/spec.md §17](../../docs/spec.md#§17-delayed-adds)). */
function timed(
  profile: Profile,
  item: fc.Arbitrary<unknown>,
  delays: Delays,
): Record<"addAfter" | "tie" | "advance" | "toDue", fc.Arbitrary<QueueCommand>> {
  const invalid = fc.constantFrom<unknown>(Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, "5");
  const delayMs =
    profile === "robust" && delays === "any"
      ? fc.oneof({ weight: 19, arbitrary: delay as fc.Arbitrary<unknown> }, { weight: 1, arbitrary: invalid })
      : delay;
  return {
    addAfter: fc.tuple(item, delayMs).map(([x, d]) => new CallCommand({ verb: "addAfter", item: x, delayMs: d })),
    tie: fc.tuple(item, fc.nat(3)).map(([x, pick]) => new TieCommand(x, pick)),
    advance: step.map((ms) => new CallCommand({ verb: "advance", ms })),
    toDue: fc
      .tuple(fc.nat(3), fc.constantFrom<Landing>("on", "on", "before", "past"))
      .map(([pick, landing]) => new AdvanceToDueCommand(pick, landing)),
  };
}

/** `maxRetries` from 0 to 6; shrinks towards 0. */
const finiteMaxRetries = fc.integer({ min: 0, max: 6 });

/**
 * `maxRetries` mostly from 0 to 6, sometimes up to 300 (so that a count past 255 is reached) and sometimes
 * `Infinity`; shrinks towards 0.
 */
export const maxRetries: fc.Arbitrary<number> = fc.oneof(
  { weight: 6, arbitrary: finiteMaxRetries },
  { weight: 1, arbitrary: fc.integer({ min: 7, max: 300 }) },
  { weight: 1, arbitrary: fc.constant(Number.POSITIVE_INFINITY) },
);

/**
 * A count from about `2 ** fromBits` (1 by default) to about `2 ** bits`, log-uniform, so that every order of
 * magnitude comes up as often: a bug at 100 items is found as readily as one at 4,000. Drawn as a uniform number that
 * the count grows with, so that shrinking it shrinks the count.
 */
function logUniform(bits: number, fromBits = 0): fc.Arbitrary<number> {
  const span = bits - fromBits;
  return fc
    .integer({ min: 0, max: 1 << 12 })
    .map((x) => Math.max(1, Math.floor(2 ** (fromBits + (x / (1 << 12)) * span))));
}

/**
 * The macro commands of a deep run: bursts of up to ~6,000 items, drains, holds, long cycles, failure streaks,
 * outages (hundreds of distinct items failing, then failing again), stragglers (one item held while hundreds of
 * others finish) and resyncs (every one of the few items added again while it is present).
 */
function macro(universe: ItemUniverse): fc.Arbitrary<QueueCommand> {
  const make = (kind: MacroKind, bits: number, fromBits = 0) =>
    fc
      .tuple(logUniform(bits, fromBits), fc.constantFrom(0, 0, 6_000))
      .map(([count, start]) => new MacroCommand(kind, count, start, universe.many, universe.few));
  return fc.oneof(
    { weight: 4, arbitrary: make("burst", 12.6) },
    { weight: 2, arbitrary: make("drain", 12.6) },
    { weight: 2, arbitrary: make("hold", 11) },
    // Up to ~46,000 cycles of 3 calls: about 2% of deep runs pass 65,536 calls (a 16-bit counter's wrap), at a
    // third more calls per deep run on average than cycles of up to ~23,000, which passed it in 0.3%.
    { weight: 1, arbitrary: make("cycle", 15.5) },
    { weight: 2, arbitrary: make("fail", 10) },
    // From 16 to 512 distinct items failing twice: more than half of the outages fail more than 64, past a small
    // failure table.
    { weight: 1, arbitrary: make("outage", 9, 4) },
    // A slow worker holding one item while 16 to 1,024 others are added, taken and done.
    { weight: 1, arbitrary: make("straggle", 10, 4) },
    // Every special key added again while it is present, in both profiles: NaN, -0, "__proto__", …
    { weight: 1, arbitrary: make("resync", 3) },
  );
}

/** How often each verb is drawn, per shape. */
const weights: Record<Shape, Record<"add" | "get" | "done" | "retry" | "forget", number>> = {
  few: { add: 3, get: 3, done: 3, retry: 3, forget: 2 },
  many: { add: 8, get: 3, done: 3, retry: 2, forget: 1 },
  deep: { add: 3, get: 3, done: 3, retry: 2, forget: 1 },
};

/** The longest sequence, per shape. */
const maxCommands: Record<Shape, number> = { few: 100, many: 250, deep: 16 };

/**
 * How many other commands are drawn for each `shutDown`, per shape, when sequences call it: about once in a
 * sequence, near its middle, so that most sequences reach a shutdown with items queued, in flight and dirty.
 */
const commandsPerShutDown: Record<Shape, number> = {
  few: 50,
  many: 125,
  deep: 8,
};

/** The arbitrary of one command, given the profile, the shape and the items; with `delays`, timed commands too. */
export function command(
  profile: Profile,
  shape: Shape,
  universe: ItemUniverse,
  delays?: Delays,
): fc.Arbitrary<QueueCommand> {
  // The first two of the few items come up half the time, so that one item goes through many cycles.
  const few = fc.oneof(fc.constantFrom(...universe.few.slice(0, 2)), fc.constantFrom(...universe.few));
  const valid = shape === "few" ? few : fc.nat(shape === "many" ? 63 : 12_000).map(universe.many);
  const item =
    profile === "robust" && universe.invalid.length > 0
      ? fc.oneof({ weight: 19, arbitrary: valid }, { weight: 1, arbitrary: fc.constantFrom(...universe.invalid) })
      : valid;
  const w = weights[shape];
  if (shape === "deep") {
    const single = command(profile, "many", universe, delays);
    return fc.oneof({ weight: 3, arbitrary: macro(universe) }, { weight: 2, arbitrary: single });
  }
  const onItem = (verb: "add" | "done" | "retry" | "forget") => item.map((x) => new CallCommand(verb, x));
  const heldItem = (verb: "done" | "retry" | "forget") =>
    fc.nat(7).map((pick): QueueCommand => new HeldCommand(verb, pick));
  // With time, the robust profile finishes a held item half the time too, as the contract profile always does: a
  // timed rule breaks on an item that goes round get, add, retry with a backoff and done, and a random item is
  // seldom the one held.
  const held = (verb: "done" | "retry") =>
    profile === "contract"
      ? heldItem(verb)
      : delays === undefined
        ? onItem(verb)
        : fc.oneof(onItem(verb), heldItem(verb));
  const untimed = [
    { weight: w.add, arbitrary: onItem("add") },
    {
      weight: w.get,
      arbitrary: fc.constant(new CallCommand("get")) as fc.Arbitrary<QueueCommand>,
    },
    { weight: w.done, arbitrary: held("done") },
    { weight: w.retry, arbitrary: held("retry") },
    { weight: w.forget, arbitrary: onItem("forget") },
  ];
  if (delays === undefined) return fc.oneof(...untimed);
  const { addAfter, tie, advance, toDue } = timed(profile, item, delays);
  // One item failing and succeeding by turns, up to 6 rounds, the clock landing on its due times (or just before
  // or past them): random calls seldom take an item again between two backed-off retries with a `forget` between.
  const flaky = fc
    .tuple(
      valid,
      fc.array(fc.boolean(), { minLength: 1, maxLength: 6 }),
      fc.constantFrom<Landing>("on", "on", "before", "past"),
    )
    .map(([x, failures, landing]): QueueCommand => new FlakyCommand(x, failures, landing));
  // With time, `forget` comes up as often as `retry`, half the time of an item held, as a caller forgets an item
  // it processed: so that a forget falls between the backed-off retries of one item (the next backoff starts from
  // baseMs again, §8.1, §18.2).
  untimed[4] = { weight: w.retry, arbitrary: fc.oneof(onItem("forget"), heldItem("forget")) };
  return fc.oneof(
    ...untimed,
    { weight: w.add, arbitrary: addAfter },
    { weight: 1, arbitrary: tie },
    { weight: 1, arbitrary: advance },
    { weight: 2, arbitrary: toDue },
    { weight: 2, arbitrary: flaky },
    // Under the contract profile half as often: its held retries already back items off, and leave them in flight
    // and waiting for the rarest transitions (an addAfter of such an item after the shutdown) to come up.
    {
      weight: profile === "robust" ? 4 : 2,
      arbitrary: fc.boolean().map((fails): QueueCommand => new WorkerStepCommand(fails)),
    },
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
  /**
   * Whether sequences also call `addAfter`, move the clock, and make `retry` back off ([docs/spec.md §17](../../docs/spec.md#§17-delayed-adds)),
   * and with which delays. Without it, the sequences are exactly those of a queue without time.
   */
  readonly time?: Delays | undefined;
}

/** The arbitrary of a whole run: `maxRetries` and a command sequence, and with time, a backoff. */
export function scenario(spec: ScenarioSpec): fc.Arbitrary<Scenario> {
  const limits = {
    maxCommands: spec.maxCommands ?? maxCommands[spec.shape],
    size: "max" as const,
  };
  const call = command(spec.profile, spec.shape, spec.items, spec.time);
  const shutDown = fc.constant(new CallCommand("shutDown"));
  const commands = fc.commands(
    [
      spec.shutDown === true
        ? fc.oneof({ weight: commandsPerShutDown[spec.shape], arbitrary: call }, { weight: 1, arbitrary: shutDown })
        : call,
    ],
    spec.replayPath === undefined ? limits : { ...limits, replayPath: spec.replayPath },
  );
  if (spec.time === undefined) return fc.record({ maxRetries: maxRetriesOf(spec), commands });
  return fc.record({ maxRetries: maxRetriesOf(spec), commands, backoff });
}

/**
 * The `maxRetries` of a run: a deep run leans on large bounds and `Infinity`, where long failure streaks tell a
 * counter that saturates or a bound that is silently smaller from a right one.
 */
function maxRetriesOf(spec: ScenarioSpec): fc.Arbitrary<number> {
  if (spec.finite === true) return spec.shape === "deep" ? fc.integer({ min: 0, max: 300 }) : finiteMaxRetries;
  if (spec.shape !== "deep") return maxRetries;
  return fc.oneof(finiteMaxRetries, fc.integer({ min: 7, max: 300 }), fc.constant(Number.POSITIVE_INFINITY));
}

/** The fast-check replay hint of a generated command sequence, as it prints it: `/*replayPath="…"*\/`. */
export function replayPathOf(input: Scenario): string {
  return /replayPath="([^"]*)"/.exec(String(input.commands))?.[1] ?? "";
}
