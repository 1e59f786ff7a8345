/**
 * Golden traces, in the style of cockroachdb/datadriven: a call, a `----` line, and the expected answer, one block
 * per call. A shrunk counterexample becomes a regression test by pasting {@link traceOf}'s output into
 * `properties/traces/<behaviour>.trace`.
 *
 * ```
 * # an add while in flight is applied by done
 * new maxRetries=2
 * ----
 *
 * add "a"
 * ----
 *
 * get
 * ----
 * "a"
 * ```
 *
 * Calls: `new maxRetries=N`, `add X`, `get`, `done X`, `retry X`, `forget X`, `shutDown`, and the views `size`,
 * `inFlight`, `failures X`, `shuttingDown`. `X` is JSON, or `undefined` or `NaN`. Answers: nothing, a value, or `throws TypeError: …`.
 */

import type { Answer, Operation } from "../core/operation.js";
import { answersNothing, showAnswer, showValue } from "../core/render.js";
import { capture, perform, type Subject } from "../core/subject.js";
import type { Counterexample } from "../sequential/report.js";

/**
 * A queue a trace can run on: the verbs, `shutDown` and all four views, synchronous.
 *
 * @internal
 */
export interface TraceSubject extends Subject<unknown> {
  /** [docs/spec.md §9.1](../../docs/spec.md#§9-views), synchronous. */
  readonly size: number;
  /** [docs/spec.md §9.2](../../docs/spec.md#§9-views), synchronous. */
  readonly inFlight: number;
  /**
   * [docs/spec.md §9.3](../../docs/spec.md#§9-views), synchronous.
   *
   * @param item - The item whose count is read.
   */
  failures(item: unknown): number;
  /** [docs/spec.md §12.1](../../docs/spec.md#§12-shutdown), synchronous. */
  shutDown(): void;
  /** [docs/spec.md §12.2](../../docs/spec.md#§12-shutdown), synchronous. */
  readonly shuttingDown: boolean;
}

/** Parses an item argument: JSON, or `undefined` or `NaN`. */
function parseItem(text: string): unknown {
  if (text === "undefined") return undefined;
  if (text === "NaN") return Number.NaN;
  return JSON.parse(text);
}

/** The answer of a trace's call as the trace writes it: empty for `undefined` from a verb that answers nothing. */
function render(call: string, answer: Answer): string {
  return answersNothing(call, answer) ? "" : showAnswer(answer);
}

/** Runs one call of a trace on `queue` (made by the preceding `new`) and renders its answer. */
function runCall(call: string, queue: TraceSubject): string {
  const [verb = "", ...rest] = call.split(" ");
  const argument = rest.join(" ");
  if (verb === "size" || verb === "inFlight" || verb === "shuttingDown") return String(queue[verb]);
  if (verb === "failures") return render(call, capture(() => queue.failures(parseItem(argument))) as Answer);
  if (verb === "get" || verb === "shutDown") return render(call, perform(queue, { verb }) as Answer);
  if (verb === "add" || verb === "done" || verb === "retry" || verb === "forget") {
    return render(call, perform(queue, { verb, item: parseItem(argument) }) as Answer);
  }
  throw new SyntaxError(`Unknown trace call \`${call}\``);
}

/**
 * Runs a trace on queues that `make` builds and returns the trace rewritten with the answers they gave. The trace
 * holds when the result equals the input.
 *
 * @param text - The trace: blocks of a call, `----`, and the expected answer.
 * @param make - Makes the queue a `new maxRetries=N` line asks for.
 * @example
 * ```ts
 * import { readFileSync } from "node:fs";
 * import { WorkQueue } from "workqueue-spec";
 * import { runTrace } from "./traces.js";
 *
 * const trace = readFileSync("add-while-in-flight.trace", "utf8");
 * if (runTrace(trace, (options) => new WorkQueue(options)) !== trace) throw new Error("the trace no longer holds");
 * ```
 *
 * @internal
 */
export function runTrace(text: string, make: (options: { maxRetries: number }) => TraceSubject): string {
  const blocks = text.trimEnd().split(/\n\n(?=[^\n])/);
  let queue: TraceSubject | undefined;
  const rewritten = blocks.map((block) => {
    const lines = block.split("\n");
    const separator = lines.indexOf("----");
    if (separator < 0) return block; // comments only
    const calls = lines.slice(0, separator);
    const call = calls.at(-1) ?? "";
    let answer: string;
    if (call.startsWith("new maxRetries=")) {
      queue = make({ maxRetries: Number(call.slice("new maxRetries=".length)) });
      answer = "";
    } else if (queue === undefined) {
      throw new SyntaxError(`A trace must start with \`new maxRetries=N\`, got \`${call}\``);
    } else {
      answer = runCall(call, queue);
    }
    return [...calls, "----", ...(answer === "" ? [] : [answer])].join("\n");
  });
  return `${rewritten.join("\n\n")}\n`;
}

/**
 * A counterexample as a trace of what the model expects, ready to paste into `properties/traces/`.
 *
 * @param counterexample - A failed report's counterexample.
 * @example
 * ```ts
 * import { writeFileSync } from "node:fs";
 * import { checkConformance } from "../sequential/check-conformance.js";
 * import { traceOf } from "./traces.js";
 *
 * const { counterexample } = await checkConformance((options) => new MyQueue(options));
 * if (counterexample !== undefined) writeFileSync("properties/traces/my-bug.trace", traceOf(counterexample));
 * ```
 *
 * @internal
 */
export function traceOf(counterexample: Counterexample): string {
  const callOf = (operation: Operation) =>
    "item" in operation ? `${operation.verb} ${showValue(operation.item)}` : operation.verb;
  const blocks = [
    `# ${counterexample.invariant.name} (docs/spec.md ${counterexample.invariant.rule})`,
    `new maxRetries=${showValue(counterexample.maxRetries)}\n----`,
    ...counterexample.steps.map((step) => {
      const answer = render(callOf(step.operation), step.expected);
      return `${callOf(step.operation)}\n----${answer === "" ? "" : `\n${answer}`}`;
    }),
  ];
  const last = counterexample.steps.at(-1);
  if (last?.expectedViews.size !== undefined) blocks.push(`size\n----\n${last.expectedViews.size}`);
  return `${blocks.join("\n\n")}\n`;
}
