// `npm run check:consumer`: the package as a stranger gets it. Packs it, installs the tarball into two
// fresh projects — one that only wants the queue, one that also wants the gate — and checks that the installs
// print no warning, that the queue alone brings no other package, that every README block runs there as printed
// (properties/test/readme.test.ts, pointed at the project), that the README's TypeScript type-checks there, and
// that `npx workqueue-conformance` checks the shipped Python example, and that the Prometheus exporter says how to
// install prom-client when it is missing and exports when it is there. Exits 1 at the first thing that fails, saying what.
import { execFileSync, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const root = new URL("..", import.meta.url).pathname;
const scratch = mkdtempSync(join(tmpdir(), "workqueue-consumer-"));

function fail(message) {
  console.error(`check:consumer: ${message}`);
  process.exit(1);
}

/** Runs a command, echoing it, and returns what it printed on stdout and stderr together. */
function run(command, args, cwd, env = {}) {
  console.log(`check:consumer: ${cwd === root ? "" : `(in ${cwd}) `}${command} ${args.join(" ")}`);
  try {
    return execFileSync(command, args, {
      cwd,
      encoding: "utf8",
      env: { ...process.env, ...env },
      stdio: ["ignore", "pipe", "pipe"],
      maxBuffer: 64 << 20,
    });
  } catch (error) {
    fail(`\`${command} ${args.join(" ")}\` failed:\n${error.stdout ?? ""}${error.stderr ?? ""}`);
  }
}

/** Runs `npm` with its warnings on stdout too, and fails if it printed any. */
function npmQuiet(args, cwd) {
  const output = run("sh", ["-c", `npm ${args.join(" ")} 2>&1`], cwd);
  const warnings = output.split("\n").filter((line) => /^npm (warn|WARN)/.test(line));
  if (warnings.length > 0) fail(`\`npm ${args.join(" ")}\` warned:\n${warnings.join("\n")}`);
  return output;
}

/** A fresh ESM project. */
function project(name) {
  const dir = join(scratch, name);
  mkdirSync(dir);
  writeFileSync(join(dir, "package.json"), `${JSON.stringify({ name, private: true, type: "module" }, null, 2)}\n`);
  return dir;
}

const packed = JSON.parse(npmQuiet(["pack", "--json", "--pack-destination", scratch], root).replace(/^[^[]*/s, ""));
const tarball = join(scratch, packed[0].filename);
console.log(`check:consumer: packed ${packed[0].filename}: ${packed[0].entryCount} files, ${packed[0].size} bytes`);

// A user of the queue alone: nothing else is installed.
const queueOnly = project("queue-only");
npmQuiet(["install", tarball], queueOnly);
const installed = run("npm", ["ls", "--omit=dev", "--all", "--parseable"], queueOnly).trim().split("\n").slice(1);
if (installed.length !== 1 || !installed[0].endsWith("node_modules/workqueue-spec")) {
  fail(`a queue-only install brought other packages:\n${installed.join("\n")}`);
}
run("node", ["-e", 'import("workqueue-spec").then((m) => new m.WorkQueue({ maxRetries: 1 }).add("a"))'], queueOnly);
// The Prometheus exporter without prom-client: using it fails with one line that names the install command.
const noPeer = spawnSync(
  "node",
  ["-e", 'import("workqueue-spec/prometheus").then((m) => m.prometheusMetrics({ name: "pods" }))'],
  { cwd: queueOnly, encoding: "utf8" },
);
if (noPeer.status === 0 || !noPeer.stderr.includes('npm install prom-client@"^15.1.3"')) {
  fail(`prometheusMetrics without prom-client did not say how to install it:\n${noPeer.stderr}`);
}

// A user of the gate: the peers beside it, and vitest and TypeScript as their project would have them.
const gate = project("gate");
npmQuiet(
  [
    "install",
    "--save-dev",
    tarball,
    "fast-check@^4.11.0",
    "ajv@^8.17.1",
    "prom-client@^15.1.3",
    "pg@^8.11.0",
    "@types/pg@^8.11.0",
    "vitest@4.1.12",
    "typescript@6.0.3",
    "@types/node@20",
  ],
  gate,
);
run(
  "node",
  [
    join(root, "node_modules/vitest/vitest.mjs"),
    "run",
    "--config",
    ".config/vitest.config.ts",
    "properties/test/readme.test.ts",
  ],
  root,
  {
    WORKQUEUE_CONSUMER: gate,
  },
);
// The Prometheus exporter with prom-client beside it: a scrape shows what a recorder counted.
const scraped = run(
  "node",
  [
    "--input-type=module",
    "-e",
    `import { Registry } from "prom-client";
import { MetricsRecorder } from "workqueue-spec";
import { prometheusMetrics } from "workqueue-spec/prometheus";
const registry = new Registry();
new MetricsRecorder({ sink: prometheusMetrics({ name: "pods", registry }) }).added();
console.log(await registry.metrics());`,
  ],
  gate,
);
if (!scraped.includes('workqueue_adds_total{name="pods"} 1')) fail(`the exporter did not export an add:\n${scraped}`);
// The README's TypeScript type-checks as a user's ESM TypeScript project would compile it.
const readme = readFileSync(join(root, "README.md"), "utf8");
const blocks = [...readme.matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map(([, code]) => code);
for (const [i, code] of blocks.entries()) writeFileSync(join(gate, `block-${i + 1}.ts`), code);
const tsconfig = {
  compilerOptions: { module: "nodenext", target: "es2022", strict: true, noEmit: true, types: ["node"] },
  include: ["block-*.ts"],
};
writeFileSync(join(gate, "tsconfig.json"), JSON.stringify(tsconfig));
run("npx", ["tsc", "-p", "."], gate);
const example = join(gate, "node_modules/workqueue-spec/examples/python/workqueue.py");
const conformance = run("npx", ["workqueue-conformance", "--runs", "30", "--", "python3", example], gate);
if (!conformance.includes("conforms")) fail(`the gate did not say the Python example conforms:\n${conformance}`);

console.log(`check:consumer: the packed package installs without warnings and every README block runs (${scratch})`);
