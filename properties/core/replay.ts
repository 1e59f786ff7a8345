/**
 * Replay tokens: everything that decides a failing run, in one paste-safe word. A token carries its format version,
 * the options that shape the runs (profile, shutDown, the longest sequence, the shape, the item universe, finite
 * `maxRetries`) and where the counterexample is (the seed, fast-check's path and replay hint, and how many calls
 * the last shrinking step removed). A replay under other options is refused, naming the option that differs: a
 * token never silently runs another check. The lifecycle check's tokens (`lifecycle-1:…`) are read and made here too,
 * so that a replay token is checked in one place.
 */
import { OptionError } from "./errors.js";
import { showValue } from "./render.js";

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
function decodeReplay(token: string): Replay {
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
 * How a command line names the options a token carries, each with its value (`--max-commands 12`, `no --shutdown`),
 * so that a refusal names what its user types.
 */
export type ReplayOptionNames = { readonly [K in keyof ReplayOptions]?: (value: ReplayOptions[K]) => string };

/**
 * Reads `token` and checks that it was made under `options` — those the caller knows (an entry point may know only
 * some before it starts anything): the one check of a replay token, for the checks and the command lines alike.
 * Without `names` a refusal names the library's options (`` `maxCommands` 10 ``); with them, a command line's,
 * as `names` spells them (as the token's field otherwise).
 *
 * @throws OptionError naming the token when it is not one, or of another format version; or naming the first
 * option that differs, with the token's value and the caller's.
 */
export function readReplay(token: string, options: Partial<ReplayOptions>, names?: ReplayOptionNames): Replay {
  const replay = decodeReplay(token);
  const key = (Object.keys(optionNames) as (keyof ReplayOptions)[]).find(
    (k) => k in options && replay[k] !== options[k],
  );
  if (key === undefined) return replay;
  if (names === undefined) {
    const show = (value: unknown) => JSON.stringify(value);
    throw new OptionError(
      `The replay token was made with \`${optionNames[key]}\` ${show(replay[key])}, but this check has ${show(options[key])}: replay it with the options that made it`,
    );
  }
  const name = names[key] as ((value: unknown) => string) | undefined;
  const show = name ?? ((value: unknown) => `${key} ${JSON.stringify(value)}`);
  throw new OptionError(
    `the token was made with ${show(replay[key])}, but this run has ${show(options[key])}: give the options that made it`,
  );
}

/** What every lifecycle replay token starts with, before its first `:`. */
const lifecyclePrefix = "lifecycle-1";

/** Where a lifecycle counterexample is: the seed and fast-check's path of the run, and whether it ran with time. */
export interface LifecycleReplay {
  readonly seed: number;
  readonly time: boolean;
  readonly path: string;
}

/** Makes the token of a lifecycle run: `lifecycle-1:<seed>:<time|untimed>:<path>`. */
export function encodeLifecycleReplay({ seed, time, path }: LifecycleReplay): string {
  return `${lifecyclePrefix}:${seed}:${time ? "time" : "untimed"}:${path}`;
}

/** Whether `token` is one of the lifecycle check's, by its prefix (a token of another kind is not read). */
export function isLifecycleReplay(token: string): boolean {
  return token.startsWith(`${lifecyclePrefix}:`);
}

/**
 * Reads a lifecycle token and checks that it was made under `time`, as the check that reads it runs.
 *
 * @throws OptionError naming the token when it is not a lifecycle token; or saying that it was made with the other
 * `time`.
 */
export function readLifecycleReplay(token: string, time: boolean): LifecycleReplay {
  const [head, seed, mode, ...path] = token.split(":");
  const valid = head === lifecyclePrefix && /^-?\d+$/.test(seed ?? "") && (mode === "time" || mode === "untimed");
  if (!valid || path.length === 0)
    throw new OptionError(`Expected \`replay\` to be a lifecycle token, got ${showValue(token)}`);
  if ((mode === "time") !== time)
    throw new OptionError(`The replay token was made with \`time: ${!time}\`; this check runs with \`time: ${time}\``);
  return { seed: Number(seed), time, path: path.join(":") };
}
