/**
 * `npm run vectors`: writes the conformance vectors, generated from the model, into properties/vectors/ of the
 * repository this file was built in (it runs from dist/properties/vectors/, three folders below). Run it after a
 * change to the model, the traces or the generator, and commit what changed: properties/test/reports/vectors.test.ts fails
 * until then.
 */
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { renderFile } from "./format.js";
import { generateVectors } from "./generate.js";

const root = new URL("../../../", import.meta.url);
const traces = new URL("properties/traces/", root);
const names = readdirSync(traces)
  .filter((name) => name.endsWith(".trace"))
  .sort();
const files = await generateVectors(names.map((name) => ({ name, text: readFileSync(new URL(name, traces), "utf8") })));
for (const [name, file] of Object.entries(files)) {
  writeFileSync(new URL(`properties/vectors/${name}`, root), renderFile(file));
  console.log(`properties/vectors/${name}: ${file.vectors.length} vectors`);
}
