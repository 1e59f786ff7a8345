/**
 * The replay that the vitest helpers print works when pasted: run as printed, in a project whose tests use wrong
 * queues (fixtures/vitest-project), it runs the failing test and no other — not even the test of the same helper in
 * another file, which passes — and fails the same way.
 */
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { expect, test } from "vitest";

const project = new URL("../fixtures/vitest-project/", import.meta.url).pathname;
const readme = readFileSync(new URL("../../../README.md", import.meta.url), "utf8");

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

/** The fixture project's tests, run once: three fail, two pass. */
let firstRun: { status: number | null; out: string } | undefined;
const first = () => {
  firstRun ??= run("npx vitest run");
  return firstRun;
};

/**
 * `sample` as a regular expression over what was printed: `…` stands for any text within a line, a line of only
 * `…` for any lines, and a duration (`0.2 s`) for any duration.
 */
function sampleOf(sample: string): RegExp {
  const lines = sample
    .trimEnd()
    .split("\n")
    .map((line) =>
      /^\s*…$/.test(line)
        ? "(?:.*\\n)*?"
        : `${literally(line)
            .replaceAll("…", ".*?")
            .replace(/\d+\\\.\d+ s\b/g, "\\d+(?:\\.\\d+)? s")}\\n`,
    );
  return new RegExp(`^(?:Error: )?${lines.join("")}`, "m");
}

test("the README's counterexamples are what the vitest helpers print for the wrong queues of its example", () => {
  const section = readme.slice(readme.indexOf("## Reading and replaying a counterexample"));
  const samples = [...section.matchAll(/^```\n([\s\S]*?)^```$/gm)].map(([, text]) => text as string).slice(0, 2);
  expect(samples.map((sample) => sample.split("\n")[0]?.slice(0, 30))).toEqual([
    "✗ robust profile does not conf",
    "the queue breaks a lifecycle r",
  ]);
  for (const sample of samples) expect(first().out, "the README's sample is stale").toMatch(sampleOf(sample));
});

test("each replay the vitest helpers print, run as printed, runs only its test and fails the same way", () => {
  const { out, status } = first();
  expect(status).toBe(1);
  expect(out).toMatch(/Tests {2}3 failed \| 2 passed \(5\)/);
  const cases = [
    "✗ contract profile does not conform:",
    "✗ robust profile does not conform:",
    "the queue breaks a lifecycle rule:",
  ];
  for (const header of cases) {
    const found = failure(out, header);
    expect(found, header).toBeDefined();
    const printed = replayOf(out, found ?? "");
    expect(printed).toMatch(/^WORKQUEUE_REPLAY=\S+ npx vitest run -t .+$/);
    const again = run(printed);
    expect([again.status, failure(again.out, header)], printed).toEqual([1, found]);
    // right.spec.ts's tests, named as wrong.spec.ts's but for their file and line, are skipped too.
    expect(again.out).toMatch(/Tests {2}1 failed \| 4 skipped \(5\)/);
  }
}, 300_000); // a fresh vitest process per replay: over 60 s under a CPU hog (npm run test:loaded, 2026-12-06)
