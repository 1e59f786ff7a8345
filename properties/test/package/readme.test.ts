/**
 * Every TypeScript block of README.md runs as printed, on its own, the way the README says to run it: saved as a
 * `.ts` file in an ESM project whose `node_modules/workqueue-spec` is this package as built (`npm test` builds
 * first), and run with `npx tsx file.ts`; a block that imports vitest is a test file, run with `npx vitest run`. The
 * controller runs until it is sent SIGTERM. `npm run check:consumer` runs this file again in a project that
 * installed the packed tarball with the README's install lines.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { expect, test } from "vitest";
import { databaseUrl } from "../postgres/database.js";

const root = new URL("../../../", import.meta.url).pathname;
const readme = readFileSync(join(root, "README.md"), "utf8");

/** The README's TypeScript blocks, each with the heading of its section. */
const blocks: { section: string; code: string }[] = [];
let section = "";
for (const [, heading, code] of readme.matchAll(/^###? (.*)$|^```ts\n([\s\S]*?)^```$/gm)) {
  if (heading !== undefined) section = heading;
  if (code !== undefined) blocks.push({ section, code });
}

/** The code of the block in `heading`'s section. */
const block = (heading: string) => blocks.find((b) => b.section === heading)?.code ?? "";

/**
 * The project the blocks run in: `WORKQUEUE_CONSUMER`, a project that installed the packed package (see
 * .config/consumer.mjs), or else a fresh one whose dependencies, and the `tsx` and `vitest` commands, are linked
 * from this repository.
 */
const project = process.env.WORKQUEUE_CONSUMER ?? linkedProject();

function linkedProject(): string {
  const dir = mkdtempSync(join(tmpdir(), "workqueue-readme-"));
  mkdirSync(join(dir, "node_modules", ".bin"), { recursive: true });
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "readme-blocks", type: "module", private: true }));
  symlinkSync(root, join(dir, "node_modules", "workqueue-spec"));
  for (const name of ["fast-check", "ajv", "vitest", "prom-client", "pg", "tsx"]) {
    symlinkSync(join(root, "node_modules", name), join(dir, "node_modules", name));
  }
  symlinkSync(join(root, "node_modules/tsx/dist/cli.mjs"), join(dir, "node_modules/.bin/tsx"));
  symlinkSync(join(root, "node_modules/vitest/vitest.mjs"), join(dir, "node_modules/.bin/vitest"));
  return dir;
}

/** Writes `code` as `file` in the project. */
function write(file: string, code: string): string {
  writeFileSync(join(project, file), code);
  return file;
}

/** Starts `command args…` in the project and collects what it prints. */
function start(
  command: string,
  args: readonly string[],
  env: Record<string, string> = {},
): { child: ChildProcess; out: string[]; err: string[]; exit: Promise<number> } {
  const child = spawn(command, args, {
    cwd: project,
    env: { ...process.env, NO_COLOR: "1", CI: "1", ...env },
  });
  const out: string[] = [];
  const err: string[] = [];
  child.stdout?.setEncoding("utf8").on("data", (chunk: string) => out.push(chunk));
  child.stderr?.setEncoding("utf8").on("data", (chunk: string) => err.push(chunk));
  const exit = new Promise<number>((resolve) => child.once("close", (code) => resolve(code ?? -1)));
  return { child, out, err, exit };
}

/** Runs `code` as the README says: saved as `file`, then `npx tsx file`. */
const tsx = (file: string, code: string, env: Record<string, string> = {}) =>
  start("npx", ["tsx", write(file, code)], env);

test("the README says how to run its blocks, as this file runs them", () => {
  expect(readme).toContain("run `npx tsx example.ts`");
  expect(readme).toContain("save them as `example.test.ts` and run `npx vitest run`");
});

test("the README has its TypeScript blocks: the API, the controller and the conformance tests", () => {
  expect(blocks.map((block) => block.section)).toEqual([
    "The API at a glance",
    "A controller",
    "Testing it on the virtual clock",
    "Metrics for Prometheus",
    "Many workers on PostgreSQL",
    "Metrics on PostgreSQL",
    "Checking your own queue",
  ]);
});

