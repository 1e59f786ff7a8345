/**
 * The options of the sequential check and of `checkConformance`, and the one step that qualifies them: every
 * default filled, the replay token decoded and checked against the options it was made with, the seed chosen. The
 * check reads the qualified value and never writes a default again (as fast-check's `QualifiedParameters`).
 */
import type { Delays, Shape } from "../core/arbitraries.js";
import { defaultProfile, type Profile } from "../core/commands.js";
import type { Coverage } from "../core/coverage.js";
import { freshSeed, type QualifiedBase, qualifyBase } from "../core/options.js";
import { type Replay, type ReplayOptions, readReplay } from "../core/replay.js";
import { defaultShrinkCalls } from "../core/shrink-budget.js";
import { anyItems, type ItemUniverse, stringItems } from "../core/universes.js";

/**
 * Options of {@link checkConformance}.
 *
 * @example
 * ```ts
 * import { checkConformance, type ConformanceOptions } from "workqueue-spec/properties";
 *
 * const options: ConformanceOptions = { profile: "contract", runs: 500, shutDown: true, time: true };
 * const report = await checkConformance((queueOptions) => new MyQueue(queueOptions), options);
 * ```
 *
 * @public
 */
export interface ConformanceOptions {
  /** Which calls sequences may make: `"contract"` calls `done` and `retry` only for items in flight, `"robust"` any call on any item. @defaultValue `"robust"` */
  readonly profile?: Profile;
  /** How many random sequences to run. @defaultValue `100` */
  readonly runs?: number;
  /** The random seed. @defaultValue a fresh one, printed in the report */
  readonly seed?: number | undefined;
  /**
   * Replays exactly one counterexample and nothing else: the `replay` token of a failed report. Overrides `seed`.
   * The token carries the options that shape the runs (profile, shutDown, maxCommands, shape, items,
   * finiteMaxRetries); a check with other options refuses it with an `OptionError` naming the option.
   * @defaultValue none; in `conformanceTests`, the environment variable `WORKQUEUE_REPLAY`, if set, so that a
   * printed replay works in any project's test suite
   */
  readonly replay?: string | undefined;
  /**
   * How many calls shrinking a failure may make to the implementation, all its runs together. The budget is counted
   * in work, not time, so that the same implementation, seed and options give the same counterexample on an idle
   * laptop and on a loaded CI machine. When it runs out, the report gives the shortest counterexample found so far
   * and says that it may not be minimal; its token still replays exactly that one. The runs of the survey, before
   * shrinking starts, are not counted. @defaultValue 500000
   */
  readonly shrinkCalls?: number | undefined;
  /**
   * How long shrinking may take, in milliseconds, whatever is left of `shrinkCalls`: a safety net for an
   * implementation so slow that its calls would take minutes. The only limit that depends on the machine; the
   * report says when it is what stopped shrinking. @defaultValue 120000
   */
  readonly shrinkTimeMs?: number | undefined;
  /** The longest sequence. @defaultValue 100 calls with few items, 250 with many */
  readonly maxCommands?: number | undefined;
  /**
   * Which shapes of sequence to draw: `few` items hit hard, `many` items in a queue dozens deep, `deep` runs of
   * macro commands (bursts of up to ~6,000 items, holds, drains, cycles of up to ~46,000 items taken and queued
   * again, long failure streaks), `both` (few and many) or `all`. @defaultValue `"all"`
   */
  readonly shape?: Shape | "both" | "all" | undefined;
  /**
   * The items to draw from; pass {@link stringItems} for a queue of strings only.
   * @defaultValue any values (`0`, `-0`, `NaN`, `true`, objects equal as JSON, besides the strings) in `checkConformance`, {@link stringItems} in `checkDriver`
   */
  readonly items?: ItemUniverse;
  /** Whether error messages must equal the model's; otherwise only the error's name must. @defaultValue `false` */
  readonly compareMessages?: boolean;
  /**
   * Draw only finite `maxRetries` (0 to 6), for implementations that cannot be made with `Infinity`, such as those
   * over protocol v1, whose `maxRetries` is a JSON integer. @defaultValue `false`
   */
  readonly finiteMaxRetries?: boolean;
  /** Where to count the transitions exercised. @defaultValue nowhere @internal */
  readonly coverage?: Coverage | undefined;
  /**
   * Whether the queues offer `shutDown` ([docs/spec.md §12](../../docs/spec.md#§12-shutdown)), so that sequences call it and check what follows;
   * `shuttingDown` is then checked too, if offered. Without it, a queue is checked exactly as one without shutdown.
   * @defaultValue `false`
   */
  readonly shutDown?: boolean | undefined;
  /**
   * Whether the queues have time ([docs/spec.md §17](../../docs/spec.md#§17-delayed-adds)): sequences then also call `addAfter` and move the clock,
   * and some runs make `retry` back off, so that every timed rule is checked after every step. Each queue is made
   * with `clock` (time starts at 0 and moves only when the check moves it) and, in some runs, `backoff`
   * (see {@link SubjectOptions}); `waiting` is checked too, if offered. @defaultValue `false`
   */
  readonly time?: boolean | undefined;
  /**
   * How long, in milliseconds, a call or a view of an in-process queue may take to settle before the check stops
   * with a `ProtocolBreach` of kind `timed out` (a promise that never settles would otherwise hang the check).
   * @defaultValue 5000
   */
  readonly timeoutMs?: number | undefined;
  /**
   * Whether `checkConformance` also makes overlapping calls ([docs/spec.md §10.8](../../docs/spec.md#§10-invariants), {@link checkOverlapping}): `runs`
   * runs of calls made before the earlier ones are awaited, whose answers must be those of some order of them.
   * Made once the other runs conform. @defaultValue `true` when the queue's `get` or `add` answers a promise
   */
  readonly overlapping?: boolean | undefined;
  /** Called after every run, shrinking runs included, with the totals so far. @defaultValue nothing is called */
  readonly onProgress?: ((progress: { readonly runs: number; readonly commands: number }) => void) | undefined;
}

