#!/usr/bin/env node
/**
 * `workqueue-conformance` as the package installs it: `bin.ts` with fast-check and ajv inside. .config/bundle.mjs
 * bundles this file into `dist/bin/workqueue-conformance.js`, so that `npx workqueue-conformance` runs in a project
 * that installed only workqueue-spec, while `workqueue-spec/properties` keeps them as optional peers. The imports
 * run in order: the peers are handed over before `bin.ts` looks for them.
 */
import "./inline-peers.js";
import "./bin.js";
