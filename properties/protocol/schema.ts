/**
 * Protocol v1: the JSON Schema of every message, as docs/protocol.md prints them, and the validators the gate
 * checks replies with. A request is one JSON object on one line of the implementation's stdin; its reply is one
 * JSON object on one line of its stdout.
 */
import type { Ajv, ErrorObject, ValidateFunction } from "ajv";
import { loadPeer } from "../core/peers.js";

/** The schema dialect of every message schema. */
const dialect = "http://json-schema.org/draft-07/schema#";

/** A request with an `op` and, optionally, more required properties. */
function request(op: string, properties: Record<string, object> = {}) {
  return {
    $schema: dialect,
    title: `${op} request`,
    type: "object",
    properties: { op: { const: op }, ...properties },
    required: ["op", ...Object.keys(properties)],
  } as const;
}

/** A successful reply: `ok` is `true`, with the given required properties. Extra properties are allowed. */
function reply(title: string, properties: Record<string, object> = {}) {
  return {
    $schema: dialect,
    title,
    type: "object",
    properties: { ok: { const: true }, ...properties },
    required: ["ok", ...Object.keys(properties)],
  } as const;
}

const item = { type: "string" } as const;

/** A count of docs/spec.md §19: a non-negative integer. */
const count = { type: "integer", minimum: 0 } as const;

/** A time of docs/spec.md §19 in milliseconds: a non-negative number, fractions allowed. */
const ms = { type: "number", minimum: 0 } as const;

/** A duration metric of docs/spec.md §19.3 and §19.4: how many observations, and their sum in milliseconds. */
const observations = {
  type: "object",
  properties: { count, sumMs: ms },
  required: ["count", "sumMs"],
} as const;

/** The metrics of docs/spec.md §19, in the shape of `WorkQueueMetrics` (and of the model's reading). */
const metrics = {
  type: "object",
  properties: {
    depth: count,
    adds: count,
    retries: count,
    queueDuration: observations,
    workDuration: observations,
    unfinishedWorkMs: ms,
    longestRunningMs: ms,
  },
  required: ["depth", "adds", "retries", "queueDuration", "workDuration", "unfinishedWorkMs", "longestRunningMs"],
} as const;

/**
 * A JSON Schema (draft-07), as a plain object.
 *
 * @internal
 */
export type JsonSchema = Readonly<Record<string, unknown>>;

/**
 * The `op`s of protocol v1's requests; `len`, `shutdown` and `shuttingDown`, `addAfter`, `advance` and `waiting`
 * (the `time` feature), and `metrics` (the `metrics` feature, read only with `time`) belong to announced features.
 *
 * @internal
 */
export type RequestOp =
  | "hello"
  | "new"
  | "add"
  | "get"
  | "done"
  | "retry"
  | "forget"
  | "len"
  | "shutdown"
  | "shuttingDown"
  | "addAfter"
  | "advance"
  | "waiting"
  | "metrics";

/**
 * The kinds of reply of protocol v1.
 *
 * @internal
 */
export type ReplyKind = "hello" | "ack" | "get" | "retry" | "len" | "value" | "waiting" | "metrics" | "error";

/**
 * The schema of every request the gate sends, by `op`.
 *
 * @example
 * ```ts
 * import { requestSchemas } from "./schema.js";
 *
 * console.log(JSON.stringify(requestSchemas.add)); // the schema of {"op":"add","item":"…"}
 * ```
 *
 * @internal
 */
export const requestSchemas: Readonly<Record<RequestOp, JsonSchema>> = {
  hello: request("hello"),
  new: {
    ...request("new", { maxRetries: { type: "integer", minimum: 0 } }),
    properties: {
      op: { const: "new" },
      maxRetries: { type: "integer", minimum: 0 },
      backoff: {
        type: "object",
        properties: { baseMs: { type: "number", minimum: 0 }, maxMs: { type: "number", minimum: 0 } },
        required: ["baseMs", "maxMs"],
      },
    },
  },
  add: request("add", { item }),
  get: request("get"),
  done: request("done", { item }),
  retry: request("retry", { item }),
  forget: request("forget", { item }),
  len: request("len"),
  shutdown: request("shutdown"),
  shuttingDown: request("shuttingDown"),
  addAfter: request("addAfter", { item, delayMs: { type: "number" } }),
  advance: request("advance", { ms: { type: "number", minimum: 0 } }),
  waiting: request("waiting"),
  metrics: request("metrics"),
};

