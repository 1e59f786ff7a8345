/**
 * Vectors a small state space cannot hold: the awkward keys of the gate's string items (`stringItems`: the empty
 * string, case and Unicode normalisation variants, `"__proto__"`, keys that look like numbers, long keys that
 * differ at the end), two keys with one Java hash, a deep queue, a queue that wraps and grows, many items with
 * failure counts, a long history of dirty marks, a dirty mark 255 calls after its get, and a long failure streak. They catch the queues that are right on two items and wrong on these.
 */
import { stringItems } from "../core/universes.js";
import type { CallRequest } from "../protocol/codec.js";

/** A vector's calls before the model answers them: what it shows, the rules, `maxRetries` and the requests. */
export interface Script {
  readonly description: string;
  readonly rules: readonly string[];
  readonly maxRetries: number;
  readonly requests: readonly CallRequest[];
}

const len: CallRequest = { op: "len" };
const get: CallRequest = { op: "get" };
const call = (op: "add" | "done" | "retry" | "forget", item: string): CallRequest => ({ op, item });
const times = <V>(n: number, f: (i: number) => V[]): V[] => Array.from({ length: n }, (_, i) => f(i)).flat();
const keys = (n: number, from = 0) => Array.from({ length: n }, (_, i) => stringItems.many(from + i) as string);

/** One item through a whole processing cycle: queued once, marked dirty in flight, requeued by `done`, given up. */
function cycleOf(item: string): Script {
  return {
    description: `the item ${JSON.stringify(item)} is queued once, marked dirty in flight and requeued by done`,
    rules: ["§1.1", "§4.1", "§4.2", "§4.3", "§6.2", "§7.2"],
    maxRetries: 1,
    requests: [
      ...[call("add", item), call("add", item), len, get, call("add", item), len, call("done", item), len],
      ...[get, call("done", item), get, call("retry", item), len],
    ],
  };
}

/** Every vector of edge-cases.json, in order. */
export function edgeScripts(): Script[] {
  const few = stringItems.few as string[];
  const deep = keys(300);
  const failing = keys(40);
  return [
    ...few.map(cycleOf),
    {
      description: `the ${few.length} awkward keys are ${few.length} items, handed out in the order they were added`,
      rules: ["§1.1", "§4.2", "§10.5"],
      maxRetries: 1,
      requests: [...few.map((item) => call("add", item)), ...few.map((item) => call("add", item)), len]
        .concat(few.map(() => get))
        .concat([get, len]),
    },
    {
      description: "a deep queue of 300 items loses none and hands them out oldest first",
      rules: ["§4.1", "§5.2", "§10.2", "§10.5"],
      maxRetries: 1,
      requests: [...deep.map((item) => call("add", item)), len, ...deep.map(() => get), get, len],
    },
    {
      description: "a queue that wraps around and then grows keeps its order",
      rules: ["§10.5"],
      maxRetries: 1,
      requests: [...keys(4).map((item) => call("add", item)), get, get]
        .concat(keys(6, 4).map((item) => call("add", item)))
        .concat([len, ...times(8, () => [get]), get]),
    },
    {
      description: "40 items keep their failure counts: the first one's second failure gives up",
      rules: ["§7.1", "§7.2", "§10.4"],
      maxRetries: 2,
      requests: [...failing.map((item) => call("retry", item)), call("retry", failing[0] as string), len],
    },
    {
      description: "30 cycles of three processings each, two of them requeued by a dirty mark, lose no mark",
      rules: ["§4.3", "§6.2", "§10.3"],
      maxRetries: 1,
      requests: times(30, () => [
        ...[call("add", "a"), get, call("add", "a"), call("done", "a")],
        ...[get, call("add", "a"), call("done", "a"), get, call("done", "a")],
      ]).concat([len, get]),
    },
    {
      description: 'two keys with one hash ("Aa" and "BB"): the second is still queued once the first is done',
      rules: ["§1.1", "§4.2", "§10.2"],
      maxRetries: 1,
      requests: [call("add", "Aa"), call("add", "BB"), get, call("done", "Aa"), call("add", "BB"), len, get, get],
    },
    {
      description: "an add while in flight 255 calls after the get still makes done requeue the item",
      rules: ["§4.3", "§6.2", "§10.3"],
      maxRetries: 1,
      requests: [call("add", "a"), get, ...times(254, () => [get]), call("add", "a"), call("done", "a"), len],
    },
    {
      description: "with maxRetries 300, the 300th failure in a row gives up and the 299 before it requeue",
      rules: ["§7.2", "§10.4"],
      maxRetries: 300,
      requests: [...times(300, () => [call("retry", "a")]), len],
    },
  ];
}
