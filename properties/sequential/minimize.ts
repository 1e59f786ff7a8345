/**
 * The last step of shrinking. fast-check shrinks the generated commands, and stops where removing any one of them
 * changes what the others do (a `done` of "the 2nd item in flight" names another item once an earlier `get` is
 * gone). The failing plan itself is made of concrete calls, so removing calls from it has no such knock-on effect:
 * this removes every call of one verb, the calls on groups of items, chunks of calls, single calls, then (in short
 * plans) every window of 2 to 4 calls, renames items to the fewest distinct ones, and (in short timed plans) makes a
 * call that can make an item wait a plain `add`, as long as the plan still fails, cutting what is left where the
 * profile stops allowing it.
 */
import type { Plan, Profile } from "../core/commands.js";
import type { Driver } from "../core/driver.js";
import { type Backoff, type Operation, sameItem } from "../core/operation.js";
import type { ShrinkBudget } from "../core/shrink-budget.js";
import { perform } from "../core/subject.js";
import { modelOf, type VerifyOptions, type Violation, verifyStarted } from "../core/verify.js";

/**
 * The longest prefix of `plan` that `profile` may make: in the contract profile, up to the first `done` or `retry`
 * of an item not held. A removal can leave a later call without its `get` while the calls before it still fail.
 */
function allowedPrefix(plan: Plan, profile: Profile, maxRetries: number, backoff?: Backoff): Plan {
  if (profile === "robust") return plan;
  const model = modelOf(maxRetries, backoff);
  const end = plan.findIndex((operation) => {
    const held = operation.verb === "done" || operation.verb === "retry";
    if (held && !model.stateOf(operation.item).startsWith("in flight")) return true;
    perform(model, operation);
    return false;
  });
  return end < 0 ? plan : plan.slice(0, end);
}

/** The distinct items of `plan` (§1.1), in the order they are first used. */
function itemsOf(plan: Plan): unknown[] {
  const items = new Set<unknown>(); // a Set tells values apart as §1.1 does (SameValueZero), in insertion order
  for (const operation of plan) if ("item" in operation) items.add(operation.item);
  return [...items];
}

/** Whether `operation` is a call on one of `items`. */
function onAny(operation: Operation, items: readonly unknown[]): boolean {
  return "item" in operation && items.some((item) => sameItem(item, operation.item));
}

/** Plans of at most this many calls are also tried without every window of 2 to 4 consecutive calls. */
const windowed = 64;

/** What a shrinking step resolves with: the shortest violation found, the removals it kept, and the runs and calls it made. */
export interface Shrunk {
  readonly violation: Violation;
  readonly removals: number;
  readonly runs: number;
  readonly commands: number;
}

/** Where minimizing stops early. */
export interface MinimizeLimits {
  /** The shrinking budget, shared with fast-check's shrinking: each attempt is charged its calls. */
  readonly budget?: ShrinkBudget | undefined;
  /** The removals after which it stops: a replay repeats exactly the removals the original made. */
  readonly removals?: number | undefined;
}

/**
 * Removes calls from the plan of `violation` while the implementation still breaks an invariant on what is left:
 * halves, quarters, … of the plan, then single calls until no single call can go, then in a plan of at most 64
 * calls every window of 4, 3 and 2 calls; then lowers `maxRetries` and starts over. Resolves with the shortest
 * violation found, how many removals it took, and how many calls the attempts made; the budget says whether it
 * stopped before nothing more could go. Each attempt is one run on a fresh queue; a removal is kept only if that run fails, so an implementation that answers differently from run to
 * run at worst keeps the plan as it was.
 */
