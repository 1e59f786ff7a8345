#!/usr/bin/env node
/**
 * `workqueue-vectors`: writes transitions.json, the conformance vectors of every reachable transition of a small
 * state space (docs/protocol.md, "Conformance vectors"), generated from the model. The package ships the small vector
 * files; this one (3 MB, 9,860 vectors) is made on demand so that a user of the queue alone does not pay for it. The
 * one `process.exit` of this entry point.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { renderFile } from "../vectors/format.js";
import { transitionsFile } from "../vectors/generate.js";
import { oneLine, parse, UsageError } from "./args.js";
import { exitCodes } from "./exit-codes.js";

const help = `usage: workqueue-vectors [--out DIR]

Writes DIR/transitions.json (default: the current folder): every reachable transition of a small state space, one
conformance vector each, with the model's replies (docs/protocol.md, "Conformance vectors"). traces.json and
edge-cases.json ship in the package, beside vectors.schema.json: workqueue-spec/vectors/<file>.json.

exit codes: 0 written; 2 usage error, or DIR cannot be written`;

async function main(args: readonly string[]): Promise<number> {
  try {
    const { values } = parse(args, { out: { type: "string" }, help: { type: "boolean", short: "h" } });
    if (values.help === true) {
      process.stdout.write(`${help}\n`);
      return exitCodes.conforms;
    }
    const file = await transitionsFile();
    const path = join(values.out ?? ".", "transitions.json");
    try {
      writeFileSync(path, renderFile(file));
    } catch (error) {
      throw new UsageError(`cannot write ${path}: ${oneLine((error as Error).message)}`);
    }
    process.stdout.write(`wrote ${path}: ${file.vectors.length.toLocaleString("en-US")} vectors\n`);
    return exitCodes.conforms;
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`workqueue-vectors: ${error.message} (see --help)\n`);
    return exitCodes["usage error"];
  }
}

const code = await main(process.argv.slice(2));
process.stdout.write("", () => process.exit(code));
