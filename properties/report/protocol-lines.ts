/**
 * A counterexample as protocol v1 lines (docs/protocol.md), for the gate's reports of an implementation checked over
 * the wire: each request (`→`) and the reply the model expects (`←`), written with the protocol's codec.
 */
import type { Backoff } from "../core/operation.js";
import type { Step } from "../core/verify.js";
import { opening, replyToAnswer, requestFor, viewRequests } from "../protocol/codec.js";

/** One line: a request (`→`) or a reply (`←`), as its JSON. */
const line = (arrow: "→" | "←", message: object) => `${arrow} ${JSON.stringify(message)}`;

/**
 * A counterexample as protocol v1 lines: each request (`→`) and the reply the model expects (`←`), with the `len`
 * (and `waiting` and `metrics`) that followed where the implementation showed it, ready to paste into a unit test of an
 * implementation in any language.
 */
export function protocolLines(counterexample: {
  readonly maxRetries: number;
  readonly backoff?: Backoff | undefined;
  readonly steps: readonly Step[];
}): string[] {
  const lines = [line("→", opening(counterexample.maxRetries, counterexample.backoff)), line("←", { ok: true })];
  for (const step of counterexample.steps) {
    const request = requestFor(step.operation);
    lines.push(line("→", request), line("←", replyToAnswer(request.op, step.expected)));
    for (const view of ["size", "waiting", "metrics"] as const) {
      if (step.actualViews[view] === undefined) continue;
      const asked = viewRequests[view];
      const value = step.expectedViews[view];
      lines.push(line("→", asked), line("←", replyToAnswer(asked.op, { kind: "value", value })));
    }
  }
  return lines;
}
