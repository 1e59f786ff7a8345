/**
 * The implementation side of protocol v1, for queues written in JavaScript: reads requests from `input`, one JSON
 * object per line, and writes one reply line each to `output`, in order. It is what `workqueue-conformance`
 * talks to when a JavaScript queue is checked over the protocol rather than in process.
 */
import { createInterface } from "node:readline";
import type { Readable, Writable } from "node:stream";
import type { Subject, SubjectFactory } from "../core/subject.js";
import { type CallRequest, featureOf, helloReply, replyOf } from "./codec.js";
import { validators } from "./schema.js";

/** What is served: the factory, the name and features announced, and the current queue (made by the last `new`). */
interface Served {
  readonly factory: SubjectFactory<string>;
  readonly name: string;
  readonly features: readonly string[];
  queue?: Subject<string> | undefined;
}

/** Answers one request. */
async function answer(
  request: { op?: unknown; item?: unknown; maxRetries?: unknown },
  served: Served,
): Promise<object> {
  const op = String(request.op);
  const feature = featureOf(op);
  const { request: validate } = validators();
  const known = Object.hasOwn(validate, op) && (feature === undefined || served.features.includes(feature));
  if (!known || !validate[op as keyof typeof validate](request)) {
    return { ok: false, error: `unknown or malformed request: ${JSON.stringify(request)}` };
  }
  if (op === "hello") return helloReply(served.name, served.features);
  if (op === "new") {
    served.queue = await served.factory({ maxRetries: request.maxRetries as number });
    return { ok: true };
  }
  const queue = served.queue;
  if (queue === undefined) return { ok: false, error: `no queue yet: send {"op":"new",…} first` };
  return replyOf(queue, request as CallRequest);
}

/**
 * Serves the queues `factory` makes over protocol v1 until `input` ends. A call that throws is answered with
 * `{"ok":false,"error":…}`. The features announced are `len`, and `shutdown` when a queue made at the start offers
 * `shutDown` and `shuttingDown`.
 *
 * @param factory - Makes a fresh queue for every `new` request.
 * @param input - Where requests are read, one JSON object per line (e.g. `process.stdin`).
 * @param output - Where replies are written, one line each (e.g. `process.stdout`).
 * @param name - The name announced in the `hello` reply.
 * @example
 * ```ts
 * import { WorkQueue } from "workqueue-spec";
 * import { serve } from "workqueue-spec/properties";
 *
 * // my-queue-over-the-wire.js: then `workqueue-conformance -- node my-queue-over-the-wire.js`
 * await serve((options) => new WorkQueue<string>(options), process.stdin, process.stdout, "my-queue");
 * ```
 *
 * @public
 */
export async function serve(
  factory: SubjectFactory<string>,
  input: Readable,
  output: Writable,
  name = "javascript",
): Promise<void> {
  const probe = await factory({ maxRetries: 0 });
  const shuts = typeof probe.shutDown === "function" && probe.shuttingDown !== undefined;
  const served: Served = { factory, name, features: shuts ? ["len", "shutdown"] : ["len"] };
  for await (const line of createInterface({ input, crlfDelay: Number.POSITIVE_INFINITY })) {
    let reply: object;
    try {
      reply = await answer(JSON.parse(line), served);
    } catch (error) {
      reply = { ok: false, error: (error as Error).message };
    }
    output.write(`${JSON.stringify(reply)}\n`);
  }
}
