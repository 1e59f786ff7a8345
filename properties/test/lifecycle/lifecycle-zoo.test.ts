/**
 * `checkLifecycle` is sharp: it rejects each queue of its zoo — one lifecycle bug each, of the kind real queues have
 * — naming the rule the bug breaks, with a counterexample that shows the calls and the scheduled resolutions, the
 * seed and a replay token that fails the same way.
 */
import { describe, expect, test } from "vitest";
import { checkLifecycle } from "../../lifecycle/check-lifecycle.js";
import type { LifecycleRule } from "../../lifecycle/rules.js";
import { formatReport } from "../../report/text.js";
import { runs, seed } from "../settings.js";
import { lifecycleZoo } from "../wrong/lifecycle.js";

describe.each(lifecycleZoo)("checkLifecycle rejects %s", (_, Queue, rules, time) => {
  const [rule] = rules as [LifecycleRule];
  test(`naming the rule: ${rule.name} (${rule.rule})`, async () => {
    const report = await checkLifecycle((options) => new Queue(options), { runs: runs(400), seed, time });
    const text = formatReport(report);
    expect(report.verdict, text).toBe("does not conform");
    const found = report.counterexample?.rule as LifecycleRule;
    expect(rules, text).toContain(found);
    expect(text).toContain(`(docs/spec.md ${found.rule})`);
    expect(text).toContain(`seed ${report.seed}`);
    const again = await checkLifecycle((options) => new Queue(options), {
      replay: report.counterexample?.replay,
      time,
    });
    expect([again.verdict, again.runs, again.counterexample?.rule, again.counterexample?.detail]).toEqual([
      "does not conform",
      1,
      found,
      report.counterexample?.detail,
    ]);
  });
});
