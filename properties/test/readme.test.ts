/**
 * Every TypeScript block of README.md runs as printed, on its own, as a user would run it: stripped of its types,
 * in a separate Node.js process, in a project whose `node_modules/workqueue-spec` is this package as built (`npm
 * test` builds first). The controller runs until it is sent SIGTERM; a block that imports vitest is run by vitest.
 * `npm run check:consumer` runs this file again in a project that installed the packed tarball.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import ts from "typescript";
import { expect, test } from "vitest";
import { databaseUrl } from "./postgres/database.js";

const root = new URL("../../", import.meta.url).pathname;
const readme = readFileSync(join(root, "README.md"), "utf8");

/** The README's TypeScript blocks, each with the heading of its section. */
const blocks: { section: string; code: string }[] = [];
let section = "";
for (const [, heading, code] of readme.matchAll(/^###? (.*)$|^```ts\n([\s\S]*?)^```$/gm)) {
  if (heading !== undefined) section = heading;
  if (code !== undefined) blocks.push({ section, code });
}

/**
 * The project the blocks run in: `WORKQUEUE_CONSUMER`, a project that installed the packed package (see
 * .config/consumer.mjs), or else a fresh one whose dependencies are linked from this repository.
 */
const project = process.env.WORKQUEUE_CONSUMER ?? linkedProject();

function linkedProject(): string {
  const dir = mkdtempSync(join(tmpdir(), "workqueue-readme-"));
  mkdirSync(join(dir, "node_modules"));
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "readme-blocks", type: "module", private: true }));
  symlinkSync(root, join(dir, "node_modules", "workqueue-spec"));
  for (const name of ["fast-check", "ajv", "vitest", "prom-client", "pg"]) {
    symlinkSync(join(root, "node_modules", name), join(dir, "node_modules", name));
  }
  return dir;
}

/** Writes `code`, stripped of its types, as `file` in the project. */
function write(file: string, code: string): string {
  const js = ts.transpileModule(code, {
    compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022, verbatimModuleSyntax: false },
  }).outputText;
  writeFileSync(join(project, file), js);
  return join(project, file);
}

/** Starts `node args…` in the project and collects what it prints. */
function start(
  args: readonly string[],
  env: Record<string, string> = {},
): { child: ChildProcess; out: string[]; err: string[]; exit: Promise<number> } {
  const child = spawn(process.execPath, args, {
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

test("the README has its TypeScript blocks: the API, the controller and the conformance tests", () => {
  expect(blocks.map((block) => block.section)).toEqual([
    "The API at a glance",
    "A controller",
    "Testing it on the virtual clock",
    "Metrics for Prometheus",
    "Many workers on PostgreSQL",
    "Checking your own queue",
  ]);
});

test("the Prometheus block runs on its own and prints the metrics its comments show", async () => {
  const block = blocks.find((b) => b.section === "Metrics for Prometheus");
  const code = block?.code ?? "";
  const shown = [...code.matchAll(/^\/\/ (workqueue_.*)$/gm)].map(([, line]) => line);
  const run = start([write("prometheus.mjs", code)]);
  expect(await run.exit, run.err.join("")).toBe(0);
  expect(shown).toHaveLength(3);
  expect(run.out.join("").split("\n").filter(Boolean).sort()).toEqual([...shown].sort());
});

test("the PostgreSQL block runs on its own on the machine's server and prints what its comments show", async () => {
  const code = blocks.find((b) => b.section === "Many workers on PostgreSQL")?.code ?? "";
  const shown = [...code.matchAll(/^\/\/ (reconciled .*)$/gm)].map(([, line]) => line);
  const pool = new pg.Pool({ connectionString: databaseUrl });
  // The block uses the default schema, "workqueue": made by the block, dropped here before and after.
  const drop = () => pool.query('drop schema if exists "workqueue" cascade');
  await drop();
  try {
    const run = start([write("postgres.mjs", code)], { DATABASE_URL: databaseUrl });
    expect(await run.exit, run.err.join("")).toBe(0);
    expect(shown).toEqual(["reconciled default/web", "reconciled default/db"]);
    expect(run.out.join("").split("\n").filter(Boolean)).toEqual(shown);
  } finally {
    await drop();
    await pool.end();
  }
});

test("the API block runs on its own and prints what its comments say", async () => {
  const block = blocks.find((b) => b.section === "The API at a glance");
  const run = start([write("api.mjs", block?.code ?? "")]);
  expect(await run.exit).toBe(0);
  expect([run.out.join(""), run.err.join("")]).toEqual(["reconciling default/web\n0 0 0\n", ""]);
});

test("the controller runs until SIGTERM, reconciles every key, retries the failing one, then drains and exits 0", async () => {
  const block = blocks.find((b) => b.section === "A controller");
  const run = start([write("controller.mjs", block?.code ?? "")]);
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
  const block = blocks.find((b) => b.section === "Checking your own queue");
  write("conformance.test.mjs", block?.code ?? "");
  write("virtual-clock.test.mjs", blocks.find((b) => b.section === "Testing it on the virtual clock")?.code ?? "");
  const vitest = join(project, "node_modules", "vitest", "vitest.mjs");
  const run = start([vitest, "run", "--root", project, "--reporter", "verbose"]);
  const code = await run.exit;
  const out = run.out.join("");
  expect(code, `${out}\n${run.err.join("")}`).toBe(0);
  expect(out).toContain("the queue conforms to workqueue-spec (contract profile)");
  expect(out).toContain("the queue conforms to workqueue-spec (robust profile)");
  expect(out).toContain("the queue keeps the lifecycle rules of workqueue-spec (with time)");
  expect(out).toContain("✓ virtual-clock.test.mjs > a failed key comes back after its backoff, and not before");
});
