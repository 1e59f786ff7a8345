/**
 * Histories you can look at (issue 33): a self-contained HTML page that draws a failure with overlapping calls, or a
 * multi-process history, as a timeline — one lane per caller or process, each call a bar from its invocation to its
 * answer, leases as spans with their tokens, the calls that show the violation outlined, the rule named and the
 * replay line ready to copy. No network, no external script or style: the page is one string to write to a file.
 */
import { showAnswer } from "../core/render.js";
import type { HistoryEvent, HistoryViolation } from "../history/check-history.js";
import type { OverlapCall } from "../overlap/runs.js";
import type { Counterexample } from "../sequential/report.js";

/** One bar of a lane: a call from its start to its answer (open-ended when it never answered), or a lease's span. */
interface Bar {
  readonly lane: string;
  readonly from: number;
  /** Absent for a call that never answered: drawn to the end of the axis, dashed. */
  readonly to: number | undefined;
  readonly label: string;
  readonly kind: "call" | "lease";
  readonly violating: boolean;
}

/** What a page shows: a title, the broken rules with what happened, the bars, and how to replay. */
interface Page {
  readonly title: string;
  readonly rules: readonly { readonly rule: string; readonly message: string }[];
  readonly bars: readonly Bar[];
  /** The unit of the time axis, for its caption: `ms`, or the steps of a logical clock. */
  readonly unit: string;
  readonly replay?: string | undefined;
}

/** Escapes text for HTML content and attribute values. */
function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** The page's style: lanes as rows, bars positioned in percent of the axis. */
const style = `
body { font: 14px system-ui, sans-serif; margin: 24px; color: #1d2330; }
h1 { font-size: 18px; }
.rule { border-left: 4px solid #c62828; padding: 4px 10px; margin: 8px 0; background: #fdecea; }
.rule b { color: #c62828; }
.lanes { position: relative; margin-top: 16px; }
.lane { display: flex; align-items: stretch; border-top: 1px solid #e3e6ec; }
.name { width: 120px; flex: none; padding: 8px 6px; font-weight: 600; }
.track { position: relative; flex: 1; }
.bar { position: absolute; height: 18px; box-sizing: border-box; border-radius: 3px; padding: 0 4px;
  font-size: 12px; line-height: 18px; white-space: nowrap; overflow: visible; background: #dbe7fb; border: 1px solid #5b8bd9; }
.bar.lease { height: 8px; background: #c8e6c9; border-color: #43a047; padding: 0; }
.bar.open { border-style: dashed; border-right: none; }
.bar.violating { border: 2px solid #c62828; background: #fdecea; }
.axis { margin-left: 126px; color: #6b7280; font-size: 12px; display: flex; justify-content: space-between; }
pre { background: #f3f4f6; padding: 8px; white-space: pre-wrap; overflow-wrap: anywhere; }
`;

/** Copies the replay line; inline, since the page loads nothing. */
const script = `document.querySelector("button.copy")?.addEventListener("click", () => {
  navigator.clipboard.writeText(document.querySelector("pre.replay").textContent);
});`;

/** The height of a row of a lane: a call's bar, and a lease's span under it. */
const rowPx = 36;

/**
 * The width of a call's label in percent of the axis, estimated for a track about 900 px wide (12 px text, about
 * 6.6 px a character): the page is laid out before any browser measures it, so a wider window only adds room.
 */
function labelPercent(label: string): number {
  return ((label.length * 6.6 + 10) / 900) * 100;
}

/**
 * The row of each bar of one lane, so that no call's bar or label runs into another call's: a call goes to the first
 * row where the calls placed so far end (label included) before it starts, earliest call first; a lease's span
 * goes under the call that handed it out (the bar before it).
 */
function stacked(bars: readonly Bar[], percent: (time: number) => number, last: number): Map<Bar, number> {
  const rows = new Map<Bar, number>();
  const ends: number[] = [];
  const calls = bars.filter((bar) => bar.kind === "call").sort((a, b) => a.from - b.from);
  for (const call of calls) {
    const left = percent(call.from);
    const end = Math.max(percent(call.to ?? last), left + labelPercent(call.label));
    const row = ends.findIndex((rowEnd) => rowEnd <= left);
    const placed = row < 0 ? ends.length : row;
    ends[placed] = end;
    rows.set(call, placed);
  }
  bars.forEach((bar, i) => {
    if (bar.kind === "lease") rows.set(bar, rows.get(bars[i - 1] as Bar) ?? 0);
  });
  return rows;
}

