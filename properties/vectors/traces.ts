/**
 * The golden traces (properties/traces/*.trace) as protocol v1 requests. A trace's calls become requests
 * (`shutDown` is `shutdown`, the view `size` is `len`); the views protocol v1 lacks (`inFlight`, `failures`) are
 * left out, since they change nothing; and a trace that passes a value that is not a string (`undefined`, `null`)
 * is left out whole: protocol v1 items are strings, and the gate sends no call the model refuses.
 */
import type { CallRequest } from "../protocol/codec.js";

/** A trace as requests: its comment, the rules it cites, its `maxRetries` and the calls. */
export interface TraceRequests {
  readonly name: string;
  readonly comment: string;
  readonly rules: readonly string[];
  readonly maxRetries: number;
  readonly requests: readonly CallRequest[];
  /** The calls left out, as the trace writes them. */
  readonly left: readonly string[];
}

/** The request for one call of a trace; `undefined` for a view protocol v1 lacks; `null` for an item it cannot carry. */
function requestOf(call: string): CallRequest | undefined | null {
  const [verb = "", ...rest] = call.split(" ");
  if (verb === "get") return { op: "get" };
  if (verb === "shutDown") return { op: "shutdown" };
  if (verb === "size") return { op: "len" };
  if (verb === "shuttingDown") return { op: "shuttingDown" };
  if (verb === "inFlight" || verb === "failures") return undefined;
  if (verb === "add" || verb === "done" || verb === "retry" || verb === "forget") {
    const argument = rest.join(" ");
    const item: unknown = argument === "undefined" || argument === "NaN" ? undefined : JSON.parse(argument);
    return typeof item === "string" ? { op: verb, item } : null;
  }
  throw new SyntaxError(`Unknown trace call \`${call}\``);
}

/**
 * The requests of the trace `text` named `name`, or the reason it is left out.
 *
 * @throws SyntaxError for a call that is not a trace's, or a trace that does not start with `new maxRetries=N`.
 */
export function traceRequests(name: string, text: string): TraceRequests | string {
  const lines = text.split("\n");
  const comment = lines
    .filter((line) => line.startsWith("#"))
    .map((line) => line.replace(/^# ?/, ""))
    .join(" ");
  const calls = lines.filter((_, i) => lines[i + 1] === "----");
  const [first, ...rest] = calls;
  if (!first?.startsWith("new maxRetries=")) throw new SyntaxError(`${name} does not start with \`new maxRetries=N\``);
  const requests: CallRequest[] = [];
  const left: string[] = [];
  for (const call of rest) {
    const request = requestOf(call);
    if (request === null) return `${name} passes a value that is not a string (\`${call}\`)`;
    if (request === undefined) left.push(call);
    else requests.push(request);
  }
  const rules = [...new Set(comment.match(/§\d+(?:\.\d+)?/g) ?? [])];
  return { name, comment, rules, maxRetries: Number(first.slice("new maxRetries=".length)), requests, left };
}
