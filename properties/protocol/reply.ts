/**
 * What a queue answers to one call of protocol v1 (docs/protocol.md), as the reply object: the one mapping from the
 * protocol's requests to the spec's verbs and from their answers back to replies. `serve` answers the wire with it,
 * and the conformance vectors (properties/vectors/) are generated and replayed with it.
 */
import { readView, type Subject } from "../core/subject.js";

/**
 * A call of protocol v1 on a queue that exists: every request but `hello` and `new`, which make no call on it.
 * `item` is the item of `add`, `done`, `retry` and `forget`.
 */
export interface CallRequest {
  readonly op: "add" | "get" | "done" | "retry" | "forget" | "len" | "shutdown" | "shuttingDown";
  readonly item?: string;
}

/**
 * Makes the call `request` names on `queue` and answers the reply protocol v1 gives for it. The caller's
 * obligation: `request` is well-formed (validated against `requestSchemas`) and its feature offered by `queue`.
 * It does not catch: a call that throws or rejects rejects the promise, and the caller answers `{"ok":false,…}`.
 */
export async function replyOf(queue: Subject<string>, request: CallRequest): Promise<object> {
  const { op } = request;
  const item = request.item as string;
  if (op === "get") return { ok: true, item: (await queue.get()) ?? null };
  if (op === "retry") return { ok: true, requeued: await queue.retry(item) };
  if (op === "len") return { ok: true, len: await readView(queue, "size") };
  if (op === "shuttingDown") return { ok: true, value: (await readView(queue, "shuttingDown")) === true };
  if (op === "shutdown") await queue.shutDown?.();
  else await queue[op](item);
  return { ok: true };
}
