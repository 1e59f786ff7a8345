/**
 * Replays protocol v1 requests on an in-process queue: to record the model's replies when the vectors are generated,
 * and to check a queue against a vector's replies. Both go through `replyOf`, the mapping `serve` answers the wire
 * with, so a vector means in process what it means over the protocol.
 */
import type { Subject, SubjectFactory } from "../core/subject.js";
import { type CallRequest, replyOf } from "../protocol/codec.js";
import { chainOf, type Vector, type VectorStep } from "./format.js";

/** The reply of a call that threw, as protocol v1 answers it (docs/protocol.md: `{"ok":false,"error":…}`). */
async function replyOrError(queue: Subject<string>, request: CallRequest): Promise<object> {
  try {
    return await replyOf(queue, request);
  } catch (error) {
    return { ok: false, error: error instanceof Error ? error.message : String(error) };
  }
}

/**
 * The steps `requests` make on a fresh queue from `make`, each with the reply the queue gave. The caller's
 * obligation: `make` is the model, since what is recorded becomes the expected replies.
 */
export async function record(
  make: SubjectFactory<string>,
  maxRetries: number,
  requests: readonly CallRequest[],
): Promise<VectorStep[]> {
  const queue = await make({ maxRetries });
  const steps: VectorStep[] = [];
  for (const request of requests) steps.push({ request, reply: await replyOrError(queue, request) });
  return steps;
}

/** Where a queue first answered a vector otherwise: the step's index, its request, and both replies. */
export interface VectorFailure {
  readonly step: number;
  readonly request: CallRequest;
  readonly expected: object;
  readonly actual: object;
}

/**
 * Whether `actual` is the reply `expected` says: every property of `expected` with the same value. Protocol v1
 * lets a reply carry more properties; the gate ignores them, and so does this.
 */
export function matches(expected: object, actual: object): boolean {
  return Object.entries(expected).every(([key, value]) => Object.is((actual as Record<string, unknown>)[key], value));
}

/**
 * Replays the vector at `index` of `vectors` (a file's vectors), with its chain before it, on a fresh queue from
 * `make`, and answers where it first answered otherwise — the step's index in the chain — or `undefined` when every
 * reply matched. It does not check that the queue offers the vector's features: the caller skips the vectors whose
 * features its queue lacks.
 */
export async function replayVector(
  make: SubjectFactory<string>,
  vectors: readonly Vector[],
  index: number,
): Promise<VectorFailure | undefined> {
  const queue = await make({ maxRetries: (vectors[index] as Vector).maxRetries });
  for (const [step, { request, reply: expected }] of chainOf(vectors, index).entries()) {
    const actual = await replyOrError(queue, request);
    if (!matches(expected, actual)) return { step, request, expected, actual };
  }
  return undefined;
}
