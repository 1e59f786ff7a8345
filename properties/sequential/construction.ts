/**
 * A counterexample's first line: how its queue was made, in the language of the implementation checked — the
 * constructor in process, the `new` request over the protocol — with every option that decided the run: its
 * `maxRetries` and backoff, and the check's `time` and `shutDown`, which drew the calls it is made of.
 */
import type { Driver } from "../core/driver.js";
import type { Backoff } from "../core/operation.js";
import { showValue } from "../core/render.js";

/** A queue made in process, as its constructor call: `new WorkQueue({ maxRetries: 2, backoff: { … } })`. */
export function inProcessConstruction(maxRetries: number, backoff: Backoff | undefined): string {
  const retries = `maxRetries: ${showValue(maxRetries)}`;
  const options =
    backoff === undefined ? retries : `${retries}, backoff: { baseMs: ${backoff.baseMs}, maxMs: ${backoff.maxMs} }`;
  return `new WorkQueue({ ${options} })`;
}

/**
 * How `driver` made the queue of a counterexample with `maxRetries` and `backoff`, followed by the check's options
 * that shaped its calls, if any: `new {"maxRetries":2} // time: true, shutDown: true`.
 */
export function constructionOf(
  driver: Pick<Driver, "construction">,
  options: { readonly time: boolean; readonly shutDown: boolean },
  made: { readonly maxRetries: number; readonly backoff?: Backoff | undefined },
): string {
  const { maxRetries, backoff } = made;
  const constructed = driver.construction?.(maxRetries, backoff) ?? inProcessConstruction(maxRetries, backoff);
  const run = [...(options.time ? ["time: true"] : []), ...(options.shutDown ? ["shutDown: true"] : [])];
  return run.length === 0 ? constructed : `${constructed}   // ${run.join(", ")}`;
}
