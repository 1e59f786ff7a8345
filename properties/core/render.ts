/**
 * How the oracle writes what it saw: one function renders a value, one an answer, one a call, one a count. Every
 * report, trace, log line and diagnosis goes through these, so a value reads the same wherever it is shown.
 */
import type { Answer, Operation } from "./operation.js";

/**
 * Renders a value: strings as JSON would (quoted, escaped), `-0`, `NaN` and `undefined` as JavaScript writes them,
 * an error by its name and message, anything else as `String` shows it.
 */
export function showValue(value: unknown): string {
  if (typeof value === "string") return JSON.stringify(value);
  if (Object.is(value, -0)) return "-0";
  if (value instanceof Error) return `${value.name}: ${value.message}`;
  try {
    return String(value);
  } catch {
    return Object.prototype.toString.call(value); // `Object.create(null)` has no `toString`
  }
}

/** Renders an answer: the value it answered, or `throws TypeError: …`. */
export function showAnswer(answer: Answer): string {
  return answer.kind === "error" ? `throws ${answer.name}: ${answer.message}` : showValue(answer.value);
}

/** Whether `answer` is the nothing that a verb other than `get` answers, which a trace or a report leaves out. */
export function answersNothing(verb: string, answer: Answer): boolean {
  return answer.kind === "value" && answer.value === undefined && verb !== "get";
}

/** Renders a call: `add("a")`, `get()`, `shutDown()`, `addAfter("a", 5)`, and a step of the clock, `advance(5)`. */
export function showCall(operation: Operation): string {
  if (operation.verb === "addAfter") return `addAfter(${showValue(operation.item)}, ${showValue(operation.delayMs)})`;
  if (operation.verb === "advance") return `advance(${showValue(operation.ms)})`;
  return "item" in operation ? `${operation.verb}(${showValue(operation.item)})` : `${operation.verb}()`;
}

/** A count with its noun: `1 run`, `2,000 runs`. */
export function plural(count: number, noun: string): string {
  return `${count.toLocaleString("en-US")} ${noun}${count === 1 ? "" : "s"}`;
}
