/**
 * `node serve-module.js <module> [export]`: serves the queue factory a JavaScript module exports over protocol v1
 * on stdin and stdout, so that `workqueue-conformance -- node serve-module.js <module>` checks it over the wire.
 */
import { loadFactory } from "../core/load.js";
import type { SubjectFactory } from "../core/subject.js";
import { serve } from "./serve.js";

const [file, name] = process.argv.slice(2);
if (file === undefined) {
  console.error("usage: node serve-module.js <module exporting a queue factory> [export name]");
  process.exitCode = 2;
} else {
  const factory = (await loadFactory(file, name)) as SubjectFactory<string>;
  await serve(factory, process.stdin, process.stdout, name ?? file);
}
