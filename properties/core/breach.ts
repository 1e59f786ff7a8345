/**
 * What stops a check before it reaches a verdict: the implementation could not be started, or it stopped keeping
 * the rules of the conversation (it crashed, hung, or answered out of turn). Neither is a finding about the
 * queue's behaviour, so neither shares an exit code with one.
 */

/**
 * How an implementation broke the protocol.
 *
 * @internal
 */
export type BreachKind =
  | "crashed"
  | "exited early"
  | "timed out"
  | "malformed reply"
  | "unasked output"
  | "refused"
  | "threw"
  | "missing verb";

/**
 * The implementation broke the protocol: the gate stops and reports it (exit code 3).
 *
 * @example
 * ```ts
 * import { checkDriver } from "../sequential/conformance.js";
 * import { ProtocolBreach } from "./breach.js";
 *
 * try {
 *   await checkDriver(driver);
 * } catch (error) {
 *   if (error instanceof ProtocolBreach) console.error(`${error.kind}: ${error.message}\n${error.stderrTail}`);
 * } finally {
 *   await driver.close();
 * }
 * ```
 *
 * @internal
 */
export class ProtocolBreach extends Error {
  /** The error's name, `ProtocolBreach`. */
  override readonly name = "ProtocolBreach";

  /**
   * @param kind - What kind of breach.
   * @param message - What the implementation did, in one sentence.
   * @param stderrTail - The last lines the implementation wrote to stderr, or `""`.
   */
  constructor(
    /** What kind of breach. */
    readonly kind: BreachKind,
    message: string,
    /** The last lines the implementation wrote to stderr. */
    readonly stderrTail: string,
  ) {
    super(message);
  }
}

/**
 * The implementation could not be started at all (for example, the command does not exist).
 *
 * @example
 * ```ts
 * import { connect } from "../protocol/driver.js";
 * import { StartError } from "./breach.js";
 *
 * await connect("no-such-command", []).catch((error) => {
 *   if (error instanceof StartError) console.error(error.message); // cannot start `no-such-command`: …
 * });
 * ```
 *
 * @internal
 */
export class StartError extends Error {
  /** The error's name, `StartError`. */
  override readonly name = "StartError";
}
