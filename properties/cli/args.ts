/**
 * The one argument parser of the command-line entry points: `node:util`'s `parseArgs` for the syntax, and the
 * options every check shares (`--profile`, `--runs`, `--seed`, `--replay`, `--max-commands`, `--shrink-calls`,
 * `--shrink-time-ms`)
 * read and checked in one place. A bad value is a {@link UsageError} naming the option and the value; so is a
 * `--replay` token made under other options, checked before anything is started.
 */
import { type ParseArgsConfig, parseArgs } from "node:util";
import type { Profile } from "../core/commands.js";
import { OptionError } from "../core/errors.js";
import { type Replay, type ReplayOptionNames, type ReplayOptions, readReplay } from "../core/replay.js";

/** A bad command line: the entry point prints its message and "see --help", and exits with the usage-error code. */
export class UsageError extends Error {
  override readonly name = "UsageError";
}

/** The options of a check, as `parseArgs` declares them. */
export const checkOptions = {
  profile: { type: "string" },
  runs: { type: "string" },
  seed: { type: "string" },
  replay: { type: "string" },
  "max-commands": { type: "string" },
  "shrink-calls": { type: "string" },
  "shrink-time-ms": { type: "string" },
  help: { type: "boolean", short: "h" },
} as const;

/** What the shared options say, with the entry point's defaults filled. */
export interface CheckArguments {
  /** `--profile`, if given. */
  readonly profile: Profile | undefined;
  /** `--runs`, or the entry point's default. */
  readonly runs: number;
  /** `--seed`, if given. */
  readonly seed: number | undefined;
  /** `--replay`, if given. */
  readonly replay: string | undefined;
  /** The `--replay` token, read: a bad one is a usage error before anything is started. */
  readonly replayed: Replay | undefined;
  /** `--max-commands`, if given. */
  readonly maxCommands: number | undefined;
  /** `--shrink-calls`, the shrinking budget in calls, if given. */
  readonly shrinkCalls: number | undefined;
  /** `--shrink-time-ms`, the shrinking safety net of time, if given. */
  readonly shrinkTimeMs: number | undefined;
}

/**
 * Parses `args` with `options` (which include {@link checkOptions}); a syntax error becomes a {@link UsageError} of
 * one line. A negative number after an option that takes a value is its value (`--seed -11111`), which `parseArgs`
 * would refuse as ambiguous.
 */
export function parse<O extends NonNullable<ParseArgsConfig["options"]>>(
  args: readonly string[],
  options: O,
  allowPositionals = false,
): ReturnType<typeof parseArgs<{ args: string[]; options: O; allowPositionals: boolean; strict: true }>> {
  const joined: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    const next = args[i + 1];
    const takesValue = arg.startsWith("--") && options[arg.slice(2)]?.type === "string";
    if (takesValue && next !== undefined && /^-\d/.test(next)) {
      joined.push(`${arg}=${next}`);
      i++;
    } else joined.push(arg);
  }
  try {
    return parseArgs({ args: joined, options, allowPositionals, strict: true });
  } catch (error) {
    throw new UsageError(syntaxMessage(error as Error & { code?: unknown }, Object.keys(options)));
  }
}

/**
 * What `parseArgs`' `error` means, in the entry points' own one-line form: an unknown option with the list of the
 * options there are, an option without its value (or whose value looks like an option), a flag given a value. Any
 * other message is kept, on one line.
 */
function syntaxMessage(error: Error & { code?: unknown }, names: readonly string[]): string {
  const quoted = /'([^']*)'/.exec(error.message)?.[1];
  if (error.code === "ERR_PARSE_ARGS_UNKNOWN_OPTION" && quoted !== undefined) {
    return `unknown option \`${quoted}\`; the options are ${names.map((name) => `--${name}`).join(", ")}`;
  }
  const option = quoted?.split(" ")[0];
  if (/argument missing$/.test(error.message)) return `\`${option}\` needs a value`;
  if (/does not take an argument$/.test(error.message)) return `\`${option}\` takes no value`;
  if (/argument is ambiguous/.test(error.message)) {
    return `\`${option}\` needs a value; one that starts with a dash is written \`${option}=-…\``;
  }
  return oneLine(error.message);
}

/** `message` on one line: `parseArgs` and module loaders write some on several. */
export function oneLine(message: string): string {
  return message.replace(/\s*\n\s*/g, " ");
}

/** A positive integer option, or `undefined` when it is not given. */
export function positive(name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new UsageError(`--${name} must be a positive integer, got \`${value}\``);
  return n;
}

/**
 * The `--replay` token, read with the one check of a token (core/replay.ts) against the options the entry point
 * knows (`options`, named as `names` spells them): a token that is not one, or that was made under other options,
 * is a usage error naming `--replay`.
 *
 * @throws UsageError naming the first option that differs as `names` spells it, with the token's value and this
 * run's; or saying why the token is not one.
 */
export function checkReplay(
  token: string,
  options: Partial<ReplayOptions> = {},
  names: ReplayOptionNames = sharedReplayNames,
): Replay {
  try {
    return readReplay(token, options, names);
  } catch (error) {
    if (error instanceof OptionError) throw new UsageError(`--replay: ${error.message}`);
    throw error;
  }
}

/** Reads and checks the options every check shares; `runs` is the entry point's default for `--runs`. */
export function checkArguments(
  values: { readonly [K in keyof typeof checkOptions]?: string | boolean | undefined },
  runs: number,
): CheckArguments {
  const profile = values.profile as string | undefined;
  if (profile !== undefined && profile !== "contract" && profile !== "robust") {
    throw new UsageError(`--profile must be contract or robust, got \`${profile}\``);
  }
  const replay = values.replay as string | undefined;
  const seedText = values.seed as string | undefined;
  const seed = seedText === undefined ? undefined : Number(seedText);
  if (seed !== undefined && !Number.isInteger(seed))
    throw new UsageError(`--seed must be an integer, got \`${seedText}\``);
  return {
    profile,
    runs: positive("runs", values.runs as string | undefined) ?? runs,
    seed,
    replay,
    replayed: replay === undefined ? undefined : checkReplay(replay),
    maxCommands: positive("max-commands", values["max-commands"] as string | undefined),
    shrinkCalls: positive("shrink-calls", values["shrink-calls"] as string | undefined),
    shrinkTimeMs: positive("shrink-time-ms", values["shrink-time-ms"] as string | undefined),
  };
}

/** The names of the options a token carries that every entry point spells the same. */
export const sharedReplayNames = {
  profile: (value) => `--profile ${value}`,
  maxCommands: (value) => (value === null ? "no --max-commands" : `--max-commands ${value}`),
} as const satisfies ReplayOptionNames;