/** Renders `page` as a self-contained HTML document. */
function render(page: Page): string {
  const starts = page.bars.map((bar) => bar.from);
  const ends = page.bars.flatMap((bar) => [bar.from, bar.to ?? bar.from]);
  const first = Math.min(...starts);
  const last = Math.max(...ends);
  const span = last > first ? last - first : 1;
  const percent = (time: number) => ((time - first) / span) * 100;
  const lanes = [...new Set(page.bars.map((bar) => bar.lane))];
  const rows = lanes.map((lane) => {
    const mine = page.bars.filter((bar) => bar.lane === lane);
    const rowOf = stacked(mine, percent, last);
    const bars = mine.map((bar) => {
      const left = percent(bar.from);
      const width = Math.max(percent(bar.to ?? last) - left, 0.6);
      const top = (rowOf.get(bar) ?? 0) * rowPx + (bar.kind === "call" ? 4 : 24);
      const classes = ["bar", bar.kind, bar.to === undefined ? "open" : "", bar.violating ? "violating" : ""];
      return `<div class="${classes.filter((c) => c !== "").join(" ")}" style="left:${left.toFixed(3)}%;width:${width.toFixed(3)}%;top:${top}px" title="${escapeHtml(bar.label)}">${bar.kind === "call" ? escapeHtml(bar.label) : ""}</div>`;
    });
    const height = (Math.max(0, ...rowOf.values()) + 1) * rowPx;
    return `<div class="lane" style="min-height:${height}px"><div class="name">${escapeHtml(lane)}</div><div class="track">${bars.join("")}</div></div>`;
  });
  const rules = page.rules.map((r) => `<div class="rule"><b>${escapeHtml(r.rule)}</b>: ${escapeHtml(r.message)}</div>`);
  const replay =
    page.replay === undefined
      ? ""
      : `<h2>Replay</h2><pre class="replay">${escapeHtml(page.replay)}</pre><button class="copy">Copy</button>`;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(page.title)}</title><style>${style}</style></head>
<body><h1>${escapeHtml(page.title)}</h1>
${rules.join("\n")}
<div class="lanes">${rows.join("\n")}</div>
<div class="axis"><span>${first} ${escapeHtml(page.unit)}</span><span>${last} ${escapeHtml(page.unit)}</span></div>
${replay}
<script>${script}</script>
</body></html>
`;
}

/**
 * A failure with overlapping calls, whichever check made them: `checkOverlapping`'s counterexample is one, and so is
 * any other whose calls carry their round and their logical times.
 *
 * @inline
 */
export interface OverlapFailure {
  /** What went wrong, in words. */
  readonly detail: string;
  /** The `maxRetries` of the queue. */
  readonly maxRetries: number;
  /** The calls, in the order they were made, each with its round, answer and times. */
  readonly calls: readonly OverlapCall[];
  /** The round that no order of its calls explains: its calls are outlined. */
  readonly round?: number | undefined;
}

/**
 * A failing run of overlapping calls as a timeline page: the calls of a round side by side, one lane per position in
 * the round (the callers that made them at once), each call a bar from when it was made to when its answer was seen
 * on the run's logical clock; the round that no order explains is outlined.
 *
 * @param failure - `checkOverlapping`'s counterexample, or the counterexample of `checkConformance` or `checkDriver`
 * (its overlapping calls, `counterexample.overlapping`, whichever check made them, and the rule it names), or any
 * failure whose calls carry their round and times.
 * @param options - `replay`: the line that replays it (a token or a command line), shown ready to copy (default: a
 * report counterexample's token); `rule`: the rule it broke, as the page names it (default: the one a report
 * counterexample names, otherwise `linearizable (§10.8)`).
 * @returns The HTML document, or `undefined` when there is nothing to draw: a counterexample that is a sequence of
 * calls made one at a time (its numbered steps say all), or a run whose first call never answered.
 * @public
 * @example
 * ```ts
 * import { writeFileSync } from "node:fs";
 * import { checkOverlapping, overlapTimeline } from "workqueue-spec/properties";
 *
 * const report = await checkOverlapping((options) => new MyAsyncQueue(options), { seed: 1 });
 * const page = report.counterexample && overlapTimeline(report.counterexample);
 * if (page !== undefined) writeFileSync("failure.html", page);
 * ```
 */
export function overlapTimeline(
  failure: OverlapFailure | Counterexample,
  options: { readonly replay?: string | undefined; readonly rule?: string | undefined } = {},
): string | undefined {
  if (!("calls" in failure)) {
    const { detail, maxRetries, round, invariant, overlapping = [] } = failure;
    const replay = options.replay ?? failure.replay;
    const rule = options.rule ?? `${invariant.id} (${invariant.rule})`;
    return overlapTimeline({ detail, maxRetries, round, calls: overlapping }, { replay, rule });
  }
  if (failure.calls.length === 0) return undefined;
  const positions = new Map<number, number>();
  const bars = failure.calls.map((call): Bar => {
    const position = (positions.get(call.round) ?? 0) + 1;
    positions.set(call.round, position);
    return {
      lane: `caller ${position}`,
      from: call.invokedAt,
      to: call.answeredAt,
      label: `round ${call.round}: ${call.call} → ${showAnswer(call.answer)}`,
      kind: "call",
      violating: call.round === failure.round,
    };
  });
  return render({
    title: `Overlapping calls, maxRetries ${failure.maxRetries}: no order explains the answers`,
    rules: [{ rule: options.rule ?? "linearizable (§10.8)", message: failure.detail }],
    bars,
    unit: "(logical clock)",
    replay: options.replay,
  });
}

/** What a history event's bar says: the call and its answer. */
function labelOf(event: HistoryEvent): string {
  if (event.op === "add") return `add(${event.key})`;
  if (event.op === "lease") return `lease ${event.key} #${event.token}`;
  const outcome = event.outcome === undefined ? "no answer" : String(event.outcome);
  return `${event.op}(${event.key} #${event.token}) → ${outcome}`;
}

