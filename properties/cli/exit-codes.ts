/**
 * The exit codes of every command-line entry point (`workqueue-conformance` and `npm start`): one table, printed
 * by `--help` and by docs/protocol.md. A usage error never shares a code with a finding.
 */
export const exitCodes = {
  conforms: 0,
  "does not conform": 1,
  "usage error": 2,
  "broke the protocol": 3,
} as const;

/** What an exit code means, as `--help` prints it. */
export const exitCodeHelp = `exit codes:
  0  conforms
  1  does not conform (the counterexample is printed)
  2  usage error
  3  the implementation broke the protocol: crashed, timed out, printed a malformed reply, or exited early`;
