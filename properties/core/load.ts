/**
 * Loads a queue factory from a JavaScript module, or a TypeScript one where it can.
 */
import { spawnSync } from "node:child_process";
import { createRequire } from "node:module";
import { resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import type { SubjectFactory } from "./subject.js";

/**
 * Imports `file` and returns the queue factory it exports: the export `name` if given, else `factory`, else the
 * default export.
 *
 * @throws TypeError when the module exports no function under that name, or a class instead of a factory; or when
 * it is TypeScript that neither the runtime nor a tsx installed beside it can load, saying what to do.
 * @throws Error when there is no such file (naming the path it looked at), or when the module does not compile
 * (a `SyntaxError` naming its file and line, where the runtime's check finds it: see {@link located}).
 */
export async function loadFactory(file: string, name?: string): Promise<SubjectFactory<unknown>> {
  const module = await importModule(file);
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

/**
 * Imports `file`. TypeScript loads when the runtime can (under `node --import tsx`, or Node.js 22.18 or newer,
 * which strips types); else with the tsx that the file's project installed, registered as `--import tsx` would.
 */
async function importModule(file: string): Promise<Record<string, unknown>> {
  const url = pathToFileURL(resolve(file)).href;
  try {
    return (await import(url)) as Record<string, unknown>;
  } catch (error) {
    const { code, url: missing } = error as { code?: unknown; url?: unknown };
    if (code === "ERR_MODULE_NOT_FOUND" && missing === url) {
      throw new Error(`cannot find \`${file}\`: there is no file ${fileURLToPath(url)}`);
    }
    if (error instanceof SyntaxError) throw located(error, file);
    if (code !== "ERR_UNKNOWN_FILE_EXTENSION" || !/\.[cm]?ts$/.test(file)) throw error;
    const tsx = tsxBeside(file);
    if (tsx === undefined) {
      throw new TypeError(
        `Node.js ${process.version} cannot load TypeScript (\`${file}\`) by itself: install tsx in its project (npm install --save-dev tsx) and the gate loads it with tsx, or compile it to JavaScript and give the .js file`,
      );
    }
    await import(pathToFileURL(tsx).href);
    // A new URL: the failed import of `url` stays in the module cache.
    return (await import(`${url}?tsx`)) as Record<string, unknown>;
  }
}

/**
 * `error`, a `SyntaxError` that an import of `file` threw, with the place it names: Node.js 20 does not say which
 * file or line a dynamic import failed to compile, so `file` is checked alone (`node --check`, as a module where
 * nothing says otherwise, as the import read it), which names its line. When that check passes, the error is in a
 * module that `file` imports, and the message says so; it does not look for which one.
 */
function located(error: SyntaxError, file: string): SyntaxError {
  const check = spawnSync(process.execPath, ["--experimental-default-type=module", "--check", resolve(file)], {
    encoding: "utf8",
  });
  const place = /^(.+:\d+)\n/.exec(check.stderr ?? "")?.[1];
  const where = place === undefined ? `\`${file}\` or a module it imports` : place;
  return new SyntaxError(`syntax error in ${where}: ${error.message}`);
}

/** tsx's loader (`--import tsx`), as the project of `file` resolves it, or `undefined` when it has none. */
function tsxBeside(file: string): string | undefined {
  try {
    return createRequire(resolve(file)).resolve("tsx");
  } catch {
    return undefined;
  }
}
