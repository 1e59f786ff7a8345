/**
 * The documents say what the code does: docs/protocol.md prints every schema the gate validates with, and the
 * usage the command prints; the documents name the version package.json has; the index of the API docs lists every
 * entry point the package exports; every exchange of its time and metrics sections is what the model answers.
 */
import { readFileSync } from "node:fs";
import { expect, test } from "vitest";
import { backoffModel, WorkQueueModel } from "../../../model/index.js";
import { exitCodes } from "../../cli/exit-codes.js";
import { usage } from "../../cli/gate.js";
import type { Operation } from "../../core/operation.js";
import { stringItems } from "../../core/universes.js";
import { firstUnexplainedRound, type Made } from "../../overlap/runs.js";
import { answerFromReply, type CallRequest, type Request, replyOf } from "../../protocol/codec.js";
import { concurrentSchemas, replySchemas, requestSchemas, validators } from "../../protocol/schema.js";

const read = (file: string) => readFileSync(new URL(`../../../${file}`, import.meta.url), "utf8");
const protocol = read("docs/protocol.md");
const manifest = JSON.parse(read("package.json")) as {
  version: string;
  homepage: string;
  exports: Record<string, unknown>;
};

test.each([
  ...Object.entries(requestSchemas).map(([op, schema]) => [`\`${op}\` request`, schema] as const),
  ...Object.entries(replySchemas).map(([kind, schema]) => [`\`${kind}\` reply`, schema] as const),
  ...Object.entries(concurrentSchemas).map(([kind, schema]) => [`concurrent ${kind}`, schema] as const),
])("docs/protocol.md prints the %s schema as the gate validates it", (heading, schema) => {
  expect(protocol).toContain(`#### ${heading}\n\n\`\`\`json\n${JSON.stringify(schema, null, 2)}\n\`\`\``);
});

test.each(Object.entries(exitCodes))("docs/protocol.md and --help give exit code %s the number %i", (meaning, code) => {
  expect(protocol).toMatch(new RegExp(`^\\| ${code} \\| .*${meaning}`, "m"));
  expect(usage).toMatch(new RegExp(`^  ${code}  `, "m"));
});

test.each(["README.md", "docs/protocol.md", "docs/spec.md", "docs/api.md"])(
  "%s names no version of workqueue-spec but package.json's",
  (file) => {
    const named = [...read(file).matchAll(/workqueue-spec[- ]v?(\d+\.\d+\.\d+\S*?)(?:\.tgz)?\b/g)].map(([, v]) => v);
    expect(named).toEqual(named.map(() => manifest.version));
  },
);

test("README.md and docs/protocol.md name the tarball `npm pack` writes", () => {
  for (const file of ["README.md", "docs/protocol.md"])
    expect(read(file)).toContain(`workqueue-spec-${manifest.version}.tgz`);
});

test("docs/api.md, the index of the API docs, lists every entry point by its import path, and links the README", () => {
  const api = read("docs/api.md");
  const entries = Object.keys(manifest.exports)
    .filter((path) => !path.includes("*") && !path.endsWith(".json"))
    .map((path) => `workqueue-spec${path.slice(1)}`);
  const listed = [...api.matchAll(/^\| \{@link "([^"]+)"! \| `([^`]+)`\} \|/gm)].map(([, target, shown]) => {
    expect(shown).toBe(target);
    return target;
  });
  expect(listed.sort()).toEqual(entries.sort());
  expect(api).toContain(`[the package's README](${manifest.homepage})`);
});

test("the README's Development section names the server, the database and the variables the suites read", () => {
  const readme = read("README.md");
  const development = readme.slice(readme.indexOf("\n## Development\n"));
  const database = read("properties/test/postgres/database.ts");
  const [, variable, user, host, name] =
    /process\.env\.(\w+) \?\? "postgres:\/\/(\w+)@([\d.:]+)\/(\w+)"/.exec(database) ?? [];
  expect(development).toContain(`**PostgreSQL** at \`${host}\`, user \`${user}\``);
  expect(development).toContain(`database \`${name}\``);
  const settings = read("properties/test/settings.ts");
  for (const used of [variable, "WORKQUEUE_SEED", "WORKQUEUE_RUNS_SCALE"]) {
    expect(settings + database).toContain(`env.${used}`);
    expect(development).toContain(`\`${used}`);
  }
});

/** A request of protocol v1 as docs/protocol.md prints it, with the time feature's fields. */
interface TimedRequest {
  readonly op: string;
  readonly item?: string;
  readonly maxRetries?: number;
  readonly backoff?: { readonly baseMs: number; readonly maxMs: number };
  readonly delayMs?: number;
  readonly ms?: number;
}

