/**
 * The reference queue as a factory module, the form `workqueue-conformance --module` and `serve-module` load.
 */
import { WorkQueue } from "../src/index.js";

/** Makes a reference queue: `new WorkQueue(options)`. */
export const factory = (options: { readonly maxRetries: number }) => new WorkQueue<unknown>(options);
export default factory;
