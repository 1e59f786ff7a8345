/**
 * The implementation side of protocol v1, for queues written in JavaScript: reads requests from `input`, one JSON
 * object per line, and writes one reply line each to `output`, in order. It is what `workqueue-conformance`
 * talks to when a JavaScript queue is checked over the protocol rather than in process.
 */
import { createInterface } from "node:readline";
import type { Readable, Writable } from "node:stream";
import { readView, type Subject, type SubjectFactory } from "../subject.js";
import { validateRequest } from "./schema.js";

/** Answers one request; `queue` is the current queue, made by the last `new`. */
async function answer(
  request: { op?: unknown; item?: unknown; maxRetries?: unknown },
  state: { queue?: Subject<string> | undefined },
  factory: SubjectFactory<string>,
  name: string,
): Promise<object> {
  const op = String(request.op);
  if (!Object.hasOwn(validateRequest, op) || !validateRequest[op as keyof typeof validateRequest](request)) {
    return { ok: false, error: `unknown or malformed request: ${JSON.stringify(request)}` };
  }
  if (op === "hello") return { ok: true, name, features: ["len"] };
  if (op === "new") {
    state.queue = await factory({ maxRetries: request.maxRetries as number });
    return { ok: true };
  }
  const queue = state.queue;
  if (queue === undefined) return { ok: false, error: `no queue yet: send {"op":"new",…} first` };
  const item = request.item as string;
  if (op === "get") return { ok: true, item: (await queue.get()) ?? null };
  if (op === "retry") return { ok: true, requeued: await queue.retry(item) };
  if (op === "len") return { ok: true, len: await readView(queue, "size") };
  await queue[op as "add" | "done" | "forget"](item);
  return { ok: true };
}

/**
 * Serves the queues `factory` makes over protocol v1 until `input` ends. A call that throws is answered with
 * `{"ok":false,"error":…}`; the `features` announced are `["len"]`.
 */
export async function serve(
  factory: SubjectFactory<string>,
  input: Readable,
  output: Writable,
  name = "javascript",
): Promise<void> {
  const state: { queue?: Subject<string> | undefined } = {};
  for await (const line of createInterface({ input, crlfDelay: Number.POSITIVE_INFINITY })) {
    let reply: object;
    try {
      reply = await answer(JSON.parse(line), state, factory, name);
    } catch (error) {
      reply = { ok: false, error: (error as Error).message };
    }
    output.write(`${JSON.stringify(reply)}\n`);
  }
}
