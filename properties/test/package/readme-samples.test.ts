/**
 * The README's printed output is what the code prints: its `npm start` sample is the output of the command it
 * names, run here on the build (`npm test` builds first). When a change makes a run do something else, paste the
 * new output into the README.
 */
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { expect, test } from "vitest";

const root = new URL("../../../", import.meta.url).pathname;
const readme = readFileSync(join(root, "README.md"), "utf8");

test("the README's npm start sample is what the command it names prints", { timeout: 240_000 }, () => {
  const [, args = "", sample] = /`npm start -- ([^`]+)` prints exactly this[^`]*```\n([\s\S]*?)```/.exec(readme) ?? [];
  expect(args).toBe("--seed 42");
  const start = join(root, "dist/properties/cli/start.js");
  const run = spawnSync(process.execPath, [start, ...args.split(" ")], {
    encoding: "utf8",
    env: { ...process.env, CI: "1" },
  });
  expect([run.status, run.stderr]).toEqual([0, ""]);
  expect(run.stdout, "the README's npm start sample is stale: paste this output in").toBe(sample);
});
