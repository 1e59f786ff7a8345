import { ProtocolBreach, StartError } from "../core/breach.js";
import { OptionError } from "../core/errors.js";
import { UsageError } from "./args.js";

/**
 * The exit codes of every command-line entry point (`workqueue-conformance` and `npm start`): one table, printed
 * by `--help` and by docs/protocol.md. A usage error never shares a code with a finding.
 */
export const exitCodes = {
  conforms: 0,
  "does not conform": 1,
  "usage error": 2,
  "broke the protocol": 3,
  "internal error": 4,
} as const;

/** What an exit code means, as `--help` prints it. */
export const exitCodeHelp = `exit codes:
  0  conforms
  1  does not conform (the counterexample is printed)
  2  usage error: a bad option or replay token, a command or module that cannot be started or loaded, a --junit
     or --html file that cannot be written, --html for a run that makes no overlapping calls
  3  the implementation broke the protocol or could not be driven: it crashed, timed out, printed a malformed
     reply or exited early; in process, its factory or a view threw, the queue threw when read (a revoked
     Proxy), a call never settled, or a verb is missing
  4  internal error: a bug in the gate, said in one line (please report it)`;

/**
 * What stopped a check that did not reach a verdict, and its exit code: the implementation could not be driven
 * (3); an option, a token or the target was wrong (2); anything else is a bug in the gate (4), said in one line.
 */
export function failureOf(error: unknown): {
  readonly kind: "broke the protocol" | "usage error" | "internal error";
  readonly message: string;
  readonly code: number;
} {
  if (error instanceof ProtocolBreach)
    return { kind: "broke the protocol", message: error.message, code: exitCodes["broke the protocol"] };
  if (error instanceof OptionError || error instanceof StartError || error instanceof UsageError) {
    return { kind: "usage error", message: error.message, code: exitCodes["usage error"] };
  }
  const message = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  return { kind: "internal error", message, code: exitCodes["internal error"] };
}
