#!/usr/bin/env node
/**
 * The entry point of `workqueue-conformance`: checks that the gate's peers are installed, runs the gate and exits
 * with its code — the one `process.exit`.
 */
import { missingPeers, missingPeersMessage } from "../core/peers.js";
import { exitCodes } from "./exit-codes.js";

let code: number;
const missing = missingPeers(["fast-check", "ajv"]);
if (missing.length > 0) {
  process.stderr.write(`workqueue-conformance: ${missingPeersMessage(missing, "workqueue-conformance")}\n`);
  code = exitCodes["usage error"];
} else {
  const { main } = await import("./gate.js"); // after the check: its imports need the peers
  const plain = process.env.TERM === "dumb" || process.env.NO_COLOR !== undefined;
  const io = {
    out: (text: string) => process.stdout.write(text),
    err: (text: string) => process.stderr.write(text),
    // A live line needs a terminal that understands `\r` and erase-line, and a user who did not ask for plain text.
    progress: process.stderr.isTTY === true && process.env.CI === undefined && !plain,
    plain,
  };
  code = await main(process.argv.slice(2), io);
}
process.stdout.write("", () => process.exit(code));