/**
 * A history checked by `checkHistory` as a timeline page: one lane per process (`event.process`, or one lane when
 * the events do not say), each call a bar from `startedAt` to `endedAt` (dashed when its process died first), each
 * lease a span under it from its hand-out to its `done` or expiry, with its token; the events of every violation
 * outlined and the violations listed.
 *
 * @param events - The history, as given to `checkHistory`.
 * @param violations - What `checkHistory` found in it (an empty list draws the history alone).
 * @param options - `replay`: the line that runs it again (the test's command, say), shown ready to copy.
 * @returns The HTML document.
 * @public
 * @example
 * ```ts
 * import { writeFileSync } from "node:fs";
 * import { checkHistory, historyTimeline } from "workqueue-spec/properties";
 *
 * const violations = checkHistory(events, { maxRetries: 5 });
 * if (violations.length > 0) writeFileSync("history.html", historyTimeline(events, violations));
 * ```
 */
export function historyTimeline(
  events: readonly HistoryEvent[],
  violations: readonly HistoryViolation[],
  options: { readonly replay?: string | undefined } = {},
): string {
  const shown = new Set(violations.flatMap((v) => v.events));
  const laneOf = (event: HistoryEvent) => event.process ?? "all calls";
  const bars: Bar[] = [];
  for (const event of events) {
    const violating = shown.has(event);
    bars.push({
      lane: laneOf(event),
      from: event.startedAt,
      to: event.endedAt,
      label: labelOf(event),
      kind: "call",
      violating,
    });
    if (event.op !== "lease") continue;
    const finished = events.find(
      (e) => e.op === "done" && e.key === event.key && e.token === event.token && e.outcome !== "stale",
    );
    const until = Math.min(finished?.startedAt ?? event.expiresAt, event.expiresAt);
    const label = `lease ${event.key} #${event.token} until ${until}`;
    bars.push({ lane: laneOf(event), from: event.endedAt, to: until, label, kind: "lease", violating });
  }
  return render({
    title:
      violations.length === 0
        ? `A history of ${events.length} calls: no violation`
        : `A history of ${events.length} calls: ${violations.length} violation${violations.length === 1 ? "" : "s"}`,
    rules: violations,
    bars,
    unit: "ms",
    replay: options.replay,
  });
}
