/**
 * The package works where a stranger installs it: its commands are the self-contained bundles of `npm run build`
 * (.config/bundle.mjs), which run with nothing installed beside them; `--module` loads TypeScript where it can and
 * says what to do where it cannot; and the links of its declarations lead somewhere from node_modules/ (an editor
 * shows them); what it unpacks stays under 1.5 MB, without the transitions table. `npm run check:consumer` installs
 * the packed package in fresh projects.
 */
import { spawnSync } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { expect, test } from "vitest";

const root = new URL("../../../", import.meta.url).pathname;
const manifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as {
  version: string;
  bin: Record<string, string>;
  files: string[];
  repository: { url: string };
};
const python = join(root, "examples/python/workqueue.py");

/** Runs the package's command `name` from `dir`, a copy of the package or the repository, in `cwd`. */
function command(dir: string, name: string, args: readonly string[], cwd = dir) {
  const bin = join(dir, manifest.bin[name] as string);
  return spawnSync(process.execPath, [bin, ...args], { cwd, encoding: "utf8", env: { ...process.env, CI: "1" } });
}

test("the package's commands run with no node_modules beside them: the gate checks the Python example, the vectors are written", () => {
  const copy = mkdtempSync(join(tmpdir(), "workqueue-bundle-"));
  writeFileSync(join(copy, "package.json"), JSON.stringify(manifest));
  for (const file of Object.values(manifest.bin)) {
    mkdirSync(dirname(join(copy, file)), { recursive: true });
    copyFileSync(join(root, file), join(copy, file));
  }
  const gate = command(copy, "workqueue-conformance", ["--runs", "5", "--", "python3", python]);
  expect([gate.status, gate.stderr]).toEqual([0, ""]);
  expect(gate.stdout).toContain("✓ robust profile conforms: 5 runs");
  expect(command(copy, "workqueue-conformance", ["--version"]).stdout).toBe(`workqueue-spec ${manifest.version}\n`);
  const vectors = command(copy, "workqueue-vectors", ["--out", copy]);
  expect([vectors.status, vectors.stdout]).toEqual([0, `wrote ${join(copy, "transitions.json")}: 9,860 vectors\n`]);
});

test("the package unpacks to under 1.5 MB and ships no transitions table (workqueue-vectors writes it on demand)", () => {
  // What `npm pack` would pack from dist/ as built (pretest builds it), without building again.
  const pack = spawnSync("npm", ["pack", "--dry-run", "--json", "--ignore-scripts"], { cwd: root, encoding: "utf8" });
  expect(pack.status).toBe(0);
  const [packed] = JSON.parse(pack.stdout) as { unpackedSize: number; files: { path: string }[] }[];
  expect(packed?.files.filter(({ path }) => path.endsWith("transitions.json"))).toEqual([]);
  expect(packed?.unpackedSize).toBeLessThan(1_500_000);
});

test("--module loads a TypeScript module with the tsx installed in its project, and checks it", () => {
  const fixture = join(root, "properties/test/fixtures/reference.ts");
  const { status, stdout, stderr } = command(root, "workqueue-conformance", ["--runs", "5", "--module", fixture]);
  expect([status, stderr]).toEqual([0, ""]);
  expect(stdout).toContain("✓ robust profile conforms: 5 runs");
});

test("--module of TypeScript that neither Node.js 20 nor a tsx can load: exit 2, saying to install tsx or compile it, in the reports too", () => {
  const project = mkdtempSync(join(tmpdir(), "workqueue-no-tsx-"));
  writeFileSync(join(project, "my-queue.ts"), "export default (options: { maxRetries: number }) => options;\n");
  const args = ["--json", "--junit", "report.xml", "--module", "./my-queue.ts"];
  const { status, stdout } = command(root, "workqueue-conformance", args, project);
  const message = `Node.js ${process.version} cannot load TypeScript (\`./my-queue.ts\`) by itself: install tsx in its project (npm install --save-dev tsx) and the gate loads it with tsx, or compile it to JavaScript and give the .js file`;
  expect([status, JSON.parse(stdout).error]).toEqual([2, { kind: "usage error", message }]);
  expect(readFileSync(join(project, "report.xml"), "utf8")).toContain('<error type="usage error"');
});

test.each([
  ["a syntax error", "queue.mjs", "syntax error in /QUEUE:2: Unexpected token ';'"],
  [
    "an import of a module with a syntax error",
    "imports.mjs",
    "syntax error in `./imports.mjs` or a module it imports: Unexpected token ';'",
  ],
  [
    "an import of a missing file",
    "missing.mjs",
    "Cannot find module '/FOLDER/none.mjs' imported from /FOLDER/missing.mjs",
  ],
  ["no such file", "absent.mjs", "cannot find `./absent.mjs`: there is no file /FOLDER/absent.mjs"],
])("--module of %s: exit 2, one line naming the user's file, none of the gate's", (_, name, message) => {
  const project = mkdtempSync(join(tmpdir(), "workqueue-module-"));
  writeFileSync(join(project, "queue.mjs"), "export default (options) => {\n  return 1 +;\n};\n");
  writeFileSync(join(project, "imports.mjs"), 'import "./queue.mjs";\nexport default () => {};\n');
  writeFileSync(join(project, "missing.mjs"), 'import "./none.mjs";\nexport default () => {};\n');
  const { status, stderr } = command(root, "workqueue-conformance", ["--module", `./${name}`], project);
  const said = message.replaceAll("/QUEUE", join(project, "queue.mjs")).replaceAll("/FOLDER", project);
  expect([status, stderr]).toEqual([2, `workqueue-conformance: usage error: ${said} (see --help)\n`]);
});

/** The anchor GitHub gives a heading (github-slugger): lower case, no punctuation or symbols, spaces as hyphens. */
const githubSlug = (heading: string) =>
  heading
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N} _-]/gu, "")
    .replaceAll(" ", "-");

test("GitHub's anchor of a heading of the spec drops the section sign and the code's punctuation", () => {
  expect(["§4 `add(item)`", "§2 State and the caller's protocol"].map(githubSlug)).toEqual([
    "4-additem",
    "2-state-and-the-callers-protocol",
  ]);
});

test("every link in the shipped declarations leads to a heading of a document the repository has and the package ships", () => {
  const blob = `${manifest.repository.url.replace(/^git\+/, "").replace(/\.git$/, "")}/blob/main/`;
  const links = readdirSync(join(root, "dist"), { recursive: true, encoding: "utf8" })
    .filter((file) => file.endsWith(".d.ts") && !file.startsWith("bench/"))
    .flatMap((file) => readFileSync(join(root, "dist", file), "utf8").split("\n"))
    .filter((line) => /^\s*(\/\*\*|\*)/.test(line)) // the doc comments
    .flatMap((line) => [...line.matchAll(/\[[^\]]+\]\(([^)\s]*)\)/g)].map(([, link]) => link as string));
  expect(links.length).toBeGreaterThan(300);
  const broken = links.filter((link) => {
    if (!link.startsWith(blob)) return true;
    const [file = "", anchor] = link.slice(blob.length).split("#");
    if (!manifest.files.includes(file)) return true;
    const headings = [...readFileSync(join(root, file), "utf8").matchAll(/^#{1,6} (.*)$/gm)].map(([, h]) => h ?? "");
    return anchor !== undefined && !headings.map(githubSlug).includes(anchor);
  });
  expect(new Set(broken)).toEqual(new Set());
});
