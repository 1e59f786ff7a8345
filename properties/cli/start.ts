/**
 * `npm start`: checks the reference queue against the model in both profiles and prints a short conformance
 * report. A thin shell over {@link checkConformance}: the shared argument parser, output, and the shared exit codes.
 */
import { WorkQueue } from "../../src/index.js";
import type { Profile } from "../core/commands.js";
import { Coverage, reachable } from "../core/coverage.js";
import { plural } from "../core/render.js";
import type { ReplayOptionNames } from "../core/replay.js";
import { anyItems } from "../core/universes.js";
import { formatReport } from "../report/text.js";
import { checkConformance } from "../sequential/check-conformance.js";
import { type ConformanceOptions, replayOptionsOf } from "../sequential/options.js";
import {
  type CheckArguments,
  checkArguments,
  checkOptions,
  checkReplay,
  oneLine,
  parse,
  sharedReplayNames,
  UsageError,
} from "./args.js";
import { exitCodeHelp, exitCodes, failureOf } from "./exit-codes.js";

const usage = `usage: npm start -- [--runs N] [--seed N] [--profile contract|robust] [--replay TOKEN] [--max-commands N]
       [--shrink-calls N] [--shrink-time-ms N]

Checks the reference WorkQueue against the executable model of docs/spec.md, in both profiles unless --profile
names one; every sequence may call shutDown. --replay takes the token a failed report prints, and checks the
profile that made it.

${exitCodeHelp}`;

/** How `npm start` names the options a replay token carries. */
const startNames: ReplayOptionNames = {
  ...sharedReplayNames,
  shutDown: (on) => (on ? "shutDown (which npm start always checks)" : "no shutDown"),
};

/** The options of the check of `profile`. */
function checkOf(options: CheckArguments, profile: Profile): ConformanceOptions {
  return {
    profile,
    runs: options.runs,
    seed: options.seed,
    replay: options.replay,
    maxCommands: options.maxCommands,
    shrinkCalls: options.shrinkCalls,
    shrinkTimeMs: options.shrinkTimeMs,
    items: anyItems,
    compareMessages: true,
    shutDown: true,
  };
}

/** The profiles to check: the one `--profile` names, the one a `--replay` token was made with, or both. */
function profilesOf(options: CheckArguments): Profile[] {
  if (options.profile !== undefined) return [options.profile];
  if (options.replayed !== undefined) return [options.replayed.profile as Profile];
  return ["contract", "robust"];
}

/** Runs the check with `argv` and returns the exit code. */
async function main(argv: readonly string[]): Promise<number> {
  let options: CheckArguments;
  let profiles: Profile[];
  try {
    const { values } = parse(argv, checkOptions);
    if (values.help) {
      console.log(usage);
      return exitCodes.conforms;
    }
    options = checkArguments(values, 500);
    profiles = profilesOf(options);
    const token = options.replay;
    if (token !== undefined) {
      for (const profile of profiles) checkReplay(token, replayOptionsOf(checkOf(options, profile)), startNames);
    }
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    console.error(`npm start: ${error.message} (see --help)`);
    return exitCodes["usage error"];
  }
  console.log("workqueue-spec: the reference WorkQueue against the executable model of docs/spec.md\n");
  let conforms = true;
  for (const profile of profiles) {
    const coverage = new Coverage();
    const report = await checkConformance((o) => new WorkQueue(o), { ...checkOf(options, profile), coverage });
    const again = options.maxCommands === undefined ? "" : ` --max-commands ${options.maxCommands}`;
    console.log(formatReport(report, (token) => `npm start -- --profile ${profile}${again} --replay=${token}`));
    const total = reachable(profile, { shutDown: true }).length;
    const missed = coverage.missed(profile, { shutDown: true });
    const never = missed.length === 0 ? "" : ` (never: ${missed.join("; ")})`;
    if (options.replay === undefined)
      console.log(`  ${total - missed.length} of ${total} reachable transitions exercised${never}`);
    conforms &&= report.verdict === "conforms" && (options.replay !== undefined || missed.length === 0);
  }
  const verdict = conforms ? "conforms" : "does not conform";
  console.log(`\nverdict: ${verdict} (${plural(profiles.length, "profile")})`);
  return exitCodes[verdict];
}

/**
 * {@link main}, with whatever stops it before a verdict said in one line and given its exit code (2 for a token
 * made under other options, 3 for a queue that could not be driven, 4 for a bug), never a raw stack and exit 1.
 */
async function run(argv: readonly string[]): Promise<number> {
  try {
    return await main(argv);
  } catch (error) {
    const failure = failureOf(error);
    console.error(`npm start: ${failure.kind}: ${oneLine(failure.message)}`);
    return failure.code;
  }
}

process.exitCode = await run(process.argv.slice(2));
