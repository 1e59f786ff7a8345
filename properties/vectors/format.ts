/**
 * The conformance vectors' format (properties/vectors/vectors.schema.json): files of vectors, each a fresh queue's
 * `maxRetries` and the protocol v1 requests to make on it, each with the exact reply the model gives; a vector may
 * continue an earlier one (`after`), so that a file states each setup path once. One renderer for the files, so
 * that a fresh generation can be compared with the committed files byte for byte.
 */
import { type CallRequest, featureOf } from "../protocol/codec.js";

/**
 * The format version of the vector files: a change that an existing runner cannot read raises it. Version 2 added
 * `after`, which a runner of version 1 would ignore and so replay a vector on the wrong queue.
 */
export const formatVersion = 2;

/** One call: a protocol v1 request and the reply the model gives to it. */
export interface VectorStep {
  readonly request: CallRequest;
  readonly reply: object;
}

/**
 * A vector: a fresh queue (`{"op":"new","maxRetries":N}`) and the steps to replay on it, in order — or, with
 * `after`, the queue that an earlier vector of the same file leaves behind.
 */
export interface Vector {
  readonly description: string;
  /** The rules of docs/spec.md the vector exercises, such as `§4.3`. */
  readonly rules: readonly string[];
  /** The protocol features its requests need (`len`, `shutdown`): a runner whose queue lacks one skips the vector. */
  readonly features: readonly string[];
  readonly maxRetries: number;
  /**
   * The index, in the same file, of an earlier vector to replay first, on the same queue (its own `after` first,
   * and so on back to a vector without one, which makes the queue); absent when the vector starts on a fresh queue.
   * The chain shares `maxRetries`, and `features` counts the features of the whole chain.
   */
  readonly after?: number;
  readonly steps: readonly VectorStep[];
}

/** A file of vectors. */
export interface VectorFile {
  readonly formatVersion: typeof formatVersion;
  readonly description: string;
  /** What the file covers, in figures (for transitions.json: the states and transitions reachable and covered). */
  readonly coverage?: Readonly<Record<string, number>>;
  readonly vectors: readonly Vector[];
}

/** The features that `steps` need, sorted. */
export function featuresOf(steps: readonly VectorStep[]): string[] {
  const features = steps.map((step) => featureOf(step.request.op)).filter((f) => f !== undefined);
  return [...new Set(features)].sort();
}

/**
 * The steps of the vector at `index` of `vectors` with those of its chain (`after`) before them, in the order to
 * replay them on one fresh queue.
 *
 * @throws RangeError when an `after` does not name an earlier vector of the file (a chain must end).
 */
export function chainOf(vectors: readonly Vector[], index: number): VectorStep[] {
  const chain: (readonly VectorStep[])[] = [];
  for (let at: number | undefined = index; at !== undefined; ) {
    const vector: Vector | undefined = vectors[at];
    if (vector === undefined) throw new RangeError(`Expected a vector at index ${at} of ${vectors.length}`);
    chain.push(vector.steps);
    const after: number | undefined = vector.after;
    if (after !== undefined && !(Number.isInteger(after) && after >= 0 && after < at)) {
      throw new RangeError(`Expected vector ${at}'s \`after\` to name an earlier vector, got \`${after}\``);
    }
    at = after;
  }
  return chain.reverse().flat();
}

/**
 * A vector file as it is committed: two-space indented, each vector on one line so that a diff shows the vectors
 * that changed, and a final newline.
 */
export function renderFile(file: VectorFile): string {
  const lines = file.vectors.map((vector) => `    ${JSON.stringify(vector)}`);
  const { vectors: _, ...head } = file;
  const top = JSON.stringify(head, null, 2).replace(/\n}$/, "");
  const list = lines.length === 0 ? `"vectors": []` : `"vectors": [\n${lines.join(",\n")}\n  ]`;
  return `${top},\n  ${list}\n}\n`;
}
