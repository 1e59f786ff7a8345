/**
 * Every reachable transition of a small abstract state space, found by breadth-first search over the model: two
 * items, `maxRetries` 0, 1 and 2. The abstract state is the model's (docs/spec.md §2): each item's state (absent,
 * queued, in flight, in flight and dirty), the order of the queued items, each item's failure count capped at
 * `maxRetries + 1`, and whether the queue is shutting down. A count past `maxRetries` answers as `maxRetries + 1`
 * does, so the cap loses nothing a call can tell. The commands are every verb of protocol v1 on every item, `get`
 * and `shutdown`; every one can be made in every state (§11), so the reachable transitions are the reachable
 * states times the commands.
 */
import { WorkQueueModel } from "../../model/index.js";
import type { CallRequest } from "../protocol/codec.js";
import { record } from "./replay.js";

/** The items of the state space. */
export const transitionItems = ["a", "b"] as const;

/** The `maxRetries` of the state space. */
export const transitionMaxRetries = [0, 1, 2] as const;

/** The commands, in the order the search tries them. */
export const commands: readonly CallRequest[] = [
  ...transitionItems.map((item) => ({ op: "add", item }) as const),
  { op: "get" },
  ...(["done", "retry", "forget"] as const).flatMap((op) => transitionItems.map((item) => ({ op, item }))),
  { op: "shutdown" },
];

/** The model's state after `requests` on a fresh queue. */
export async function modelAfter(
  maxRetries: number,
  requests: readonly CallRequest[],
): Promise<WorkQueueModel<string>> {
  let model: WorkQueueModel<string> | undefined;
  await record(
    (options) => {
      model = new WorkQueueModel<string>(options);
      return model;
    },
    maxRetries,
    requests,
  );
  return model as WorkQueueModel<string>;
}

/** The abstract state of `model`, in words: `a in flight (1 failure), b queued; shutting down`. */
export function stateOf(model: WorkQueueModel<string>): string {
  const { queue } = model.snapshot();
  const items = transitionItems.map((item) => {
    const count = Math.min(model.failures(item), model.maxRetries + 1);
    const failures = count === 0 ? "" : ` (${count} failure${count === 1 ? "" : "s"})`;
    return `${item} ${model.stateOf(item)}${failures}`;
  });
  const order = queue.length > 1 ? `; queued ${queue.join(" before ")}` : "";
  return `${items.join(", ")}${order}${model.shuttingDown ? "; shutting down" : ""}`;
}

/** The rules of docs/spec.md that `command` follows from the state of `model`: a label, not an answer. */
export function rulesOf(model: WorkQueueModel<string>, command: CallRequest): string[] {
  const { op, item = "" } = command;
  const state = model.stateOf(item);
  const down = model.shuttingDown;
  if (op === "get") return [model.size === 0 ? "§5.1" : "§5.2"];
  if (op === "shutdown") return down ? ["§12.1", "§11.4"] : ["§12.1"];
  if (op === "forget") return model.failures(item) === 0 ? ["§8.1", "§11.2"] : ["§8.1"];
  const add = { absent: "§4.1", queued: "§4.2", "in flight": "§4.3", "in flight + dirty": "§4.3" }[state];
  if (op === "add") return down ? ["§12.3"] : [add];
  if (op === "done") {
    if (state === "in flight + dirty") return down ? ["§6.2", "§12.5"] : ["§6.2"];
    return state === "in flight" ? ["§6.1"] : ["§6.3", "§11.1"];
  }
  if (down) return ["§7.1", "§12.4"];
  return model.failures(item) + 1 >= model.maxRetries ? ["§7.1", "§7.2"] : ["§7.1", "§7.3", add];
}

/** A reachable abstract state and the shortest requests that reach it (the first found, commands in order). */
export interface Reached {
  readonly maxRetries: number;
  readonly state: string;
  readonly path: readonly CallRequest[];
}

/** Every abstract state reachable with `maxRetries`, in breadth-first order, each with its shortest path. */
export async function reachable(maxRetries: number): Promise<Reached[]> {
  const initial = stateOf(new WorkQueueModel<string>({ maxRetries }));
  const found: Reached[] = [{ maxRetries, state: initial, path: [] }];
  const seen = new Set([initial]);
  for (let i = 0; i < found.length; i++) {
    const { path } = found[i] as Reached;
    for (const command of commands) {
      const next = [...path, command];
      const state = stateOf(await modelAfter(maxRetries, next));
      if (seen.has(state)) continue;
      seen.add(state);
      found.push({ maxRetries, state, path: next });
    }
  }
  return found;
}
