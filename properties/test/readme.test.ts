/**
 * The README's controller example runs as written: the file below is quoted verbatim in README.md, and this test
 * imports and runs it, on the sources, within a bounded number of event-loop turns.
 */
import { readFileSync } from "node:fs";
import { expect, test, vi } from "vitest";
import { flush, track } from "./turns.js";

test("the README quotes the controller example verbatim", () => {
  const readme = readFileSync(new URL("../../README.md", import.meta.url), "utf8");
  const example = readFileSync(new URL("controller.example.ts", import.meta.url), "utf8");
  expect(readme).toContain(`\`\`\`ts\n${example}\`\`\``);
});

test("the README's controller example reconciles every key, retries the failing one, and stops on SIGTERM", async () => {
  const lines: string[] = [];
  const spies = (["log", "warn", "error"] as const).map((level) =>
    vi.spyOn(console, level).mockImplementation((...words) => void lines.push(`${level}: ${words.join(" ")}`)),
  );
  // The example bounds its drain with AbortSignal.timeout(10_000); here the test holds that signal, not a timer.
  const deadline = new AbortController();
  const timeout = vi.spyOn(AbortSignal, "timeout").mockReturnValue(deadline.signal);
  const listeners = () => process.listenerCount("SIGTERM");
  const before = listeners();
  try {
    const ran = track(import("./controller.example.js"));
    while (listeners() === before && ran.state === "pending") await flush(); // loading the module
    for (let turn = 0; turn < 20; turn++) await flush();
    expect([ran.state, listeners(), lines.length]).toEqual(["pending", before + 1, 4]);
    process.emit("SIGTERM", "SIGTERM");
    for (let turn = 0; turn < 20 && ran.state === "pending"; turn++) await flush();
    if (ran.state === "pending") deadline.abort(new Error("the drain did not finish within 20 turns"));
    for (let turn = 0; turn < 20 && ran.state === "pending"; turn++) await flush();
    expect([ran.state, ran.reason, timeout.mock.calls, listeners()]).toEqual([
      "resolved",
      undefined,
      [[10_000]],
      before,
    ]);
  } finally {
    for (const spy of [...spies, timeout]) spy.mockRestore();
  }
  expect(lines).toEqual([
    "log: reconciled default/web",
    "warn: default/db failed: Error: database not ready",
    "log: reconciled default/web",
    "log: reconciled default/db",
  ]);
});
