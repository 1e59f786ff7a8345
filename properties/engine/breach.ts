/**
 * What stops a check before it reaches a verdict: the implementation could not be started, or it stopped keeping
 * the rules of the conversation (it crashed, hung, or answered out of turn). Neither is a finding about the
 * queue's behaviour, so neither shares an exit code with one.
 */

/** How an implementation broke the protocol. */
export type BreachKind = "crashed" | "exited early" | "timed out" | "malformed reply" | "unasked output" | "refused";

/** The implementation broke the protocol: the gate stops and reports it (exit code 3). */
export class ProtocolBreach extends Error {
  /** The error's name, `ProtocolBreach`. */
  override readonly name = "ProtocolBreach";

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

/** The implementation could not be started at all (for example, the command does not exist). */
export class StartError extends Error {
  /** The error's name, `StartError`. */
  override readonly name = "StartError";
}
