#!/usr/bin/env node
/**
 * The entry point of `workqueue-conformance`: runs the gate and exits with its code — the one `process.exit`.
 */
import { main } from "./cli.js";

const io = {
  out: (text: string) => process.stdout.write(text),
  err: (text: string) => process.stderr.write(text),
  progress: process.stderr.isTTY === true && process.env.CI === undefined,
};
const code = await main(process.argv.slice(2), io);
process.stdout.write("", () => process.exit(code));
