/**
 * Replay tokens: everything that decides a failing run, in one paste-safe word. A token carries its format version,
 * the options that shape the runs (profile, shutDown, the longest sequence, the shape, the item universe, finite
 * `maxRetries`) and where the counterexample is (the seed, fast-check's path and replay hint, and how many calls
 * the last shrinking step removed). A replay under other options is refused, naming the option that differs: a
 * token never silently runs another check.
 */
import { OptionError } from "./errors.js";

/** The format version: a token of another version is refused. */
const version = 3;

/** What a token says about the options of the check that made it. */
export interface ReplayOptions {
  readonly profile: string;
  readonly shutDown: boolean;
  readonly maxCommands: number | null;
  readonly shape: string;
  readonly items: string;
  readonly finiteMaxRetries: boolean;
  readonly time: boolean;
}

/** A decoded token. */
export interface Replay extends ReplayOptions {
  /** The seed of the check. */
  readonly seed: number;
  /** fast-check's path to the shrunk counterexample. */
  readonly path: string;
  /** fast-check's replay hint of the shrunk command sequence. */
  readonly replayPath: string;
  /** How many removals the last shrinking step made (it repeats exactly that many on replay). */
  readonly removals: number;
  /** Whether shrinking ran to its end, so that the replay says the same. */
  readonly minimal: boolean;
}

/** The option each field of a token stands for, as a user writes it. */
const optionNames: Record<keyof ReplayOptions, string> = {
  profile: "profile",
  shutDown: "shutDown",
  maxCommands: "maxCommands",
  shape: "shape",
  items: "items",
  finiteMaxRetries: "finiteMaxRetries",
  time: "time",
};

/** Makes the token of `replay`: `wq3.` and base64url of its JSON, so it has no shell-special character and no leading `-`. */
export function encodeReplay(replay: Replay): string {
  const fields = [
    version,
    replay.profile,
    replay.shutDown,
    replay.maxCommands,
    replay.shape,
    replay.items,
    replay.finiteMaxRetries,
    replay.time,
    replay.seed,
    replay.path,
    replay.replayPath,
    replay.removals,
    replay.minimal,
  ];
  return `wq${version}.${Buffer.from(JSON.stringify(fields)).toString("base64url")}`;
}

/**
 * Reads a token.
 *
 * @throws OptionError naming the token when it is not one, or of another format version.
 */
export function decodeReplay(token: string): Replay {
  const bad = (why: string) =>
    new OptionError(
      `Expected \`replay\` to be a token that a failed report printed (wq${version}.…), got \`${JSON.stringify(token)}\`: ${why}`,
    );
  const match = /^wq(\d+)\.([A-Za-z0-9_-]+)$/.exec(token);
  if (match === null) throw bad("it is not a replay token");
  if (Number(match[1]) !== version)
    throw bad(`it is of format version ${match[1]}, this gate reads version ${version}`);
  let fields: unknown;
  try {
    fields = JSON.parse(Buffer.from(match[2] as string, "base64url").toString("utf8"));
  } catch {
    throw bad("it is damaged");
  }
  if (!Array.isArray(fields) || fields.length !== 13 || fields[0] !== version) throw bad("it is damaged");
  const [
    ,
    profile,
    shutDown,
    maxCommands,
    shape,
    items,
    finiteMaxRetries,
    time,
    seed,
    path,
    replayPath,
    removals,
    minimal,
  ] = fields;
  const valid =
    typeof profile === "string" &&
    typeof shutDown === "boolean" &&
    (maxCommands === null || Number.isInteger(maxCommands)) &&
    typeof shape === "string" &&
    typeof items === "string" &&
    typeof finiteMaxRetries === "boolean" &&
    typeof time === "boolean" &&
    Number.isInteger(seed) &&
    typeof path === "string" &&
    /^\d+(:\d+)*$/.test(path) &&
    typeof replayPath === "string" &&
    Number.isInteger(removals) &&
    typeof minimal === "boolean";
  if (!valid) throw bad("it is damaged");
  const options = { profile, shutDown, maxCommands, shape, items, finiteMaxRetries, time };
  return { ...options, seed, path, replayPath, removals, minimal };
}

/**
 * The first option that `replay` was made with and `options` has otherwise, among those `options` gives (an entry
 * point may know only some of them before it starts anything); `undefined` when they agree.
 */
export function differingOption(
  replay: ReplayOptions,
  options: Partial<ReplayOptions>,
): keyof ReplayOptions | undefined {
  return (Object.keys(optionNames) as (keyof ReplayOptions)[]).find(
    (key) => key in options && replay[key] !== options[key],
  );
}

/**
 * Checks that `replay` was made under `options`.
 *
 * @throws OptionError naming the first option that differs, with both values.
 */
export function assertSameOptions(replay: ReplayOptions, options: ReplayOptions): void {
  const key = differingOption(replay, options);
  if (key === undefined) return;
  const show = (value: unknown) => JSON.stringify(value);
  throw new OptionError(
    `The replay token was made with \`${optionNames[key]}\` ${show(replay[key])}, but this check has ${show(options[key])}: replay it with the options that made it`,
  );
}
