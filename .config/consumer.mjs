// `npm run check:consumer`: the package as a stranger gets it, following only the docs. Packs it, and with the
// tarball in place of the registry (as the docs say to do until the package is published):
// - a project that only wants the queue runs the README's first install line: the install prints no warning and
//   brings no other package, the queue works, the Prometheus exporter says how to install prom-client, and the
//   README's `npx workqueue-conformance` line checks the shipped Python example, with nothing else installed; the
//   replay line the gate prints for a wrong queue, pasted, replays its counterexample;
// - a fresh folder, as a Go, Python or Rust project's CI has, runs docs/protocol.md's and the README's CI lines as
//   printed against the Python example: exit 0 and a valid JUnit file; with a bad option, exit 2 and still both
//   reports;
// - a project that runs the README's examples installs with the README's other install lines, runs every block the
//   way the README says (properties/test/package/readme.test.ts, pointed at the project: `npx tsx`, `npx vitest run`),
//   type-checks them, runs the README's `--module` lines, and scrapes the Prometheus exporter.
// Exits 1 at the first thing that fails, saying what.
import { execFileSync, spawnSync } from "node:child_process";
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { Ajv } from "ajv";
import { validateXML } from "xmllint-wasm";

const root = new URL("..", import.meta.url).pathname;
const scratch = mkdtempSync(join(tmpdir(), "workqueue-consumer-"));
const readme = readFileSync(join(root, "README.md"), "utf8");
const protocol = readFileSync(join(root, "docs/protocol.md"), "utf8");

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

/** Runs a line of a document in a shell, as a user pastes it, and returns its exit status and output. */
function paste(line, cwd) {
  console.log(`check:consumer: (in ${cwd}) $ ${line}`);
  return spawnSync("sh", ["-c", line], {
    cwd,
    encoding: "utf8",
    env: { ...process.env, CI: "1" },
    maxBuffer: 64 << 20,
  });
}

/**
 * Runs an `npm install` line in a shell, and fails if it did not succeed or npm warned. `tolerated` warnings are
 * npm's about another package (npm 11's install-scripts notice about esbuild, which tsx and vitest bring), never
 * about workqueue-spec.
 */
function install(line, cwd, tolerated = /^$/) {
  const { status, stdout, stderr } = paste(`${line} 2>&1`, cwd);
  if (status !== 0) fail(`\`${line}\` failed:\n${stdout}${stderr}`);
  const warnings = stdout.split("\n").filter((text) => /^npm (warn|WARN)/.test(text));
  const unexpected = warnings.filter((text) => !tolerated.test(text) || text.includes("workqueue-spec"));
  if (unexpected.length > 0) fail(`\`${line}\` warned:\n${warnings.join("\n")}`);
  return stdout;
}

/** A fresh ESM project. */
function project(name) {
  const dir = join(scratch, name);
  mkdirSync(dir);
  writeFileSync(join(dir, "package.json"), `${JSON.stringify({ name, private: true, type: "module" }, null, 2)}\n`);
  return dir;
}

