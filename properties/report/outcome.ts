/**
 * The outcome of one run of the gate, the input of every machine-readable report.
 */
import type { ProtocolBreach } from "../core/breach.js";
import type { ConformanceReport } from "../sequential/report.js";

/** The outcome of one gate run: a report, the breach that stopped it, or the error that kept it from starting. */
export interface GateOutcome {
  /** What was checked, in words: the command line or the module. */
  readonly target: string;
  /** The profile that was (to be) checked; unknown when the command line could not be read. */
  readonly profile?: string | undefined;
  /** The report, when the check ran to its end. */
  readonly report?: ConformanceReport | undefined;
  /** The breach, when the implementation broke the protocol. */
  readonly breach?: ProtocolBreach | undefined;
  /** A usage error (bad option, bad token, target not found) or a bug in the gate, when no check could run. */
  readonly error?: { readonly kind: "usage error" | "internal error"; readonly message: string } | undefined;
  /** How long the check took, in milliseconds. */
  readonly durationMs: number;
  /** The exit code the gate ends with. */
  readonly exitCode: number;
}

/** The verdict of an outcome in words. */
export function verdictOf(outcome: GateOutcome): string {
  if (outcome.error !== undefined) return outcome.error.kind;
  return outcome.breach === undefined ? (outcome.report?.verdict ?? "not checked") : "broke the protocol";
}
