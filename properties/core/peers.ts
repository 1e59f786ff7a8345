/**
 * The gate's optional peer dependencies: `fast-check` for every check, `ajv` for the wire protocol. They are peers,
 * not dependencies, so that a user of the queue alone installs nothing else; a user of the gate installs them
 * beside `workqueue-spec`, and is told so, by name and range, when one is missing.
 */
import { createRequire } from "node:module";

/** Each peer and the range `workqueue-spec` declares for it in its package.json. */
export const peers = { "fast-check": "^4.11.0", ajv: "^8.17.1" } as const;

/** A peer's name. */
export type Peer = keyof typeof peers;

const require = createRequire(import.meta.url);

/** The peers this copy of the gate carries inside it, by name: the command-line bundle's (cli/inline-peers.ts). */
const inlined = new Map<Peer, unknown>();

/**
 * Makes `modules` the peers of this copy of the gate, found whatever the project installed: the self-contained
 * bundle of `workqueue-conformance` carries fast-check and ajv inside, and hands them over here before it starts.
 * A peer's value is what `loadPeer` returns for it: the module of a peer loaded that way (ajv), anything for a peer
 * the gate imports by name (fast-check), which the bundle resolved when it was built.
 */
export function inlinePeers(modules: { readonly [P in Peer]?: unknown }): void {
  for (const [name, module] of Object.entries(modules)) inlined.set(name as Peer, module);
}

/** The peers among `names` that this copy of the gate neither carries nor can resolve from here. */
export function missingPeers(names: readonly Peer[]): Peer[] {
  return names.filter((name) => {
    if (inlined.has(name)) return false;
    try {
      require.resolve(name);
      return false;
    } catch {
      return true;
    }
  });
}

/** The message that names the missing peers and the command that installs them. */
export function missingPeersMessage(missing: readonly Peer[], what: string): string {
  const install = missing.map((name) => `${name}@"${peers[name]}"`).join(" ");
  const them = missing.length === 1 ? "an optional peer dependency" : "optional peer dependencies";
  return `${what} needs ${missing.join(" and ")} (${them} of workqueue-spec), which cannot be found: npm install --save-dev ${install}`;
}

/**
 * Loads a peer that is CommonJS, on first use rather than at import, so that a part of the gate that does not need
 * it works without it.
 *
 * @throws Error naming the peer and how to install it, when it is missing.
 */
export function loadPeer<T>(name: Peer, what: string): T {
  if (inlined.has(name)) return inlined.get(name) as T;
  if (missingPeers([name]).length > 0) throw new Error(missingPeersMessage([name], what));
  return require(name) as T;
}