/** The lines of each ```sh block of `markdown` that follows `heading`, up to the next heading of its level. */
function shellBlocks(markdown, heading) {
  const start = markdown.indexOf(`\n${heading}\n`);
  if (start < 0) fail(`no heading \`${heading}\``);
  const level = heading.slice(0, heading.indexOf(" "));
  const end = markdown.indexOf(`\n${level} `, start + heading.length + 1);
  const section = markdown.slice(start, end < 0 ? undefined : end);
  return [...section.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map(([, code]) => code.trimEnd().split("\n"));
}

/** The command of `line` without its comment. */
const command = (line) => line.replace(/\s+#.*$/, "");

/** `line`, an `npm install` of `workqueue-spec`, with the tarball in its place: the registry does not have it yet. */
function fromTarball(line) {
  const replaced = command(line).replace(/ workqueue-spec( |$)/, ` ${tarball}$1`);
  if (!replaced.startsWith("npm install ") || !replaced.includes(tarball))
    fail(`not an install of the package: ${line}`);
  return replaced;
}

/** Checks a JUnit report against the JUnit XML schema, and returns its text. */
async function junit(file) {
  if (!existsSync(file)) fail(`no JUnit report at ${file}`);
  const xml = readFileSync(file, "utf8");
  const schema = readFileSync(join(root, "properties/test/fixtures/junit.xsd"), "utf8");
  const { valid, errors } = await validateXML({ xml: [{ fileName: file, contents: xml }], schema: [schema] });
  if (!valid) fail(`${file} is not valid JUnit XML:\n${errors.map((e) => e.rawMessage).join("\n")}`);
  return xml;
}

// The package, packed as `npm pack` packs it, under the name the docs print.
const packOutput = run("sh", ["-c", `npm pack --json --pack-destination ${scratch} 2>&1`], root);
const warned = packOutput.split("\n").filter((line) => /^npm (warn|WARN)/.test(line));
if (warned.length > 0) fail(`npm pack warned:\n${warned.join("\n")}`);
const [packed] = JSON.parse(packOutput.replace(/^[^[]*/s, ""));
const tarball = join(scratch, packed.filename);
console.log(`check:consumer: packed ${packed.filename}: ${packed.entryCount} files, ${packed.size} bytes`);
const installLines = shellBlocks(readme, "## Install")[0];

// A user of the queue alone: the README's first install line, and nothing else is installed.
const queueOnly = project("queue-only");
install(fromTarball(installLines[0]), queueOnly);
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
// The README's line for the shipped Python example, as printed: the command needs nothing but the package.
const ownQueue = shellBlocks(readme, "## Checking your own queue");
const pythonLine = ownQueue.flat().find((line) => line.startsWith("npx workqueue-conformance -- python3 "));
if (pythonLine === undefined) fail("the README has no `npx workqueue-conformance -- python3 …` line");
const python = paste(pythonLine, queueOnly);
if (python.status !== 0 || !python.stdout.includes("✓ robust profile conforms")) {
  fail(`the README's Python line did not conform (exit ${python.status}):\n${python.stdout}${python.stderr}`);
}
// A counterexample's printed replay line, pasted as printed in the project: it replays the same steps.
for (const file of ["naive.mjs", "in-flight.mjs"]) {
  copyFileSync(join(root, "properties/test/wrong", file), join(queueOnly, file));
}
writeFileSync(join(queueOnly, "forgets-dirty.mjs"), 'export { lostDirtyMark as default } from "./in-flight.mjs";\n');
const found = paste("npx workqueue-conformance --profile contract --runs 300 --module ./forgets-dirty.mjs", queueOnly);
const replayLine = /^ {2}replay: (.+)$/m.exec(found.stdout)?.[1];
/** The counterexample of a report: its broken rule and its numbered steps. */
const steps = (out) => out.split("\n").filter((line) => /^✗|^ +\d+\. /.test(line));
if (found.status !== 1 || replayLine === undefined || !replayLine.startsWith("npx workqueue-conformance ")) {
  fail(`a wrong queue did not print a replay line (exit ${found.status}):\n${found.stdout}${found.stderr}`);
}
const replayed = paste(replayLine, queueOnly);
if (replayed.status !== 1 || steps(replayed.stdout).join("\n") !== steps(found.stdout).join("\n")) {
  fail(`the printed replay line, pasted, exited ${replayed.status} and printed:\n${replayed.stdout}${replayed.stderr}`);
}
const vectors = paste("npx workqueue-vectors --out .", queueOnly);
if (vectors.status !== 0 || !existsSync(join(queueOnly, "transitions.json"))) {
  fail(`npx workqueue-vectors did not write transitions.json:\n${vectors.stdout}${vectors.stderr}`);
}

// A CI machine's folder, with no package.json: docs/protocol.md's lines for Go, Python and Rust and the README's,
// as printed, the build step of each replaced by the Python example put where its gate line runs it.
const ci = join(scratch, "ci");
mkdirSync(ci);
const tarballLine = /`(npm install --no-save \.\/workqueue-spec-[^`]*\.tgz)`/.exec(protocol)?.[1];
if (tarballLine !== `npm install --no-save ./${packed.filename}`) {
  fail(`docs/protocol.md's tarball line is \`${tarballLine}\`, but npm pack writes ${packed.filename}`);
}
copyFileSync(tarball, join(ci, packed.filename));
install(tarballLine, ci);
const example = join(ci, "node_modules/workqueue-spec/examples/python/workqueue.py");
/** Puts the Python example where `gateLine` runs its implementation: a program's path, or a Python module. */
function build(gateLine) {
  const [program, ...args] = command(gateLine).split(" -- ")[1].split(" ");
  if (program === "python3" && args[0] === "-m") {
    const path = join(ci, `${args[1].replaceAll(".", "/")}.py`);
    mkdirSync(dirname(path), { recursive: true });
    for (let dir = dirname(path); dir !== ci; dir = dirname(dir)) writeFileSync(join(dir, "__init__.py"), "");
    copyFileSync(example, path);
  } else {
    mkdirSync(dirname(join(ci, program)), { recursive: true });
    copyFileSync(example, join(ci, program));
    chmodSync(join(ci, program), 0o755);
  }
}
const ciBlocks = [
  ...shellBlocks(protocol, "## Adding the gate to a project's CI"),
  ...shellBlocks(readme, "## Checking your own queue").filter((block) =>
    block.some((line) => line.includes("--junit")),
  ),
];
// Each install line is the registry's, for which the tarball line stands in; each gate line runs once.
const gateLines = new Map();
for (const line of ciBlocks.flat()) {
  if (line.startsWith("npm install") && command(line) !== "npm install --no-save workqueue-spec") {
    fail(`a CI line installs something else than the package: ${line}`);
  }
  if (line.startsWith("npx workqueue-conformance")) gateLines.set(command(line), line);
}
if (gateLines.size < 3) fail(`expected the CI lines of Go, Python and Rust, found ${[...gateLines.values()]}`);
for (const line of gateLines.values()) {
  build(line);
  const report = join(ci, /--junit (\S+)/.exec(line)[1]);
  rmSync(report, { force: true });
  const ran = paste(line, ci);
  if (ran.status !== 0) fail(`\`${line}\` exited ${ran.status}:\n${ran.stdout}${ran.stderr}`);
  const xml = await junit(report);
  if (!xml.includes('tests="1" failures="0" errors="0"')) fail(`${report} does not report one passed test:\n${xml}`);
}
// A bad option: exit 2, and the reports are still written, saying usage error.
const [firstGate] = gateLines.keys();
rmSync(join(ci, /--junit (\S+)/.exec(firstGate)[1]), { force: true });
const badLine = `${firstGate.replace("npx workqueue-conformance", "npx workqueue-conformance --json --runs 0")} > report.json`;
const bad = paste(badLine, ci);
const badJson = JSON.parse(readFileSync(join(ci, "report.json"), "utf8"));
const reportSchema = JSON.parse(readFileSync(join(root, "properties/report/report.schema.json"), "utf8"));
const validJson = new Ajv({ allErrors: true, strict: false }).compile(reportSchema);
if (bad.status !== 2 || !validJson(badJson) || badJson.exitCode !== 2 || badJson.error?.kind !== "usage error") {
  fail(`\`${badLine}\` exited ${bad.status}, reporting ${JSON.stringify(badJson)} ${JSON.stringify(validJson.errors)}`);
}
const badXml = await junit(join(ci, /--junit (\S+)/.exec(firstGate)[1]));
if (!badXml.includes('<error type="usage error" message="--runs must be a positive integer, got `0`"')) {
  fail(`the JUnit report of a bad option does not say usage error:\n${badXml}`);
}

