/**
 * The conformance vectors' format (properties/vectors/vectors.schema.json): files of vectors, each a fresh queue's
 * `maxRetries` and the protocol v1 requests to make on it, each with the exact reply the model gives. One renderer
 * for the files, so that a fresh generation can be compared with the committed files byte for byte.
 */
import type { CallRequest } from "../protocol/reply.js";

/** The format version of the vector files: a change that an existing runner cannot read raises it. */
export const formatVersion = 1;

/** One call: a protocol v1 request and the reply the model gives to it. */
export interface VectorStep {
  readonly request: CallRequest;
  readonly reply: object;
}

/** A vector: a fresh queue (`{"op":"new","maxRetries":N}`) and the steps to replay on it, in order. */
export interface Vector {
  readonly description: string;
  /** The rules of docs/spec.md the vector exercises, such as `§4.3`. */
  readonly rules: readonly string[];
  /** The protocol features its requests need (`len`, `shutdown`): a runner whose queue lacks one skips the vector. */
  readonly features: readonly string[];
  readonly maxRetries: number;
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

/** The feature of protocol v1 a request needs, if any (docs/protocol.md, "Messages"). */
export function featureOf(request: CallRequest): string | undefined {
  if (request.op === "len") return "len";
  return request.op === "shutdown" || request.op === "shuttingDown" ? "shutdown" : undefined;
}

/** The features that `steps` need, sorted. */
export function featuresOf(steps: readonly VectorStep[]): string[] {
  const features = steps.map((step) => featureOf(step.request)).filter((f) => f !== undefined);
  return [...new Set(features)].sort();
}

/**
 * A vector file as it is committed: two-space indented, each step on one line so that a diff shows the steps that
 * changed, and a final newline.
 */
export function renderFile(file: VectorFile): string {
  const steps: string[] = [];
  const marked = {
    ...file,
    vectors: file.vectors.map((vector) => ({
      ...vector,
      steps: vector.steps.map((step) => {
        steps.push(JSON.stringify(step));
        return `\u0000${steps.length - 1}`;
      }),
    })),
  };
  const text = JSON.stringify(marked, null, 2).replace(/"\\u0000(\d+)"/g, (_, i: string) => steps[Number(i)] ?? "");
  return `${text}\n`;
}
