/**
 * The gate's `--html FILE` (properties/cli/html.ts): a failure with overlapping calls is written as a timeline page
 * that renders in headless Chromium without asking the network for anything, with the replay command the text
 * report prints; a run with nothing to draw, or a path that cannot be written, is a usage error naming the value;
 * and when no page is written, the gate says so and why. `main` runs in this process (`npm test` builds `dist/`
 * first, which the fixtures import).
 */
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, test } from "vitest";
import { main } from "../../cli/gate.js";
import { writePage } from "../../cli/html.js";
import type { GateOutcome } from "../../report/outcome.js";
import type { ConformanceReport } from "../../sequential/report.js";
import { screenshots, useBrowser } from "./browser.js";

const root = new URL("../../../", import.meta.url).pathname;
const scratch = mkdtempSync(join(tmpdir(), "workqueue-html-"));
const fixture = (name: string) => join(root, "properties/test/fixtures", name);
let files = 0;
const fresh = () => join(scratch, `page-${++files}.html`);
const { rendered } = useBrowser();

/** Runs the gate with `argv` and captures its exit code and output. */
async function gate(...argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(argv, { out: (t) => out.push(t), err: (t) => err.push(t), progress: false });
  return { code, out: out.join(""), err: err.join("") };
}

describe("a failure with overlapping calls", () => {
  test("is written as a self-contained page that renders with §10.8 named, its round outlined and the printed replay command", async () => {
    const file = fresh();
    const { code, out, err } = await gate(
      "--runs",
      "100",
      "--seed",
      "1",
      "--html",
      file,
      "--module",
      fixture("add-answers-early.mjs"),
    );
    expect([code, err]).toEqual([1, ""]);
    expect(out).toContain(`  timeline of the failure written to ${file}\n`);
    const printed = /replay: (npx workqueue-conformance .*)$/m.exec(out)?.[1];
    expect(printed).toMatch(/ --replay=\S+ --module /);
    const html = readFileSync(file, "utf8");
    expect(html.startsWith("<!doctype html>")).toBe(true);
    // Self-contained: no script, style sheet, image or frame from elsewhere, and no address to fetch.
    expect(html).not.toMatch(/<script[^>]*\ssrc=|<link|<img|<iframe|@import|url\(|https?:\/\//i);
    const page = await rendered(html, join(screenshots, "gate-html.png"));
    expect(page.requests).toEqual([]);
    expect(page.title).toContain("no order explains the answers");
    expect(page.rules).toHaveLength(1);
    expect(page.rules[0]).toMatch(
      /^linearizable \(§10\.8\): overlapping calls \(maxRetries [^)]+\): no order of the calls of round (\d+) /,
    );
    const round = /round (\d+) that keeps/.exec(page.rules[0] ?? "")?.[1];
    expect(page.outlined.length).toBeGreaterThanOrEqual(2);
    expect(page.outlined.every((title) => title?.startsWith(`round ${round}: `))).toBe(true);
    expect(page.outlineColour).toBe("rgb(198, 40, 40)");
    expect([page.replay, page.copyButtons]).toEqual([printed, 1]);
  });

  test("over the protocol, a race in concurrent rounds is drawn too, with the replay command over the protocol", async () => {
    const file = fresh();
    const racy = ["--", "python3", fixture("python-racy.py")];
    const { code, out } = await gate("--runs", "100", "--seed", "1", "--html", file, ...racy);
    expect(code).toBe(1);
    expect(out).toContain(`  timeline of the failure written to ${file}\n`);
    const page = await rendered(readFileSync(file, "utf8"), join(screenshots, "gate-html-concurrent.png"));
    expect(page.requests).toEqual([]);
    expect(page.rules[0]).toMatch(/^linearizable \(§10\.8\): /);
    // The round no order explains is outlined, all its calls: the race's shrunk round holds one call or more, as the
    // race fell on this run (a round after the race can be the first no order explains).
    const round = /of round (\d+)/.exec(page.rules[0] ?? "")?.[1];
    expect(page.outlined.length).toBeGreaterThanOrEqual(1);
    expect(page.outlined.every((title) => title?.startsWith(`round ${round}: `))).toBe(true);
    expect(page.replay).toMatch(/^npx workqueue-conformance .* --replay=\S+ -- python3 \S+python-racy\.py$/);
  });

  test("with --json, the JSON report stays alone on stdout and the page's line goes to stderr", async () => {
    const file = fresh();
    const { code, out, err } = await gate(
      "--json",
      "--runs",
      "100",
      "--html",
      file,
      "--module",
      fixture("add-answers-early.mjs"),
    );
    expect([code, JSON.parse(out).verdict]).toEqual([1, "does not conform"]);
    expect(err).toBe(`  timeline of the failure written to ${file}\n`);
    expect(readFileSync(file, "utf8")).toContain('<pre class="replay">npx workqueue-conformance ');
  });
});

describe("no page is written, and the gate says why", () => {
  test("the run conforms: no page, no empty file left behind", async () => {
    const file = fresh();
    const { code, out } = await gate("--runs", "5", "--html", file, "--module", fixture("async-model.mjs"));
    expect(code).toBe(0);
    expect(out).toContain(
      `  no timeline written to ${file}: the implementation conforms, so there is no failure to draw\n`,
    );
    expect(existsSync(file)).toBe(false);
  });

  test("a file already there is left as it was, and the line says so", async () => {
    const file = fresh();
    writeFileSync(file, "an earlier page");
    const { code, out } = await gate("--runs", "5", "--html", file, "--module", fixture("async-model.mjs"));
    expect(code).toBe(0);
    expect(out).toContain(
      `  no timeline written to ${file}: the implementation conforms, so there is no failure to draw; the file already there is left as it was\n`,
    );
    expect(readFileSync(file, "utf8")).toBe("an earlier page");
  });

  test("a counterexample of calls one at a time: its steps say it, and no page is written", async () => {
    const file = fresh();
    const { code, out } = await gate("--runs", "100", "--html", file, "--module", fixture("async-never-gives-up.mjs"));
    expect(code).toBe(1);
    expect(out).toContain(
      `  no timeline written to ${file}: the counterexample is a sequence of calls made one at a time, which its numbered steps show\n`,
    );
    expect(existsSync(file)).toBe(false);
  });
});

describe("bad input is a usage error naming the value", () => {
  test("a path that cannot be written: exit 2 before anything starts, one line naming it", async () => {
    const file = join(scratch, "no-such-folder", "page.html");
    const { code, out, err } = await gate("--html", file, "--module", fixture("no-such-module.mjs"));
    expect([code, out, err]).toEqual([
      2,
      "",
      `workqueue-conformance: usage error: --html: cannot write the page: ENOENT: no such file or directory, open '${file}' (see --help)\n`,
    ]);
  });

  test("a folder: exit 2, naming it", async () => {
    const { code, err } = await gate("--html", scratch, "--module", fixture("async-model.mjs"));
    expect([code, err]).toEqual([
      2,
      `workqueue-conformance: usage error: --html: cannot write the page: EISDIR: illegal operation on a directory, open '${scratch}' (see --help)\n`,
    ]);
  });

  test("a queue whose get answers no promise makes no overlapping calls: exit 2, naming the file, and nothing left behind", async () => {
    const file = fresh();
    const { code, out, err } = await gate("--html", file, "--module", fixture("reference.mjs"));
    expect(out).not.toContain("timeline"); // the usage error says why; no line about the page
    expect([code, err]).toEqual([
      2,
      `workqueue-conformance: usage error: --html ${file}: nothing to draw: the queue's get answers at once, not a promise, so it is given one call at a time (a timeline draws overlapping calls) (see --help)\n`,
    ]);
    expect(existsSync(file)).toBe(false);
  });

  test("a factory that throws is not taken for a queue with nothing to draw: the check reports it, exit 3", async () => {
    const file = fresh();
    const { code, out } = await gate("--html", file, "--module", fixture("factory-throws.mjs"));
    expect(code).toBe(3);
    expect(out).toContain(`  no timeline written to ${file}: the check did not reach a verdict\n`);
    expect(existsSync(file)).toBe(false);
  });

  test("an implementation over the protocol without the concurrent feature: exit 2, naming the file", async () => {
    const file = fresh();
    // The reference queue served by serve-module announces len and shutdown only.
    const served = ["--", "node", join(root, "dist/properties/protocol/serve-module.js"), fixture("reference.mjs")];
    const { code, err } = await gate("--html", file, ...served);
    expect([code, err]).toEqual([
      2,
      `workqueue-conformance: usage error: --html ${file}: nothing to draw: the implementation does not announce the "concurrent" feature, so it is given one call at a time (a timeline draws overlapping calls) (see --help)\n`,
    ]);
    expect(existsSync(file)).toBe(false);
  });

  test("--html without a value: exit 2, naming the option", async () => {
    const { code, err } = await gate("--module", fixture("async-model.mjs"), "--html");
    expect([code, err]).toEqual([2, "workqueue-conformance: usage error: `--html` needs a value (see --help)\n"]);
  });
});

describe("writePage, past what a module's run reaches", () => {
  /** An outcome whose counterexample has `overlapping` calls. */
  const failed = (overlapping: unknown[]): GateOutcome => ({
    target: "t",
    durationMs: 0,
    exitCode: 1,
    report: {
      verdict: "does not conform",
      counterexample: {
        invariant: { id: "linearizable", name: "n", rule: "§10.8" },
        detail: "d",
        maxRetries: 1,
        steps: [],
        replay: "wq3.token",
        overlapping,
      },
    } as unknown as ConformanceReport,
  });
  const call = {
    round: 1,
    call: "get()",
    afterPrevious: false,
    answer: { kind: "value" as const, value: "a" },
    invokedAt: 0,
    answeredAt: 1,
  };

  test("a call that never answered: no page, and the line says why", async () => {
    const file = fresh();
    writeFileSync(file, "");
    await expect(writePage(failed([]), { path: file, made: true }, (token) => token)).resolves.toBe(
      `no timeline written to ${file}: a call never answered, so there are no answered calls to draw`,
    );
    expect(existsSync(file)).toBe(false);
  });

  test("a page that cannot be written after the check: a usage error naming --html and the path", async () => {
    const file = join(scratch, "gone", "page.html");
    await expect(writePage(failed([call]), { path: file, made: true }, (token) => token)).rejects.toThrow(
      `--html: cannot write the page: ENOENT: no such file or directory, open '${file}'`,
    );
  });
});
