// The second half of `npm run build`: bundles the command-line tools into self-contained files, so that a project
// that installed only workqueue-spec runs them — `workqueue-conformance` with fast-check and ajv inside
// (properties/cli/standalone.ts), `workqueue-vectors` with the model. The library entry points are not bundled:
// `workqueue-spec/properties` keeps fast-check and ajv as optional peers. Reads dist/ as tsc wrote it; writes
// dist/bin/, and the licences of the packages bundled into it. Last, the library's modules lose their comments.
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { build, transform } from "esbuild";

const root = new URL("..", import.meta.url).pathname;
const out = join(root, "dist/bin");

const { metafile } = await build({
  entryPoints: {
    "workqueue-conformance": join(root, "dist/properties/cli/standalone.js"),
    "workqueue-vectors": join(root, "dist/properties/cli/vectors.js"),
  },
  outdir: out,
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20",
  minify: true, // half the size (290 KB, not 616): the package is downloaded by every user of the queue
  keepNames: true, // an internal error still names its class
  legalComments: "none", // the licences are in third-party-licenses.txt, written below
  metafile: true,
  logLevel: "warning",
});

// Each package bundled, with its licence: the bundle carries their code, so it carries their notices.
const packages = new Set();
for (const input of Object.keys(metafile.inputs)) {
  const match = /^(.*node_modules\/(?:@[^/]+\/)?[^/]+)\//.exec(input);
  if (match !== null) packages.add(match[1]);
}
const notices = [...packages].sort().map((dir) => {
  const manifest = JSON.parse(readFileSync(join(root, dir, "package.json"), "utf8"));
  const file = readdirSync(join(root, dir)).find((name) => /^licen[cs]e/i.test(name));
  const text = file === undefined ? `(${manifest.license})` : readFileSync(join(root, dir, file), "utf8").trim();
  return `${manifest.name}@${manifest.version} (${manifest.license})\n\n${text}\n`;
});
const intro = "dist/bin/ bundles these packages; their licences follow.\n";
writeFileSync(join(out, "third-party-licenses.txt"), [intro, ...notices].join(`\n${"-".repeat(80)}\n\n`));

// The modules the package ships (dist/src, dist/model, dist/properties) without their comments: the declarations
// beside them keep every doc comment for editors and the API docs, and the sources are in the repository. A third
// of the JavaScript (564 KB to 383 KB) that every user of the queue downloads. The code is reprinted, not minified:
// names, lines of code and error stacks stay readable.
for (const dir of ["dist/src", "dist/model", "dist/properties"]) {
  for (const entry of readdirSync(join(root, dir), { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || !entry.name.endsWith(".js")) continue;
    const file = join(entry.parentPath, entry.name);
    const { code } = await transform(readFileSync(file, "utf8"), {
      format: "esm",
      target: "node20",
      legalComments: "none",
    });
    writeFileSync(file, code);
  }
}