export async function minimize(
  violation: Violation,
  driver: Driver,
  profile: Profile,
  options: VerifyOptions,
  limits: MinimizeLimits = {},
): Promise<Shrunk> {
  let best = violation;
  let removals = 0;
  let runs = 0;
  let commands = 0;
  /** Whether a limit says to stop now: the budget is spent, or the removals a replay must repeat are made. */
  const stop = () => removals >= (limits.removals ?? Number.POSITIVE_INFINITY) || limits.budget?.exhausted === true;
  /** One run of `plan` on a fresh queue: the violation, if it still fails. */
  const attempt = (plan: Plan, maxRetries: number, backoff: Backoff | undefined) => {
    runs++;
    commands += plan.length;
    limits.budget?.charge(plan.length);
    return verifyStarted(driver.start(maxRetries, plan, backoff), { maxRetries, backoff, plan }, options);
  };
  /** The plan of the shortest violation so far. */
  const planOfBest = (): Plan => best.steps.map((step) => step.operation);
  /**
   * Tries `changed` on a queue with `maxRetries`, cut where the profile stops allowing it; keeps it if it still
   * fails. Whether it did.
   */
  const keep = async (changed: Plan, maxRetries = best.maxRetries): Promise<boolean> => {
    const { backoff } = best;
    const plan = allowedPrefix(changed, profile, maxRetries, backoff);
    const failing = plan.length === 0 ? undefined : await attempt(plan, maxRetries, backoff);
    if (failing === undefined) return false;
    best = failing;
    removals++;
    return true;
  };
  /**
   * One pass removing `size` calls at a time, from starts `stride` apart; whether it removed any. What is left is cut
   * at the first call the profile does not allow there.
   */
  const pass = async (size: number, stride = size): Promise<boolean> => {
    const before = removals;
    for (let start = 0; start < best.steps.length && !stop(); ) {
      const removed = planOfBest();
      removed.splice(start, size);
      if (!(await keep(removed))) start += stride;
    }
    return removals > before;
  };
  /** Removes every call of one verb at a time: the noise of a long history often goes in one attempt. */
  const verbs = async (): Promise<void> => {
    for (const verb of ["forget", "retry", "done", "add", "get", "addAfter", "advance", "shutDown"] as const) {
      const plan = planOfBest();
      if (stop() || !plan.some((operation) => operation.verb === verb)) continue;
      await keep(plan.filter((operation) => operation.verb !== verb));
    }
  };
  /**
   * Changes the calls on the plan's items, `size` items at a time, but never those on the failing call's item:
   * `remove` drops them, `rename` makes them calls on the first of the plan's items, so that a counterexample uses
   * the fewest distinct items. Whether it changed any.
   */
  const items = async (size: number, how: "remove" | "rename"): Promise<boolean> => {
    const before = removals;
    for (let start = 0; !stop(); ) {
      const plan = planOfBest();
      const last = plan.at(-1) as Operation;
      const all = itemsOf(plan);
      const [first] = all;
      const spared = "item" in last ? [last.item, ...(how === "rename" ? [first] : [])] : [first];
      const chosen = all.filter((item) => !onAny({ verb: "add", item }, spared)).slice(start, start + size);
      if (chosen.length === 0) break;
      const changed =
        how === "remove"
          ? plan.filter((operation) => !onAny(operation, chosen))
          : plan.map((operation) => (onAny(operation, chosen) ? { ...operation, item: first } : operation));
      if (!(await keep(changed as Plan))) start += size;
    }
    return removals > before;
  };
  /**
   * In a short timed plan, tries each call that can make an item wait (`addAfter`, and `retry` with a backoff) as a
   * plain `add` of its item: a counterexample that needs an item dirty or queued often got there through a wait
   * that fell due, in more calls. Whether it changed any.
   */
  const simplify = async (): Promise<boolean> => {
    const before = removals;
    for (let i = 0; i < best.steps.length && !stop(); i++) {
      const plan = planOfBest();
      const operation = plan[i] as Operation;
      const waits = operation.verb === "addAfter" || (operation.verb === "retry" && best.backoff !== undefined);
      if (!waits || !("item" in operation)) continue;
      plan[i] = { verb: "add", item: operation.item };
      await keep(plan);
    }
    return removals > before;
  };
  /** The items passes, halving the number of items changed at once, down to one. */
  const bisect = async (how: "remove" | "rename"): Promise<boolean> => {
    let changed = false;
    for (let size = Math.ceil(itemsOf(planOfBest()).length / 2); size >= 1 && !stop(); size = size >> 1) {
      if (await items(size, how)) changed = true;
    }
    return changed;
  };
  /**
   * Lowers `maxRetries` to the smallest value, from 0 up, at which the plan still fails and the profile still
   * allows it: a bug that shows with a bound of 3 usually shows with 0, in fewer calls. Counts as one removal.
   */
  const lower = async (): Promise<boolean> => {
    const ceiling = Math.min(best.maxRetries, 7);
    for (let lowered = 0; lowered < ceiling && !stop(); lowered++) if (await keep(planOfBest(), lowered)) return true;
    return false;
  };
  await verbs();
  await bisect("remove");
  for (let size = best.steps.length >> 1; size > 1; size >>= 1) await pass(size);
  // Single calls, then windows, then fewer items, and again after each lowering of maxRetries, until nothing goes.
  do {
    while ((await pass(1)) && !stop());
    // A few calls that only matter together (a get, the retry of what it got and its done) go only together, and
    // chunks at fixed starts miss them; in a short plan every window of 2 to 4 calls is cheap to try.
    let again = best.steps.length <= windowed;
    while (again && !stop()) {
      again = false;
      for (const size of [4, 3, 2]) if (await pass(size, 1)) again = true;
      if (again) while ((await pass(1)) && !stop());
    }
    if (!stop() && (await bisect("rename"))) while ((await pass(1)) && !stop());
    if (best.steps.length <= windowed && !stop() && (await simplify())) while ((await pass(1)) && !stop());
  } while (!stop() && (await lower()));
  return { violation: best, removals, runs, commands };
}
