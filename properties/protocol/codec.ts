/**
 * Protocol v1's codec (docs/protocol.md): each request paired with its reply, in both directions. The gate's side
 * writes a call of the spec as a request and reads the reply back as the spec's answer; the implementation's side
 * (`serve`, and the conformance vectors in properties/vectors/) makes a request's call on a queue and writes its
 * answer as the reply. Both sides write a reply with the same table, so what the gate expects is what `serve` says.
 * The schemas that validate the messages are in schema.ts; the child process in session.ts.
 */
import type { Answer, Backoff, Operation } from "../core/operation.js";
import { readView, type Subject } from "../core/subject.js";
import type { ReplyKind, RequestOp } from "./schema.js";

/** A request of protocol v1. */
export type Request = { readonly op: RequestOp } & Record<string, unknown>;

/**
 * A call of protocol v1 on a queue that exists: every request but `hello` and `new`, which make no call on it, and
 * those of the `time` feature, which `serve` does not offer. `item` is the item of `add`, `done`, `retry` and
 * `forget`.
 */
export interface CallRequest {
  readonly op: "add" | "get" | "done" | "retry" | "forget" | "len" | "shutdown" | "shuttingDown";
  readonly item?: string;
}

/**
 * The feature of protocol v1 a request of `op` needs, if any (docs/protocol.md, "Messages"): `len`; `shutdown` and
 * `shuttingDown`; `addAfter`, `advance` and `waiting`, of `time`; and `metrics`. Any other `op` needs none.
 */
export function featureOf(op: string): "len" | "shutdown" | "time" | "metrics" | undefined {
  if (op === "len" || op === "metrics") return op;
  if (op === "shutdown" || op === "shuttingDown") return "shutdown";
  return op === "addAfter" || op === "advance" || op === "waiting" ? "time" : undefined;
}

/** A reply that carries out its request: every kind but `error`, and `hello`, which the handshake reads alone. */
type CarriedReply = Exclude<ReplyKind, "error" | "hello">;

/** Which kind of reply answers a request of each `op`, when the request is carried out. */
export const replyTo: Readonly<Record<RequestOp, Exclude<ReplyKind, "error">>> = {
  hello: "hello",
  new: "ack",
  add: "ack",
  get: "get",
  done: "ack",
  retry: "retry",
  forget: "ack",
  len: "len",
  shutdown: "ack",
  shuttingDown: "value",
  addAfter: "ack",
  advance: "ack",
  waiting: "waiting",
  metrics: "metrics",
};

/** How each kind of reply carries its value: written from the value, and read back from a well-formed reply. */
const carried: Readonly<Record<CarriedReply, { write(value: unknown): object; read(reply: object): unknown }>> = {
  ack: { write: () => ({ ok: true }), read: () => undefined },
  get: {
    write: (value) => ({ ok: true, item: value ?? null }),
    read: (reply) => (reply as { item: string | null }).item ?? undefined,
  },
  retry: {
    write: (value) => ({ ok: true, requeued: value }),
    read: (reply) => (reply as { requeued: boolean }).requeued,
  },
  len: { write: (value) => ({ ok: true, len: value }), read: (reply) => (reply as { len: number }).len },
  value: { write: (value) => ({ ok: true, value }), read: (reply) => (reply as { value: boolean }).value },
  waiting: {
    write: (value) => ({ ok: true, waiting: value }),
    read: (reply) => (reply as { waiting: number }).waiting,
  },
  metrics: {
    write: (value) => ({ ok: true, metrics: value }),
    read: (reply) => (reply as { metrics: object }).metrics,
  },
};

/** The reply to `hello`: the implementation's name and the features it offers. */
export function helloReply(name: string, features: readonly string[]): object {
  return { ok: true, name, features };
}

/** The kind of reply a carried-out request of `op` gets, for `op`s other than `hello`. */
const kindOf = (op: RequestOp) => replyTo[op] as CarriedReply;

// The gate's side.

/** The request for an operation: the spec's verb, except `shutDown`, whose request is `shutdown`. */
export function requestFor(operation: Operation): Request {
  if (operation.verb === "shutDown") return { op: "shutdown" };
  if (operation.verb === "addAfter") return { op: "addAfter", item: operation.item, delayMs: operation.delayMs };
  if (operation.verb === "advance") return { op: "advance", ms: operation.ms };
  return "item" in operation ? { op: operation.verb, item: operation.item } : { op: operation.verb };
}

/** The `new` request of a run: `maxRetries`, and the backoff when the run has one. */
export function opening(maxRetries: number, backoff: Backoff | undefined): Request {
  return backoff === undefined ? { op: "new", maxRetries } : { op: "new", maxRetries, backoff };
}

/** The views that a request reads, each with its request. */
export const viewRequests = {
  size: { op: "len" },
  shuttingDown: { op: "shuttingDown" },
  waiting: { op: "waiting" },
  metrics: { op: "metrics" },
} as const satisfies Readonly<Record<string, Request>>;

/**
 * The answer a reply to `request` gives: an `ok: false` reply is an error answer; any other is read as the kind of
 * reply that answers `request`. The caller's obligation: `reply` was validated against that kind's schema.
 */
export function answerFromReply(request: Request, reply: object): Answer {
  if ((reply as { ok?: unknown }).ok === false) {
    return { kind: "error", name: "Error", message: (reply as { error: string }).error };
  }
  return { kind: "value", value: carried[kindOf(request.op)].read(reply) };
}

/** The reply protocol v1 gives to a request of `op` that answered `answer`: what the model's answer expects. */
export function replyToAnswer(op: RequestOp, answer: Answer): object {
  if (answer.kind === "error") return { ok: false, error: answer.message };
  return carried[kindOf(op)].write(answer.value);
}

// The implementation's side.

/** The call each call request makes on a queue, with the value its reply carries. */
const calls: Readonly<Record<CallRequest["op"], (queue: Subject<string>, item: string) => unknown>> = {
  add: (queue, item) => queue.add(item),
  get: (queue) => queue.get(),
  done: (queue, item) => queue.done(item),
  retry: (queue, item) => queue.retry(item),
  forget: (queue, item) => queue.forget(item),
  len: (queue) => readView(queue, "size"),
  shutdown: (queue) => queue.shutDown?.(),
  shuttingDown: async (queue) => (await readView(queue, "shuttingDown")) === true,
};

/**
 * Makes the call `request` names on `queue` and answers the reply protocol v1 gives for it. The caller's
 * obligation: `request` is well-formed (validated against `requestSchemas`) and its feature offered by `queue`.
 * It does not catch: a call that throws or rejects rejects the promise, and the caller answers `{"ok":false,…}`.
 */
export async function replyOf(queue: Subject<string>, request: CallRequest): Promise<object> {
  const value = await calls[request.op](queue, request.item as string);
  return carried[kindOf(request.op)].write(value);
}
