/**
 * Loading `prom-client`, the optional peer dependency of `workqueue-spec/prometheus`: a user of the queue alone does
 * not install it, and a user of the exporter who forgot is told, in one line, the command that installs it.
 *
 * @internal
 */
import type * as PromClient from "prom-client";

/** The range of `prom-client` that package.json declares as a peer dependency. */
export const promClientRange = "^15.1.3";

/** What loads a package: `createRequire(import.meta.url)`, as Node.js makes it. */
export type Require = Pick<NodeJS.Require, "resolve"> & ((id: string) => unknown);

/**
 * `prom-client`, loaded with `require` (it is CommonJS).
 *
 * @throws Error naming the install command when `prom-client` cannot be found; an error that `prom-client` itself
 * throws while loading goes through as it is.
 */
export function requirePromClient(require: Require): typeof PromClient {
  try {
    require.resolve("prom-client");
  } catch {
    throw new Error(
      `workqueue-spec/prometheus needs prom-client (an optional peer dependency of workqueue-spec), which cannot be found: npm install prom-client@"${promClientRange}"`,
    );
  }
  return require("prom-client") as typeof PromClient;
}