/** The progress callback: told the runs and calls so far. */
export type Progress = NonNullable<ConformanceOptions["onProgress"]>;

/**
 * What a check decides for the options it is not given: the items, and the delays its queues can be given (`any`
 * in process, where `NaN` can be passed; `finite` over a driver, whose protocol carries JSON numbers).
 */
export interface CheckContext {
  /** The items drawn from when `items` is not given. */
  readonly items: ItemUniverse;
  /** The delays `addAfter` is given when time is checked. */
  readonly delays: Delays;
}

/** The context of {@link checkDriver}: any driver, its queue perhaps outside this process. */
export const driverDefaults: CheckContext = { items: stringItems, delays: "finite" };

/** The context of {@link checkConformance}: a factory's queues, in process. */
export const inProcessDefaults: CheckContext = { items: anyItems, delays: "any" };

/** {@link ConformanceOptions} with every default filled, but for the replay and the seed (see {@link qualify}). */
export interface SettledOptions extends QualifiedBase {
  readonly profile: Profile;
  readonly shrinkCalls: number;
  /** `undefined`: each shape's own longest sequence. */
  readonly maxCommands: number | undefined;
  readonly shape: Shape | "both" | "all";
  readonly items: ItemUniverse;
  /** The name of `items`, as reports and replay tokens give it. */
  readonly universe: string;
  readonly compareMessages: boolean;
  readonly finiteMaxRetries: boolean;
  readonly coverage: Coverage | undefined;
  readonly shutDown: boolean;
  readonly delays: Delays;
  /** `undefined`: made when the queue's `get` or `add` answers a promise. */
  readonly overlapping: boolean | undefined;
  readonly onProgress: Progress | undefined;
}

/** The options a check reads: every default filled, the replay decoded and checked, the seed chosen. */
export interface QualifiedOptions extends SettledOptions {
  /** The run to replay, if the options or `WORKQUEUE_REPLAY` gave a token. */
  readonly replay: Replay | undefined;
  /** The seed: the replay's, the option, or a fresh one. */
  readonly seed: number;
}

/** `options` with every default filled from the documentation of {@link ConformanceOptions} and `context`. */
export function settle(options: ConformanceOptions, context: CheckContext): SettledOptions {
  const items = options.items ?? context.items;
  return {
    ...qualifyBase(options),
    profile: options.profile ?? defaultProfile,
    shrinkCalls: options.shrinkCalls ?? defaultShrinkCalls,
    maxCommands: options.maxCommands,
    shape: options.shape ?? "all",
    items,
    universe: items.name ?? "custom",
    compareMessages: options.compareMessages === true,
    finiteMaxRetries: options.finiteMaxRetries === true,
    coverage: options.coverage,
    shutDown: options.shutDown === true,
    delays: context.delays,
    overlapping: options.overlapping,
    onProgress: options.onProgress,
  };
}

/**
 * Qualifies `options` once, for a check in `context`: every default filled; the replay token decoded and checked against the options it was made with, so that a
 * token made under other options is refused with an `OptionError` naming the option; the seed chosen.
 */
export function qualify(options: ConformanceOptions, context: CheckContext): QualifiedOptions {
  const settled = settle(options, context);
  const token = options.replay;
  const replay = token === undefined || token === "" ? undefined : readReplay(token, tokenOptions(settled));
  const seed = replay?.seed ?? options.seed ?? freshSeed();
  return { ...settled, replay, seed };
}

/** The options a replay token carries, as a check qualified them. */
export function tokenOptions(options: SettledOptions): ReplayOptions {
  return {
    profile: options.profile,
    shutDown: options.shutDown,
    maxCommands: options.maxCommands ?? null,
    shape: options.shape,
    items: options.universe,
    finiteMaxRetries: options.finiteMaxRetries,
    time: options.time,
  };
}

/**
 * The options of `options` that a replay token carries, with their defaults: what a command-line entry point checks
 * a `--replay` token against before it starts anything.
 *
 * @internal
 */
export function replayOptionsOf(options: ConformanceOptions): ReplayOptions {
  return tokenOptions(settle(options, driverDefaults));
}