/** What the model answers to `request`, as protocol v1 writes it; `new` makes the model. */
async function modelReply(queue: { model?: WorkQueueModel<string> }, request: TimedRequest): Promise<object> {
  const { op, item = "", backoff } = request;
  if (op === "new") {
    const rateLimiter = backoff === undefined ? undefined : backoffModel(backoff.baseMs, backoff.maxMs);
    queue.model = new WorkQueueModel<string>({ maxRetries: request.maxRetries as number, rateLimiter });
    return { ok: true };
  }
  const model = queue.model as WorkQueueModel<string>;
  if (op === "addAfter") model.addAfter(item, request.delayMs as number);
  else if (op === "advance") model.advance(request.ms as number);
  else if (op === "waiting") return { ok: true, waiting: model.waiting };
  else if (op === "metrics") return { ok: true, metrics: model.metrics() };
  else return replyOf(model, request as CallRequest);
  return { ok: true };
}

test.each([
  ["Time", 7],
  ["Metrics", 2],
])(
  "every exchange of docs/protocol.md's %s section is what the model answers, in valid messages",
  async (name, least) => {
    const start = protocol.indexOf(`\n## ${name}, in the protocol's words\n`);
    expect(start).toBeGreaterThan(0);
    const section = protocol.slice(start, protocol.indexOf("\n## ", start + 1));
    const exchanges = [...section.matchAll(/^```\n([\s\S]*?)^```$/gm)].map(([, text]) => text as string);
    expect(exchanges.length).toBeGreaterThanOrEqual(least);
    const { request: validRequest } = validators();
    for (const exchange of exchanges) {
      const lines = exchange.trimEnd().split("\n");
      const queue: { model?: WorkQueueModel<string> } = {};
      const printed: string[] = [];
      const answered: string[] = [];
      for (let i = 0; i < lines.length; i += 2) {
        const request = JSON.parse((lines[i] as string).replace(/^→ /, "")) as TimedRequest;
        expect(validRequest[request.op as keyof typeof validRequest]?.(request), lines[i]).toBe(true);
        printed.push(lines[i] as string, lines[i + 1] as string);
        answered.push(lines[i] as string, `← ${JSON.stringify(await modelReply(queue, request))}`);
      }
      expect(printed, "an exchange of docs/protocol.md is not what the model answers").toEqual(answered);
    }
  },
);

test("docs/protocol.md says the gate never sends a lone surrogate, and its string items hold none", () => {
  expect(protocol).toContain("the gate never sends a lone surrogate");
  const items = [...stringItems.few, ...Array.from({ length: 20_000 }, (_, i) => stringItems.many(i))];
  // A lone surrogate is a high one not followed by a low one, or a low one not after a high one.
  const lone = items.filter((item) =>
    /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(String(item)),
  );
  expect(lone).toEqual([]);
});

test("the exchange of docs/protocol.md's concurrent rounds is valid and linearizable, as the gate checks it", () => {
  const start = protocol.indexOf("\n## Concurrent rounds\n");
  const section = protocol.slice(start, protocol.indexOf("\n## ", start + 1));
  const [exchange = ""] = [...section.matchAll(/^```\n([\s\S]*?)^```$/gm)].map(([, text]) => text as string);
  const { request: validRequest } = validators();
  const { request: isConcurrent, reply: isTagged } = validators().concurrent;
  const lines = exchange.trimEnd().split("\n");
  const opening = JSON.parse((lines[0] as string).slice(2)) as { maxRetries: number };
  const requests = new Map<number, { request: Request; round: number; invokedAt: number }>();
  const made: Made[] = [];
  let [round, clock, replying] = [0, 0, true];
  for (const line of lines.slice(2)) {
    const message = JSON.parse(line.slice(2)) as Request & { id: number };
    if (line.startsWith("→")) {
      if (replying) round++;
      replying = false;
      expect(validRequest[message.op]?.(message), line).toBe(true);
      expect(isConcurrent(message), line).toBe(true);
      requests.set(message.id, { request: message, round, invokedAt: clock++ });
      continue;
    }
    replying = true;
    expect(isTagged(message), line).toBe(true);
    const asked = requests.get(message.id);
    if (asked === undefined) throw new Error(`a reply to no request: ${line}`);
    const { op, item } = asked.request as { op: string; item?: string };
    const operation = op === "len" ? { verb: "size" as const } : ({ verb: op, item } as Operation);
    const answer = answerFromReply(asked.request, message);
    made.push({ ...asked, call: op, afterPrevious: false, answer, answeredAt: clock++, operation });
  }
  expect(made).toHaveLength(6);
  expect(firstUnexplainedRound(made, opening.maxRetries)).toBeUndefined();
  // The first round's get answering "a" too, as a racy queue's might, leaves the second round's "a" unexplained.
  const first = made.find((m) => m.call === "get" && m.round === 1) as Made;
  const wrong = made.map((m) => (m === first ? { ...m, answer: { kind: "value" as const, value: "a" } } : m));
  expect(firstUnexplainedRound(wrong, opening.maxRetries)).toBe(2);
});
