/**
 * Timelines (properties/report/timeline.ts): a failure with overlapping calls and a multi-process history with a
 * violation, drawn as self-contained HTML pages and rendered in a real headless browser (Debian's Chromium, driven
 * by playwright-core): the lanes, the outlined calls, the rule and the replay line are on the page, and it asks
 * the network for nothing.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { expect, test } from "vitest";
import { showAnswer } from "../../core/render.js";
import { checkHistory, type HistoryEvent } from "../../history/check-history.js";
import { checkOverlapping } from "../../overlap/check-overlapping.js";
import { historyTimeline, overlapTimeline } from "../../report/timeline.js";
import type { Counterexample } from "../../sequential/report.js";
import { GetReadsThenTakes } from "../wrong/async.js";
import { screenshots, useBrowser } from "./browser.js";

const { rendered } = useBrowser();

test("an overlapping-call failure renders with a lane per caller, the unexplained round outlined, §10.8 named and the replay line", async () => {
  const report = await checkOverlapping((options) => new GetReadsThenTakes(options), { runs: 100, seed: 1 });
  const found = report.counterexample;
  if (found === undefined) throw new Error("GetReadsThenTakes was not rejected");
  expect(found.round).toBeGreaterThanOrEqual(1);
  const replay = `checkOverlapping(factory, { seed: ${report.seed}, path: "${found.path}" })`;
  const html = overlapTimeline(found, { replay }) ?? "no page";
  expect(html).not.toMatch(/<script[^>]+src|<link|https?:\/\//);
  const screenshot = join(screenshots, "timeline-overlap.png");
  const page = await rendered(html, screenshot);
  expect(page.requests).toEqual([]);
  expect(page.title).toContain("no order explains the answers");
  const callers = Math.max(
    ...[...new Set(found.calls.map((c) => c.round))].map((r) => found.calls.filter((c) => c.round === r).length),
  );
  expect(page.lanes).toEqual(Array.from({ length: callers }, (_, i) => `caller ${i + 1}`));
  expect(page.bars).toBe(found.calls.length);
  const unexplained = found.calls.filter((c) => c.round === found.round);
  expect(page.outlined).toEqual(unexplained.map((c) => `round ${c.round}: ${c.call} → ${showAnswer(c.answer)}`));
  expect(page.outlineColour).toBe("rgb(198, 40, 40)");
  expect(page.rules.join("\n")).toContain("linearizable (§10.8)");
  expect(page.replay).toBe(replay);
  expect(readFileSync(screenshot).subarray(1, 4).toString()).toBe("PNG");
}, 120_000);

test("a history with two live leases renders a lane per process, the leases as spans, and the two hand-outs outlined", async () => {
  const events: HistoryEvent[] = [
    { op: "add", key: "pod-1", startedAt: 0, endedAt: 2, process: "producer" },
    { op: "lease", key: "pod-1", token: 7, expiresAt: 1_000, startedAt: 5, endedAt: 8, process: "worker 1" },
    { op: "lease", key: "pod-1", token: 9, expiresAt: 1_400, startedAt: 300, endedAt: 304, process: "worker 2" },
    { op: "forget", key: "pod-1", token: 9, outcome: "ok", startedAt: 420, endedAt: 422, process: "worker 2" },
    { op: "done", key: "pod-1", token: 9, outcome: "ok", startedAt: 640, endedAt: 642, process: "worker 2" },
    { op: "done", key: "pod-1", token: 7, outcome: "stale", startedAt: 900, process: "worker 1" },
  ];
  const violations = checkHistory(events, { maxRetries: 3, toleranceMs: 0 });
  expect(violations.map((v) => v.rule)).toEqual(["two live leases"]);
  const html = historyTimeline(events, violations);
  const page = await rendered(html, join(screenshots, "timeline-history.png"));
  expect(page.requests).toEqual([]);
  expect(page.title).toBe("A history of 6 calls: 1 violation");
  expect(page.lanes).toEqual(["producer", "worker 1", "worker 2"]);
  expect(page.bars).toBe(events.length + 2); // every call, and a span per lease
  expect(page.outlined).toEqual([
    "lease pod-1 #7",
    "lease pod-1 #7 until 1000",
    "lease pod-1 #9",
    "lease pod-1 #9 until 640",
  ]);
  expect(page.rules).toEqual([`two live leases: ${violations[0]?.message}`]);
  expect(page.replay).toBeUndefined();
}, 120_000);

test("text from the history is escaped, never markup: a key with < and & shows as written", () => {
  const events: HistoryEvent[] = [{ op: "add", key: `<b>&"'`, startedAt: 0 }];
  const html = historyTimeline(events, checkHistory(events, { maxRetries: 1 }));
  expect(html).toContain("add(&#60;b&#62;&#38;&#34;&#39;)");
  expect(html).not.toContain("<b>&");
  expect(html).toContain('class="bar call open violating"'); // never answered, and lost
});

test("calls of a lane whose labels would run into each other go to rows of their own, a lease's span under its call; a call after the label before it shares the row", () => {
  const events: HistoryEvent[] = [
    { op: "add", key: "a", startedAt: 0, endedAt: 1, process: "w" },
    { op: "lease", key: "a", token: 1, expiresAt: 500, startedAt: 2, endedAt: 3, process: "w" },
    { op: "add", key: "c", startedAt: 1000, endedAt: 1001, process: "w" },
  ];
  const html = historyTimeline(events, []);
  const tops = [...html.matchAll(/class="bar (call|lease)[^"]*" style="[^"]*top:(\d+)px/g)].map(([, kind, top]) => [
    kind,
    Number(top),
  ]);
  expect(tops).toEqual([
    ["call", 4],
    ["call", 40],
    ["lease", 60],
    ["call", 4],
  ]);
  expect(html).toContain('<div class="lane" style="min-height:72px">');
});

test("a label ends about 6.6 px a character on a 900 px track: a call that starts before its end takes a row of its own, one that starts after it shares the row, whatever order the events come in", () => {
  // On an axis of 1000 ms, the label add(a) (6 characters) reaches 5.51 %: 55.1 ms.
  const at = (key: string, startedAt: number): HistoryEvent => ({
    op: "add",
    key,
    startedAt,
    endedAt: startedAt,
    process: "w",
  });
  const html = historyTimeline([at("d", 1000), at("c", 57), at("b", 53), at("a", 0)], []);
  const tops = [...html.matchAll(/top:(\d+)px" title="add\((\w)\)"/g)].map(([, top, key]) => [key, Number(top)]);
  expect(tops).toEqual([
    ["d", 4],
    ["c", 4],
    ["b", 40],
    ["a", 4],
  ]);
});

test("a call that starts where the bar before it ends, past its label, shares its row", () => {
  const html = historyTimeline(
    [
      { op: "add", key: "a", startedAt: 0, endedAt: 100 },
      { op: "add", key: "b", startedAt: 100, endedAt: 200 },
    ],
    [],
  );
  expect([...html.matchAll(/top:(\d+)px/g)].map(([, top]) => Number(top))).toEqual([4, 4]);
});

/** A counterexample as `checkConformance` reports one of overlapping calls. */
const overlapping = (calls: Counterexample["overlapping"]): Counterexample => ({
  invariant: { id: "linearizable", name: "overlapping calls answer as some order of them would", rule: "§10.8" },
  detail: "no order of the calls of round 1 gives their answers",
  maxRetries: 2,
  steps: [],
  shrinks: 0,
  minimal: true,
  shrinkMs: 0,
  shrinkCalls: 1,
  shrinkTimeMs: 1,
  shrinkRuns: 1,
  shrinkCommands: 1,
  replay: "wq3.token",
  overlapping: calls,
  round: 1,
});

