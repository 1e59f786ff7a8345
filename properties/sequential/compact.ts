/**
 * Compaction: shrinking what repeats before single calls. A deep run's failure is tens of thousands of calls, most
 * of them the expansion of one or two macros (a cycle ×40,000, a drain ×1,000); removing calls from the plan costs
 * a run of the whole plan per attempt, and in the contract profile cannot cut a rotation short without leaving a
 * `done` of an item not held. Shrinking the macro's count instead plans the run again on the model, so every call
 * after it stays allowed, and one attempt removes thousands of calls.
 */
import type { Scenario } from "../core/arbitraries.js";
import type { Planning, QueueCommand } from "../core/commands.js";
import type { Driver } from "../core/driver.js";
import { MacroCommand } from "../core/macros.js";
import { modelOf, type VerifyOptions, type Violation, verifyStarted } from "../core/verify.js";
import type { MinimizeLimits, Shrunk } from "./minimize.js";

/** A generated command, unwrapped from fast-check's wrapper of it, if wrapped. */
function unwrapped(command: QueueCommand): QueueCommand {
  return (command as { cmd?: QueueCommand }).cmd ?? command;
}

/**
 * Plans `commands` on a fresh model, as `fc.modelRun` does (each command that is applicable runs), but only until
 * the plan reaches `limit` calls: the planning so far, whether it stayed below `limit` (a candidate no shorter than
 * the failure is not planned to its end), and how many commands began below it.
 */
function planBelow(
  input: Scenario,
  commands: readonly QueueCommand[],
  limit: number,
): { planning: Planning; below: boolean; begun: number } {
  const model = modelOf(input.maxRetries, input.backoff);
  const planning: Planning = { plan: [], expected: [] };
  let begun = 0;
  for (const command of commands) {
    if (planning.plan.length >= limit) break;
    begun++;
    if (command.check(model)) command.run(model, planning);
  }
  return { planning, below: planning.plan.length < limit, begun };
}

/**
 * Shrinks the count of each macro of `input`, the largest first, while the run still fails with fewer calls: to 1
 * at once, or else halving it while it fails. Each attempt is one run on a fresh queue, charged to the budget; each
 * count kept counts as a removal, so that a replay, which stops after as many removals, makes the same ones.
 * Resolves with the shortest violation, the run it came from, and the removals, runs and calls made.
 */
export async function compact(
  input: Scenario,
  violation: Violation,
  driver: Driver,
  options: VerifyOptions,
  limits: MinimizeLimits = {},
): Promise<Shrunk> {
  // The commands whose calls all come after the failing step change nothing before it: they go, unplanned.
  const all = [...input.commands].map(unwrapped);
  const commands = all.slice(0, planBelow(input, all, violation.steps.length).begun);
  let best = violation;
  let removals = 0;
  let runs = 0;
  let calls = 0;
  const stop = () => removals >= (limits.removals ?? Number.POSITIVE_INFINITY) || limits.budget?.exhausted === true;
  /** Runs the scenario with the `index`-th macro's count set to `count`; keeps it if it fails in fewer calls. */
  const keep = async (index: number, count: number): Promise<boolean> => {
    const macro = commands[index] as MacroCommand;
    const changed = [...commands];
    changed[index] = new MacroCommand(macro.kind, count, macro.start, macro.many, macro.few);
    const candidate = planBelow(input, changed, best.steps.length);
    if (!candidate.below) return false;
    const { plan, expected } = candidate.planning;
    runs++;
    calls += plan.length;
    limits.budget?.charge(plan.length);
    const { maxRetries, backoff } = input;
    const run = { maxRetries, backoff, plan, expected };
    const failing = await verifyStarted(driver.start(maxRetries, plan, backoff), run, options);
    if (failing === undefined || failing.steps.length >= best.steps.length) return false;
    best = failing;
    commands[index] = changed[index] as MacroCommand;
    removals++;
    return true;
  };
  const macros = commands
    .map((command, index) => ({ command, index }))
    .filter((entry): entry is { command: MacroCommand; index: number } => entry.command instanceof MacroCommand)
    .sort((a, b) => b.command.count - a.command.count);
  for (const { index } of macros) {
    const count = () => (commands[index] as MacroCommand).count;
    if (stop() || count() <= 1 || (await keep(index, 1))) continue;
    while (!stop() && count() > 1 && (await keep(index, count() >> 1)));
  }
  return { violation: best, removals, runs, commands: calls };
}