// A user who runs the README's examples: its other install lines, with the tarball for the package; and TypeScript
// and Node.js's types, to type-check the blocks as a user's ESM TypeScript project would compile them.
const examples = project("examples");
for (const line of installLines.slice(1)) {
  const printed = command(line);
  install(printed.includes(" workqueue-spec") ? fromTarball(line) : printed, examples, /^npm warn install-scripts/);
}
install("npm install --save-dev typescript@6.0.3 @types/node@20", examples, /^npm warn install-scripts/);
run(
  "node",
  [
    join(root, "node_modules/vitest/vitest.mjs"),
    "run",
    "--config",
    ".config/vitest.config.ts",
    "properties/test/package/readme.test.ts",
  ],
  root,
  { WORKQUEUE_CONSUMER: examples },
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
  examples,
);
if (!scraped.includes('workqueue_adds_total{name="pods"} 1')) fail(`the exporter did not export an add:\n${scraped}`);
// The README's TypeScript type-checks as a user's ESM TypeScript project would compile it.
const blocks = [...readme.matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map(([, code]) => code);
for (const [i, code] of blocks.entries()) writeFileSync(join(examples, `block-${i + 1}.ts`), code);
const tsconfig = {
  compilerOptions: { module: "nodenext", target: "es2022", strict: true, noEmit: true, types: ["node"] },
  include: ["block-*.ts"],
};
writeFileSync(join(examples, "tsconfig.json"), JSON.stringify(tsconfig));
run("npx", ["tsc", "-p", "."], examples);
// The README's `--module` lines, as printed, on a module that exports the reference queue's factory.
const factory = `import { WorkQueue } from "workqueue-spec";\n\nexport default (options) => new WorkQueue(options);\n`;
writeFileSync(join(examples, "my-queue.js"), factory);
writeFileSync(join(examples, "my-queue.ts"), factory.replace("(options)", "(options: { maxRetries: number })"));
const moduleLines = ownQueue.flat().filter((line) => line.startsWith("npx workqueue-conformance --module "));
if (moduleLines.length !== 2)
  fail(`expected the README's --module lines for JavaScript and TypeScript: ${moduleLines}`);
for (const line of moduleLines) {
  const checked = paste(line, examples);
  if (checked.status !== 0 || !checked.stdout.includes("✓ robust profile conforms")) {
    fail(`\`${line}\` did not conform (exit ${checked.status}):\n${checked.stdout}${checked.stderr}`);
  }
}

console.log(`check:consumer: the packed package installs and runs as the README and docs/protocol.md say (${scratch})`);
