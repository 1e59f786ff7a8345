/**
 * Loads a queue factory from a JavaScript module.
 */
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import type { SubjectFactory } from "./subject.js";

/**
 * Imports `file` and returns the queue factory it exports: the export `name` if given, else `factory`, else the
 * default export.
 *
 * @throws TypeError when the module exports no function under that name, or a class instead of a factory.
 */
export async function loadFactory(file: string, name?: string): Promise<SubjectFactory<unknown>> {
  const module = (await import(pathToFileURL(resolve(file)).href)) as Record<string, unknown>;
  const names = name === undefined ? ["factory", "default"] : [name];
  const factory = names.map((n) => module[n]).find((value) => typeof value === "function");
  if (factory === undefined) {
    const wanted = names.map((n) => `\`${n}\``).join(" or ");
    throw new TypeError(`Expected \`${file}\` to export a queue factory as ${wanted}, got none`);
  }
  if (/^class\b/.test(Function.prototype.toString.call(factory))) {
    throw new TypeError(
      `Expected \`${file}\` to export a queue factory, got a class: export \`(options) => new ${(factory as { name: string }).name || "Queue"}(options)\` instead`,
    );
  }
  return factory as SubjectFactory<unknown>;
}
