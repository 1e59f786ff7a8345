// The last step of `npm run build`: the links of the shipped declarations (dist/**/*.d.ts) made absolute to the
// repository. A doc comment links the spec relative to its source file (`../docs/spec.md#§7`), which typedoc
// resolves to its own page of the spec; from dist/ or node_modules/ that path points nowhere, so here each relative
// link becomes `<repository>/blob/main/<file>`, and an anchor `#§N…` the one GitHub gives the heading `§N …`.
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

const root = new URL("..", import.meta.url).pathname;
const dist = join(root, "dist");
const manifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
const repository = manifest.repository.url.replace(/^git\+/, "").replace(/\.git$/, "");

/** The anchor GitHub gives a heading: lower case, without punctuation or symbols, spaces as hyphens. */
function githubSlug(heading) {
  return heading
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N} _-]/gu, "")
    .replaceAll(" ", "-");
}

/** The headings of a Markdown file of the repository. */
const headings = new Map();
function headingsOf(file) {
  if (!headings.has(file)) {
    const text = readFileSync(join(root, file), "utf8");
    headings.set(
      file,
      [...text.matchAll(/^#{1,6} (.*)$/gm)].map(([, heading]) => heading),
    );
  }
  return headings.get(file);
}

/** `anchor` as GitHub names it in `file`: `§7` and `§7-retry` become the slug of the heading `§7 …`. */
function anchorOf(file, anchor) {
  const section = /^§(\d+)(?:-|$)/.exec(anchor)?.[1];
  if (section === undefined || !file.endsWith(".md")) return anchor;
  const heading = headingsOf(file).find((text) => text.startsWith(`§${section} `));
  if (heading === undefined) throw new Error(`${file} has no heading §${section}, which a doc comment links to`);
  return githubSlug(heading);
}

/** `text`, the declarations tsc wrote for `source`, with its relative links absolute to the repository. */
function absolute(text, source) {
  return text.replace(/\]\((\.\.?\/[^)#\s]*)(?:#([^)\s]*))?\)/g, (_, path, anchor) => {
    const file = relative(root, resolve(dirname(join(root, source)), path));
    const target = `${repository}/blob/main/${file}`;
    return `](${anchor === undefined ? target : `${target}#${anchorOf(file, anchor)}`})`;
  });
}

for (const entry of readdirSync(dist, { recursive: true })) {
  if (!entry.endsWith(".d.ts")) continue;
  const path = join(dist, entry);
  const text = readFileSync(path, "utf8");
  const linked = absolute(text, entry.replace(/\.d\.ts$/, ".ts"));
  if (linked !== text) writeFileSync(path, linked);
}
