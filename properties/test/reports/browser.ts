/**
 * A real headless browser for the suites that render timeline pages: Debian's Chromium (`/usr/bin/chromium`, or
 * `WORKQUEUE_CHROMIUM`), driven by playwright-core, launched once per suite. {@link rendered} answers what a page
 * shows and every request it tried to make, and takes its screenshot.
 */
import { existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Browser, chromium } from "playwright-core";
import { afterAll, beforeAll } from "vitest";

/** Debian's Chromium (`apt-get install chromium`), which `.ci/run` installs when it is missing. */
const executablePath = process.env.WORKQUEUE_CHROMIUM ?? "/usr/bin/chromium";

/** Where the screenshots go: a fresh folder, or `WORKQUEUE_SCREENSHOTS` (docs/images makes the README's). */
export const screenshots = process.env.WORKQUEUE_SCREENSHOTS ?? mkdtempSync(join(tmpdir(), "timeline-"));

/** The one browser global the suites read (the project type-checks without the DOM library). */
interface BrowserWindow {
  getComputedStyle(element: unknown): { readonly borderTopColor: string };
}

/** Launches Chromium before the suite's tests and closes it after them; the tests call {@link rendered}. */
export function useBrowser(): { readonly rendered: Rendered } {
  let browser: Browser | undefined;
  beforeAll(async () => {
    if (!existsSync(executablePath)) {
      throw new Error(
        `no Chromium at ${executablePath}: install Debian's (apt-get install chromium) or set WORKQUEUE_CHROMIUM to a Chromium binary`,
      );
    }
    browser = await chromium.launch({
      executablePath,
      args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"],
    });
  });
  afterAll(async () => {
    await browser?.close();
  });
  const rendered: Rendered = (html, screenshot) => {
    if (browser === undefined) throw new Error("the browser did not start");
    return renderedIn(browser, html, screenshot);
  };
  return { rendered };
}

/** Renders `html` in a fresh page of `browser`; answers what the page shows and every request it tried to make. */
async function renderedIn(browser: Browser, html: string, screenshot: string) {
  const page = await browser.newPage({ viewport: { width: 1100, height: 500 } });
  const requests: string[] = [];
  page.on("request", (request) => requests.push(request.url()));
  await page.setContent(html, { waitUntil: "load" });
  const shown = {
    title: await page.locator("h1").textContent(),
    lanes: await page.locator(".lane .name").allTextContents(),
    rules: await page.locator(".rule").allTextContents(),
    outlined: await page.locator(".bar.violating").evaluateAll((bars) => bars.map((bar) => bar.getAttribute("title"))),
    outlineColour: await page
      .locator(".bar.violating")
      .first()
      .evaluate((bar) => (globalThis as unknown as BrowserWindow).getComputedStyle(bar).borderTopColor),
    bars: await page.locator(".bar").count(),
    replay:
      (await page.locator("pre.replay").count()) === 0 ? undefined : await page.locator("pre.replay").textContent(),
    copyButtons: await page.locator("button.copy").count(),
  };
  await page.screenshot({ path: screenshot, fullPage: true });
  await page.close();
  return { ...shown, requests };
}

/** Renders a page, saves its screenshot at `screenshot`, and answers what it shows and the requests it made. */
type Rendered = (html: string, screenshot: string) => ReturnType<typeof renderedIn>;
