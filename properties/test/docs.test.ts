/**
 * The documents say what the code does: docs/protocol.md prints every schema the gate validates with, and the
 * usage the command prints.
 */
import { readFileSync } from "node:fs";
import { expect, test } from "vitest";
import { exitCodes } from "../cli/exit-codes.js";
import { usage } from "../cli/gate.js";
import { replySchemas, requestSchemas } from "../protocol/schema.js";

const protocol = readFileSync(new URL("../../docs/protocol.md", import.meta.url), "utf8");

test.each([
  ...Object.entries(requestSchemas).map(([op, schema]) => [`\`${op}\` request`, schema] as const),
  ...Object.entries(replySchemas).map(([kind, schema]) => [`\`${kind}\` reply`, schema] as const),
])("docs/protocol.md prints the %s schema as the gate validates it", (heading, schema) => {
  expect(protocol).toContain(`#### ${heading}\n\n\`\`\`json\n${JSON.stringify(schema, null, 2)}\n\`\`\``);
});

test.each(Object.entries(exitCodes))("docs/protocol.md and --help give exit code %s the number %i", (meaning, code) => {
  expect(protocol).toMatch(new RegExp(`^\\| ${code} \\| .*${meaning}`, "m"));
  expect(usage).toMatch(new RegExp(`^  ${code}  `, "m"));
});