/**
 * The schema of every kind of reply; `error` may answer any request.
 *
 * @example
 * ```ts
 * import { replySchemas } from "./schema.js";
 *
 * console.log(replySchemas.get.required); // ["ok", "item"]
 * ```
 *
 * @internal
 */
export const replySchemas: Readonly<Record<ReplyKind, JsonSchema>> = {
  hello: reply("hello reply", { name: { type: "string" }, features: { type: "array", items: { type: "string" } } }),
  ack: reply("acknowledgement: the reply to new, add, done and forget"),
  get: reply("get reply", { item: { type: ["string", "null"] } }),
  retry: reply("retry reply", { requeued: { type: "boolean" } }),
  len: reply("len reply", { len: { type: "integer", minimum: 0 } }),
  value: reply("shuttingDown reply", { value: { type: "boolean" } }),
  waiting: reply("waiting reply", { waiting: { type: "integer", minimum: 0 } }),
  metrics: reply("metrics reply", { metrics }),
  error: {
    $schema: dialect,
    title: "error reply: the request was not carried out",
    type: "object",
    properties: { ok: { const: false }, error: { type: "string" } },
    required: ["ok", "error"],
  },
};

/**
 * The `id` that a request carries in a concurrent round, and its reply with it (the `concurrent` feature): each is
 * also valid under the schema of its `op`, or of its kind of reply.
 *
 * @internal
 */
export const concurrentSchemas: Readonly<Record<"request" | "reply", JsonSchema>> = {
  request: {
    $schema: dialect,
    title: "concurrent request: a call request of add, get, done, retry, forget or len, with an id",
    type: "object",
    properties: { op: { enum: ["add", "get", "done", "retry", "forget", "len"] }, id: { type: "integer", minimum: 0 } },
    required: ["op", "id"],
  },
  reply: {
    $schema: dialect,
    title: "concurrent reply: the reply to a concurrent request, with its id",
    type: "object",
    properties: { id: { type: "integer", minimum: 0 } },
    required: ["id"],
  },
};

/** The compiled validators of every reply and request schema. */
export interface Validators {
  /** By kind of reply. */
  readonly reply: Readonly<Record<ReplyKind, ValidateFunction>>;
  /** By `op` (for implementations that serve the protocol). */
  readonly request: Readonly<Record<RequestOp, ValidateFunction>>;
  /** The `id` of a request of a concurrent round, and of its reply. */
  readonly concurrent: Readonly<Record<"request" | "reply", ValidateFunction>>;
}

let compiled: Validators | undefined;

/**
 * The validators, compiled with Ajv on first use: the protocol needs `ajv`, the in-process gate does not.
 *
 * @throws Error naming `ajv` and how to install it, when it is missing.
 */
export function validators(): Validators {
  if (compiled !== undefined) return compiled;
  const { Ajv: Compiler } = loadPeer<{ Ajv: typeof Ajv }>("ajv", "The wire protocol of workqueue-spec");
  const ajv = new Compiler({ allErrors: true, strict: true });
  const compile = <K extends string>(schemas: Readonly<Record<K, JsonSchema>>) =>
    Object.fromEntries(
      Object.entries(schemas).map(([name, schema]) => [name, ajv.compile(schema as object)]),
    ) as Record<K, ValidateFunction>;
  compiled = {
    reply: compile(replySchemas),
    request: compile(requestSchemas),
    concurrent: compile(concurrentSchemas),
  };
  return compiled;
}

/** A validator's errors in words: `/requeued must be boolean; must have required property 'ok'`. */
export function describeErrors(errors: readonly ErrorObject[] | null | undefined): string {
  return (errors ?? []).map((e) => `${e.instancePath || "the reply"} ${e.message ?? "is invalid"}`).join("; ");
}
