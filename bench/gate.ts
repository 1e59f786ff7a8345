/**
 * Gate benchmarks: how many commands the conformance gate checks per second, in process against the reference
 * queue and over protocol v1 against the Python example, pipelined and one request at a time; and how quickly it
 * rejects each deliberately wrong queue.
 */
import { fileURLToPath } from "node:url";
import * as fc from "fast-check";
import type { Profile } from "../properties/core/commands.js";
import { loadFactory } from "../properties/core/load.js";
import { anyItems, stringItems } from "../properties/core/universes.js";
import { connect } from "../properties/protocol/driver.js";
import { checkConformance } from "../properties/sequential/check-conformance.js";
import { checkDriver } from "../properties/sequential/conformance.js";
import { planOf } from "../properties/sequential/plan.js";
import { runsOf } from "../properties/sequential/runs.js";
import { WorkQueue } from "../src/index.js";

/** Commands checked per second, and how many were checked. */
export interface Throughput {
  readonly commandsPerSecond: number;
  readonly commands: number;
}

const python = ["examples/python/workqueue.py"];

/** The gate in process against the reference queue. */
export async function inProcessGate(runs: number): Promise<Throughput> {
  const start = performance.now();
  const report = await checkConformance((options) => new WorkQueue<string>(options), { runs, seed: 1 });
  return { commandsPerSecond: report.commands / ((performance.now() - start) / 1000), commands: report.commands };
}

/**
 * The gate's floor: the runs of {@link inProcessGate} (the same `runs`, seed 1, the same items), each planned on the
 * model and nothing else — what any check against this model pays at least once per call. The gate's rate divided
 * by this one is the share of its time spent on the model and fast-check's commands.
 */
export function planningFloor(runs: number): Throughput {
  const inputs = fc.sample(runsOf({ items: anyItems }, undefined), { numRuns: runs, seed: 1 });
  const start = performance.now();
  let commands = 0;
  for (const input of inputs) commands += planOf(input).plan.length;
  return { commandsPerSecond: commands / ((performance.now() - start) / 1000), commands };
}

/** The gate over the protocol against the Python example; the handshake is not timed. */
export async function protocolGate(runs: number, pipeline: boolean): Promise<Throughput> {
  const driver = await connect("python3", python, { pipeline });
  try {
    const start = performance.now();
    const options = { runs, seed: 1, items: { ...stringItems, invalid: [] }, finiteMaxRetries: true };
    // The sequential runs only: the concurrent rounds (the example announces `concurrent`) start a thread per call
    // and are not what this measures.
    const { concurrent: _, ...sequential } = driver;
    const report = await checkDriver(sequential, options);
    if (report.verdict !== "conforms") throw new Error("the Python example does not conform");
    return { commandsPerSecond: report.commands / ((performance.now() - start) / 1000), commands: report.commands };
  } finally {
    await driver.close();
  }
}

/** How long the gate takes to reject a wrong queue, and how long its counterexample is. */
export interface Rejection {
  readonly name: string;
  readonly profile: Profile;
  readonly milliseconds: number;
  readonly steps: number;
  readonly invariant: string;
}

/** The wrong queues of properties/test/wrong/all.mjs, each with the profile that catches it. */
const wrongQueues: [string, Profile][] = [
  ["retryPushesToFifo", "contract"],
  ["lostDirtyMark", "contract"],
  ["offByOneGiveUp", "contract"],
  ["forgetDoesNothing", "robust"],
  ["lifo", "contract"],
  ["ringBufferBreaksOnGrow", "contract"],
  ["emptyStringIsNothing", "contract"],
  ["sharedFailureCount", "robust"],
  ["doneDuplicatesQueued", "robust"],
  ["addWhileInFlightQueues", "contract"],
  ["failuresResetOnDone", "robust"],
  ["plainObjectStates", "contract"],
  ["doneAlwaysRequeues", "contract"],
  ["dirtyMarkNeverCleared", "contract"],
];

/** The gate in process against each wrong queue: time to a shrunk counterexample, and its length. */
export async function rejections(): Promise<Rejection[]> {
  const file = fileURLToPath(new URL("../../properties/test/wrong/all.mjs", import.meta.url));
  const results: Rejection[] = [];
  for (const [name, profile] of wrongQueues) {
    const factory = await loadFactory(file, name);
    const start = performance.now();
    const report = await checkConformance(factory, { profile, runs: 400, seed: 1 });
    const milliseconds = performance.now() - start;
    const counterexample = report.counterexample;
    if (counterexample === undefined) throw new Error(`the gate accepted the wrong queue ${name}`);
    results.push({
      name,
      profile,
      milliseconds,
      steps: counterexample.steps.length,
      invariant: counterexample.invariant.name,
    });
  }
  return results;
}
