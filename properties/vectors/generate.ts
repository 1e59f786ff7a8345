/**
 * Generates the conformance vectors (docs/protocol.md, "Conformance vectors") from the model: the requests are
 * scripted here, and every reply is the one `WorkQueueModel` gives, never written by hand. Deterministic, so that a
 * test can check the committed files against a fresh generation.
 */
import { WorkQueueModel } from "../../model/index.js";
import type { CallRequest } from "../protocol/codec.js";
import { edgeScripts } from "./edges.js";
import { chainOf, featuresOf, formatVersion, type Vector, type VectorFile } from "./format.js";
import { record } from "./replay.js";
import { traceRequests } from "./traces.js";
import { commands, modelAfter, reachable, rulesOf, stateOf, transitionMaxRetries } from "./transitions.js";

/** The model, as the queue whose replies are recorded. */
const model = (options: { maxRetries: number }) => new WorkQueueModel<string>(options);

/** A vector of `requests`, with the model's replies and the features they need. */
async function vectorOf(description: string, rules: readonly string[], maxRetries: number, requests: CallRequest[]) {
  const steps = await record(model, maxRetries, requests);
  return { description, rules, features: featuresOf(steps), maxRetries, steps } satisfies Vector;
}

/** The golden traces, by file name and text, as vectors; the ones protocol v1 cannot carry are named in the description. */
async function tracesFile(traces: readonly { name: string; text: string }[]): Promise<VectorFile> {
  const vectors: Vector[] = [];
  const omitted: string[] = [];
  for (const { name, text } of traces) {
    const converted = traceRequests(name, text);
    if (typeof converted === "string") {
      omitted.push(converted);
      continue;
    }
    const left = converted.left.length === 0 ? "" : ` (left out: ${converted.left.join(", ")})`;
    const description = `${name}: ${converted.comment}${left}`;
    vectors.push(await vectorOf(description, converted.rules, converted.maxRetries, [...converted.requests]));
  }
  return {
    formatVersion,
    description:
      "The golden traces of properties/traces/ as protocol v1 steps, with the model's replies. The views inFlight and " +
      "failures, which protocol v1 lacks, are left out; so is every trace that passes a value that is not a string, " +
      `since protocol v1 items are strings and the gate sends no call the model refuses: ${omitted.join("; ")}.`,
    vectors,
  };
}

/**
 * Every reachable transition of the state space of properties/vectors/transitions.ts, one vector each: the command
 * and the views after it, `after` the vector whose command first reached the state (none from the fresh queue's).
 */
export async function transitionsFile(): Promise<VectorFile> {
  const vectors: Vector[] = [];
  let states = 0;
  for (const maxRetries of transitionMaxRetries) {
    const found = await reachable(maxRetries);
    states += found.length;
    /** Each state's vector: the one whose command first reached it, which the state's own vectors continue. */
    const reachedBy = new Map<string, number>();
    for (const { state, path } of found) {
      const before = await modelAfter(maxRetries, path);
      const after = reachedBy.get(state);
      const down = before.shuttingDown;
      for (const command of commands) {
        const shuts = down || command.op === "shutdown";
        const views: CallRequest[] = shuts ? [{ op: "len" }, { op: "shuttingDown" }] : [{ op: "len" }];
        const call = command.item === undefined ? command.op : `${command.op} ${JSON.stringify(command.item)}`;
        const steps = (await record(model, maxRetries, [...path, command, ...views])).slice(path.length);
        const chain = after === undefined ? steps : [...chainOf(vectors, after), ...steps];
        vectors.push({
          description: `maxRetries ${maxRetries}, ${state}: ${call}`,
          rules: rulesOf(before, command),
          features: featuresOf(chain),
          maxRetries,
          ...(after === undefined ? {} : { after }),
          steps,
        });
        const next = stateOf(await modelAfter(maxRetries, [...path, command]));
        if (!reachedBy.has(next)) reachedBy.set(next, vectors.length - 1);
      }
    }
  }
  return {
    formatVersion,
    description:
      "Every reachable transition of an abstract state space, found by breadth-first search over the model: items " +
      '"a" and "b", maxRetries 0, 1 and 2; a state is each item\'s state (absent, queued, in flight, in flight and ' +
      "dirty), the order of the queued items, each item's failure count capped at maxRetries + 1, and whether the " +
      "queue is shutting down. A transition is a state and one of the commands add, done, retry and forget of each " +
      "item, get and shutdown. Each vector is the command and the views after it (len, and shuttingDown once the " +
      "queue shut down), made on the queue that the vector `after` it leaves: the one whose command first reached " +
      "the state, so that the chain is the shortest path to it. Every reachable state is the state after some " +
      "command, so the views are checked in every one.",
    coverage: { states, transitions: states * commands.length, covered: vectors.length },
    vectors,
  };
}

/** The vectors of properties/vectors/edges.ts. */
async function edgesFile(): Promise<VectorFile> {
  const vectors: Vector[] = [];
  for (const { description, rules, maxRetries, requests } of edgeScripts()) {
    vectors.push(await vectorOf(description, rules, maxRetries, [...requests]));
  }
  return {
    formatVersion,
    description:
      "What a small state space cannot hold: the awkward keys of the gate's string items, a deep queue, a queue that " +
      "wraps and grows, many items with failure counts, a long history of dirty marks and a long failure streak.",
    vectors,
  };
}

/**
 * Every vector file, by file name, with the model's replies.
 *
 * @param traces - The golden traces (properties/traces/*.trace), by file name and text, in the order to convert them.
 */
export async function generateVectors(
  traces: readonly { name: string; text: string }[],
): Promise<Record<string, VectorFile>> {
  return {
    "traces.json": await tracesFile(traces),
    "transitions.json": await transitionsFile(),
    "edge-cases.json": await edgesFile(),
  };
}