test("overlapTimeline draws a report counterexample's overlapping calls with the rule it names and its token; a counterexample without calls to draw gives no page", () => {
  const call = {
    round: 1,
    call: "get()",
    afterPrevious: false,
    answer: { kind: "value" as const, value: "a" },
    invokedAt: 0,
    answeredAt: 2,
  };
  const html = overlapTimeline(overlapping([call, { ...call, invokedAt: 1, answeredAt: 3 }])) ?? "";
  expect(html).toContain("<b>linearizable (§10.8)</b>: no order of the calls of round 1 gives their answers");
  expect(html).toContain('<pre class="replay">wq3.token</pre>');
  expect(html).toContain('<div class="axis"><span>0 (logical clock)</span><span>3 (logical clock)</span></div>');
  expect(html.match(/class="bar call violating"/g)).toHaveLength(2);
  expect(overlapTimeline(overlapping([call]), { replay: "npx it" })).toContain('<pre class="replay">npx it</pre>');
  expect(overlapTimeline(overlapping([]))).toBeUndefined(); // a call never answered
  expect(overlapTimeline({ ...overlapping(undefined), steps: [] })).toBeUndefined(); // a sequence
});

test("overlapTimeline of a failure without calls draws no page; a rule given names the page's rule", () => {
  expect(overlapTimeline({ detail: "a call of round 1 never answered", maxRetries: 1, calls: [] })).toBeUndefined();
  const call = { round: 1, call: "get()", afterPrevious: false, answer: { kind: "value" as const, value: "a" } };
  const timed = { ...call, invokedAt: 0, answeredAt: 2 };
  expect(overlapTimeline(overlapping([timed]), { rule: "its own rule" })).toContain("<b>its own rule</b>");
});

test("each bar is placed in percent of the axis from the first time to the last: a call from start to answer, a lease's span from its hand-out to its done, a call without answer open at the end", () => {
  const html = historyTimeline(
    [
      { op: "add", key: "a", startedAt: 100, endedAt: 110, process: "p" },
      { op: "lease", key: "a", token: 1, expiresAt: 160, startedAt: 120, endedAt: 130, process: "p" },
      { op: "done", key: "a", token: 1, outcome: "ok", startedAt: 140, process: "p" },
    ],
    [],
  );
  expect(html).toContain(
    [
      '<div class="lane" style="min-height:36px"><div class="name">p</div><div class="track">',
      '<div class="bar call" style="left:0.000%;width:25.000%;top:4px" title="add(a)">add(a)</div>',
      '<div class="bar call" style="left:50.000%;width:25.000%;top:4px" title="lease a #1">lease a #1</div>',
      '<div class="bar lease" style="left:75.000%;width:25.000%;top:24px" title="lease a #1 until 140"></div>',
      '<div class="bar call open" style="left:100.000%;width:0.600%;top:4px" title="done(a #1) → ok">done(a #1) → ok</div>',
      "</div></div>",
    ].join(""),
  );
  expect(html).toContain('<div class="axis"><span>100 ms</span><span>140 ms</span></div>');
  // One instant: the axis is one unit wide, not zero.
  expect(historyTimeline([{ op: "add", key: "x", startedAt: 5 }], [])).toContain(
    'style="left:0.000%;width:0.600%;top:4px"',
  );
});
