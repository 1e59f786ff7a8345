/**
 * Verdicts that do not depend on the machine (issue 27): the same seed against the same implementation gives the
 * same counterexample (steps and replay token) and the same exit code on an idle machine and under a CPU hog, in
 * process and over the protocol, pipelined and in lock step. The hog is one busy `node` per core, started here and
 * killed after each test.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { availableParallelism } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, test } from "vitest";
import { main } from "../../cli/gate.js";
import { checkConformance } from "../../sequential/check-conformance.js";
import { lostDirtyMark } from "../wrong/in-flight.mjs";

const root = new URL("../../../", import.meta.url).pathname;
const serve = (name: string) => [
  "node",
  join(root, "dist/properties/protocol/serve-module.js"),
  join(root, "properties/test/wrong/all.mjs"),
  name,
];

const hogs: ChildProcess[] = [];

/** Starts one busy `node` per core: a second CPU-bound job, as on a shared CI machine. */
async function startHogs(): Promise<void> {
  for (let i = 0; i < availableParallelism(); i++) {
    const hog = spawn(process.execPath, ["-e", "for(;;){}"], { stdio: "ignore" });
    hogs.push(hog);
    await new Promise((resolve) => hog.once("spawn", resolve));
  }
}

/** Kills the hogs this file started, each by its own handle. */
function stopHogs(): void {
  for (const hog of hogs.splice(0)) hog.kill("SIGKILL");
}

afterEach(stopHogs);

/** Runs the gate with `argv` and `--json`: the exit code, and the counterexample's steps and token. */
async function gate(...argv: string[]) {
  const out: string[] = [];
  const code = await main(["--json", ...argv], { out: (t) => out.push(t), err: () => {}, progress: false });
  const json = JSON.parse(out.join(""));
  return { code, steps: json.counterexample?.steps, replay: json.counterexample?.replay as string | undefined };
}

describe("the same seed gives the same counterexample and exit code, idle and under a CPU hog", () => {
  test("in process", async () => {
    const check = async () => {
      const report = await checkConformance(lostDirtyMark, { profile: "contract", seed: 27, runs: 300 });
      return { verdict: report.verdict, steps: report.counterexample?.steps, replay: report.counterexample?.replay };
    };
    const idle = await check();
    await startHogs();
    const hogged = await check();
    expect(idle.verdict).toBe("does not conform");
    expect(hogged).toEqual(idle);
  }, 120_000); // two checks, one under a hog

  test.each([
    ["pipelined", []],
    ["in lock step", ["--lockstep"]],
  ])(
    "over the protocol, %s",
    async (_, mode) => {
      const argv = [...mode, "--profile", "contract", "--runs", "300", "--seed", "27", "--", ...serve("lostDirtyMark")];
      const idle = await gate(...argv);
      await startHogs();
      const hogged = await gate(...argv);
      expect(idle.code).toBe(1);
      expect(idle.replay).toBeDefined();
      expect(hogged).toEqual(idle);
    },
    120_000,
  ); // two gates, one under a hog
});

test("under a CPU hog, the default mode prints the 2-step counterexample add, done of a 2-step defect, 10 runs of 10", async () => {
  // client-go's done of a queued item queues it a second time (#79934): `add`, `done` is the shortest failure.
  await startHogs();
  const found: string[] = [];
  for (let seed = 1; seed <= 10; seed++) {
    const { code, steps } = await gate("--seed", String(seed), "--", ...serve("doneDuplicatesQueued"));
    const calls = (steps as { call: string }[] | undefined)?.map((step) => step.call).join(", ");
    found.push(`seed ${seed}: exit ${code}, ${calls ?? "no counterexample"}`);
  }
  for (const line of found) expect(line).toMatch(/^seed \d+: exit 1, add\((.+)\), done\(\1\)$/);
}, 300_000); // ten gates under a hog: 45 s on the 2-core machine also loaded by another job
