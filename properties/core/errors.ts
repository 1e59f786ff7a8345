/**
 * The error a check throws for a bad option of its own — a malformed replay token, a replay under options other
 * than those it was made with — as opposed to a finding about the queue (a report) or a breach by the
 * implementation (`ProtocolBreach`). The command line answers it with the usage-error exit code.
 *
 * @example
 * ```ts
 * import { checkConformance } from "../sequential/check-conformance.js";
 * import { OptionError } from "./errors.js";
 *
 * await checkConformance(factory, { replay: "not a token" }).catch((error) => {
 *   if (error instanceof OptionError) console.error(error.message); // names the option and the value
 * });
 * ```
 *
 * @internal
 */
export class OptionError extends RangeError {
  /** The error's name, `OptionError`. */
  override readonly name = "OptionError";
}
