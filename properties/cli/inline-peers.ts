/**
 * Hands fast-check and ajv to the gate as part of it: the first import of `standalone.ts`, the entry point that
 * .config/bundle.mjs bundles into the self-contained `workqueue-conformance` the package installs.
 */
import * as ajv from "ajv";
import { __version as fastCheckVersion } from "fast-check";
import { inlinePeers } from "../core/peers.js";

// ajv is CommonJS, which the gate loads on first use (`loadPeer`), so the bundle hands over the module itself.
// fast-check is imported by name where the gate uses it, so the bundle already holds the parts the gate uses; its
// version marks it carried. Its whole namespace here would keep all of fast-check in the bundle (185 KB, not 64).
inlinePeers({ ajv, "fast-check": fastCheckVersion });
