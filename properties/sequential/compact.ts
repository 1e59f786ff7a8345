/**
 * Compaction: shrinking what repeats before single calls. A deep run's failure is tens of thousands of calls, most
 * of them the expansion of one or two macros (a cycle ×40,000, a drain ×1,000); removing calls from the plan costs
 * a run of the whole plan per attempt, and in the contract profile cannot cut a rotation short without leaving a
 * `done` of an item not held. Shrinking the macro's count instead plans the run again on the model, so every call
 * after it stays allowed, and one attempt removes thousands of calls.
 */
import type { Scenario } from "../core/arbitraries.js";
import type { QueueCommand } from "../core/commands.js";
import type { Driver } from "../core/driver.js";
import { MacroCommand } from "../core/macros.js";
import { type VerifyOptions, type Violation, verifyStarted } from "../core/verify.js";
import type { MinimizeLimits } from "./minimize.js";
import { planOf } from "./plan.js";

/** A generated command, unwrapped from fast-check's wrapper of it, if wrapped. */
function unwrapped(command: QueueCommand): QueueCommand {
  return (command as { cmd?: QueueCommand }).cmd ?? command;
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
): Promise<{ violation: Violation; removals: number; runs: number; commands: number }> {
  const commands = [...input.commands].map(unwrapped);
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
    const { plan, expected } = planOf({ ...input, commands: changed });
    if (plan.length >= best.steps.length) return false;
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