test("the Prometheus block runs on its own and prints the metrics its comments show", async () => {
  const code = block("Metrics for Prometheus");
  const shown = [...code.matchAll(/^\/\/ (workqueue_.*)$/gm)].map(([, line]) => line);
  const run = tsx("prometheus.ts", code);
  expect(await run.exit, run.err.join("")).toBe(0);
  expect(shown).toHaveLength(3);
  expect(run.out.join("").split("\n").filter(Boolean).sort()).toEqual([...shown].sort());
});

test("the PostgreSQL block runs on its own on the machine's server and prints what its comments show", async () => {
  const code = block("Many workers on PostgreSQL");
  const shown = [...code.matchAll(/^\/\/ (reconciled .*)$/gm)].map(([, line]) => line);
  const pool = new pg.Pool({ connectionString: databaseUrl });
  // The block uses the default schema, "workqueue": made by the block, dropped here before and after.
  const drop = () => pool.query('drop schema if exists "workqueue" cascade');
  await drop();
  try {
    const run = tsx("worker.ts", code, { DATABASE_URL: databaseUrl });
    expect(await run.exit, run.err.join("")).toBe(0);
    expect(shown).toEqual(["reconciled default/web", "reconciled default/db"]);
    expect(run.out.join("").split("\n").filter(Boolean)).toEqual(shown);
  } finally {
    await drop();
    await pool.end();
  }
});

test("the PostgreSQL metrics block runs on its own on the machine's server and prints the metrics its comments show", async () => {
  const code = block("Metrics on PostgreSQL");
  const shown = [...code.matchAll(/^\/\/ (workqueue_.*)$/gm)].map(([, line]) => line);
  const pool = new pg.Pool({ connectionString: databaseUrl });
  const drop = () => pool.query('drop schema if exists "workqueue" cascade'); // the block's schema, as above
  await drop();
  try {
    const run = tsx("metrics.ts", code, { DATABASE_URL: databaseUrl });
    expect(await run.exit, run.err.join("")).toBe(0);
    expect(shown).toHaveLength(5);
    expect(run.out.join("").split("\n").filter(Boolean)).toEqual(shown);
    expect(run.err.join("")).toBe("StaleLeaseError\n");
  } finally {
    await drop();
    await pool.end();
  }
});

test("the API block runs on its own and prints what its comments say", async () => {
  const run = tsx("api.ts", block("The API at a glance"));
  expect(await run.exit).toBe(0);
  expect([run.out.join(""), run.err.join("")]).toEqual(["reconciling default/web\n0 0 0\n", ""]);
});

test("the controller runs until SIGTERM, reconciles every key, retries the failing one, then drains and exits 0", async () => {
  // The project's tsx itself, as `npx tsx` runs it: npm does not pass a SIGTERM on to the command it runs.
  const run = start(join(project, "node_modules/.bin/tsx"), [write("controller.ts", block("A controller"))]);
  const lines = () => [...run.out, ...run.err].join("").split("\n").filter(Boolean);
  // It keeps running (the resync interval keeps the process up) until it has printed its five lines.
  await new Promise<void>((resolve, reject) => {
    const check = () => (lines().length >= 5 ? resolve() : undefined);
    run.child.stdout?.on("data", check);
    run.child.stderr?.on("data", check);
    run.exit.then((code) => reject(new Error(`exited with ${code} before SIGTERM: ${lines().join(" | ")}`)));
  });
  run.child.kill("SIGTERM");
  expect(await run.exit).toBe(0);
  expect(run.out.join("").split("\n").filter(Boolean)).toEqual([
    "reconciled default/web",
    "reconciled default/web",
    "reconciled default/db",
    "reconciled default/cache",
    "stopped",
  ]);
  expect(run.err.join("")).toBe("default/db failed: Error: database not ready\n");
});

test("the conformance block (with its lifecycle test) and the virtual-clock block pass when vitest runs them", async () => {
  write("conformance.test.ts", block("Checking your own queue"));
  write("virtual-clock.test.ts", block("Testing it on the virtual clock"));
  const run = start("npx", ["vitest", "run", "--reporter", "verbose"]);
  const code = await run.exit;
  const out = run.out.join("");
  expect(code, `${out}\n${run.err.join("")}`).toBe(0);
  expect(out).toContain("the queue conforms to workqueue-spec (contract profile)");
  expect(out).toContain("the queue conforms to workqueue-spec (robust profile)");
  expect(out).toContain("the queue keeps the lifecycle rules of workqueue-spec (with time)");
  expect(out).toContain("✓ virtual-clock.test.ts > a failed key comes back after its backoff, and not before");
});
