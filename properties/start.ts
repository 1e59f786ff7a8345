/**
 * `npm start`: checks the reference queue against the model in both profiles and prints a short conformance
 * report. A thin shell over {@link checkConformance}: options, output and the exit code only.
 *
 * Exit codes: 0 conforms, 1 does not conform, 2 usage error.
 */
import { parseArgs } from "node:util";
import { WorkQueue } from "../src/index.js";
import { referenceItems } from "./arbitraries.js";
import type { Profile } from "./commands.js";
import { checkConformance } from "./conformance.js";
import { Coverage, reachable } from "./coverage.js";
import { plural } from "./operation.js";
import { formatReport } from "./report.js";

const usage = "usage: npm start -- [--runs N] [--seed N] [--replay TOKEN --profile contract|robust]";

/** Parses the options; `undefined` on a usage error, after saying why. */
function options(): { runs: number; seed?: number; replay?: string; profiles: Profile[] } | undefined {
  try {
    const { values } = parseArgs({
      options: {
        runs: { type: "string" },
        seed: { type: "string" },
        replay: { type: "string" },
        profile: { type: "string" },
      },
    });
    const runs = Number(values.runs ?? 500);
    const seed = values.seed === undefined ? undefined : Number(values.seed);
    const profiles: Profile[] = values.profile === undefined ? ["contract", "robust"] : [values.profile as Profile];
    if (!Number.isInteger(runs) || runs < 1) throw new Error(`--runs must be a positive integer, got ${values.runs}`);
    if (seed !== undefined && !Number.isInteger(seed)) throw new Error(`--seed must be an integer, got ${values.seed}`);
    if (!profiles.every((p) => p === "contract" || p === "robust"))
      throw new Error(`unknown --profile ${values.profile}`);
    return {
      runs,
      profiles,
      ...(seed === undefined ? {} : { seed }),
      ...(values.replay === undefined ? {} : { replay: values.replay }),
    };
  } catch (error) {
    console.error(`${(error as Error).message}\n${usage}`);
    return undefined;
  }
}

async function main(): Promise<number> {
  const parsed = options();
  if (parsed === undefined) return 2;
  console.log("workqueue-spec: the reference WorkQueue against the executable model of docs/spec.md\n");
  let conforms = true;
  for (const profile of parsed.profiles) {
    const coverage = new Coverage();
    const report = await checkConformance((o) => new WorkQueue(o), {
      profile,
      runs: parsed.runs,
      seed: parsed.seed,
      replay: parsed.replay,
      items: referenceItems,
      compareMessages: true,
      coverage,
      shutDown: true,
    });
    console.log(formatReport(report, (token) => `npm start -- --profile ${profile} --replay ${token}`));
    const total = reachable(profile, { shutDown: true }).length;
    const missed = coverage.missed(profile, { shutDown: true });
    const never = missed.length === 0 ? "" : ` (never: ${missed.join("; ")})`;
    console.log(`  ${total - missed.length} of ${total} reachable transitions exercised${never}`);
    conforms &&= report.verdict === "conforms" && missed.length === 0;
  }
  console.log(
    `\nverdict: ${conforms ? "conforms" : "does not conform"} (${plural(parsed.profiles.length, "profile")})`,
  );
  return conforms ? 0 : 1;
}

process.exitCode = await main();
