/**
 * The replay that the vitest helpers print works when pasted: run as printed, in a project whose tests use wrong
 * queues (fixtures/vitest-project), it runs the failing test and no other, and fails the same way.
 */
import { spawnSync } from "node:child_process";
import { expect, test } from "vitest";

const project = new URL("fixtures/vitest-project/", import.meta.url).pathname;

/** Runs `command` in a shell in the fixture project, as a user pastes it, and captures what it printed. */
function run(command: string) {
  const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: "1" };
  for (const name of ["WORKQUEUE_REPLAY", "VITEST", "VITEST_MODE", "VITEST_POOL_ID", "VITEST_WORKER_ID", "NODE_ENV"])
    delete env[name];
  const { status, stdout, stderr } = spawnSync("sh", ["-c", command], { cwd: project, env, encoding: "utf8" });
  return { status, out: `${stdout}${stderr}` };
}

/** `text` as a regular expression that matches it literally. */
const literally = (text: string) => text.replace(/[\\^$.*+?()[\]{}|]/g, "\\$&");

/** The report of the failure that begins with `first`, up to how it was found: what must be the same again. */
const failure = (out: string, first: string) =>
  new RegExp(`^(?:Error: )?${literally(first)}[\\s\\S]*?(?=\\n {2}found after)`, "m").exec(out)?.[0];

/** The replay printed below `found`. */
const replayOf = (out: string, found: string) =>
  new RegExp(`^${literally(found)}[\\s\\S]*?replay: (.+)$`, "m").exec(out)?.[1] ?? "";

test("each replay the vitest helpers print, run as printed, runs only its test and fails the same way", () => {
  const first = run("npx vitest run");
  expect(first.status).toBe(1);
  const cases = [
    "✗ contract profile does not conform:",
    "✗ robust profile does not conform:",
    "the queue breaks a lifecycle rule:",
  ];
  for (const header of cases) {
    const found = failure(first.out, header);
    expect(found, header).toBeDefined();
    const printed = replayOf(first.out, found ?? "");
    expect(printed).toMatch(/^WORKQUEUE_REPLAY=\S+ npx vitest run -t .+$/);
    const again = run(printed);
    expect([again.status, failure(again.out, header)], printed).toEqual([1, found]);
    expect(again.out).toMatch(/Tests {2}1 failed \| 2 skipped \(3\)/);
  }
}, 300_000); // a fresh vitest process per replay: over 60 s under a CPU hog (npm run test:loaded, 2026-12-06)
