/**
 * Hands fast-check and ajv to the gate as part of it: the first import of `standalone.ts`, the entry point that
 * .config/bundle.mjs bundles into the self-contained `workqueue-conformance` the package installs.
 */
import * as ajv from "ajv";
import * as fc from "fast-check";
import { inlinePeers } from "../core/peers.js";

inlinePeers({ ajv, "fast-check": fc });
