/**
 * The conformance check: generate command sequences, plan them on the model, replay each plan against a fresh
 * implementation, shrink a failure to a short counterexample, and say how to replay it.
 */
import * as fc from "fast-check";
import { WorkQueueModel } from "../model/index.js";
import { type ItemUniverse, replayPathOf, type Scenario, type Shape, scenario, stringItems } from "./arbitraries.js";
import type { Plan, Profile } from "./commands.js";
import type { Coverage } from "./coverage.js";
import { type Invariant, invariants } from "./invariants.js";
import { isThenable, type SubjectFactory } from "./subject.js";
import { type Step, verify } from "./verify.js";

/** Options of {@link checkConformance}. */
export interface ConformanceOptions {
  /** Which calls sequences may make (see {@link Profile}). @defaultValue `"robust"` */
  readonly profile?: Profile;
  /** How many random sequences to run. @defaultValue `100` */
  readonly runs?: number;
  /** The random seed. @defaultValue a fresh one, printed in the report */
  readonly seed?: number | undefined;
  /**
   * Replays exactly one counterexample and nothing else: the `replay` token of a failed report
   * (`seed,path,replayPath`). Overrides `seed`.
   */
  readonly replay?: string | undefined;
  /** The longest sequence. @defaultValue 100 calls with few items, 250 with many */
  readonly maxCommands?: number | undefined;
  /** Which shapes of sequence to draw: few items hit hard, many items in a deep queue, or both. @defaultValue `"both"` */
  readonly shape?: Shape | "both";
  /** The items to draw from. @defaultValue {@link stringItems} */
  readonly items?: ItemUniverse;
  /** Whether error messages must equal the model's; otherwise only the error's name must. @defaultValue `false` */
  readonly compareMessages?: boolean;
  /** Where to count the transitions exercised. @defaultValue nowhere */
  readonly coverage?: Coverage | undefined;
  /**
   * Whether the queues offer `shutDown` (docs/spec.md §12), so that sequences call it and check what follows;
   * `shuttingDown` is then checked too, if offered. Without it, a queue is checked exactly as one without shutdown.
   * @defaultValue `false`
   */
  readonly shutDown?: boolean | undefined;
}

/** The outcome of {@link checkConformance}. */
export interface ConformanceReport {
  /** Whether every sequence kept every invariant and every answer matched the model's. */
  readonly verdict: "conforms" | "does not conform";
  /** The profile that was checked. */
  readonly profile: Profile;
  /** Sequences run, up to and including the first failure; shrinking is not counted. */
  readonly runs: number;
  /** Calls made on implementations, shrinking included. */
  readonly commands: number;
  /** The named checks run after every step. */
  readonly invariants: readonly Invariant[];
  /** The seed, to run the same sequences again. */
  readonly seed: number;
  /** On failure: the shortest failing sequence found. */
  readonly counterexample?: Counterexample | undefined;
}

/** A shrunk failing sequence: what broke, the numbered steps, and how to replay it. */
export interface Counterexample {
  /** The invariant that the last step breaks. */
  readonly invariant: Invariant;
  /** What went wrong at the last step, in one sentence. */
  readonly detail: string;
  /** The `maxRetries` the queue was made with. */
  readonly maxRetries: number;
  /** The steps, the failing one last: each call with the model's and the implementation's answers and views. */
  readonly steps: readonly Step[];
  /** How many shrinking steps led from the first failing sequence to this one. */
  readonly shrinks: number;
  /** The token that replays exactly this counterexample: pass it back as the `replay` option. */
  readonly replay: string;
}

/** Thrown inside the property so that fast-check shrinks the sequence and hands the violation back. */
class ViolationError extends Error {
  constructor(readonly counterexample: Omit<Counterexample, "shrinks" | "replay">) {
    super(`${counterexample.invariant.name}: ${counterexample.detail}`);
  }
}

/** Plans a run on the model: the operations that `fc.modelRun` lets through, in order. */
export function planOf(input: Scenario): Plan {
  const plan: Plan = [];
  const setup = () => ({ model: new WorkQueueModel<unknown>({ maxRetries: input.maxRetries }), real: plan });
  fc.modelRun(setup, input.commands);
  return plan;
}

/** A replay token's parts: `seed,path,replayPath`. */
function parseReplay(token: string): { seed: number; path: string; replayPath: string } {
  const [seed = "", path = "", replayPath = ""] = token.split(",");
  if (!/^-?\d+$/.test(seed) || !/^\d+(:\d+)*$/.test(path)) {
    throw new RangeError(
      `Expected \`replay\` to be a token such as "42,0:1:3,AAAE:A", got \`${JSON.stringify(token)}\``,
    );
  }
  return { seed: Number(seed), path, replayPath };
}

/**
 * Checks that the queues `factory` makes answer as the model does and keep every invariant of docs/spec.md §10,
 * over `runs` random command sequences, each on a fresh queue. A failure is shrunk to a short counterexample.
 *
 * The factory's queues may answer plain values or promises. The check never throws for a queue that breaks the
 * rules; it reports. It throws when the factory itself or an option is broken.
 *
 * @example
 * ```ts
 * import { checkConformance } from "workqueue-spec/properties";
 *
 * const report = await checkConformance((options) => new MyQueue(options), { profile: "contract", runs: 500 });
 * if (report.verdict !== "conforms") console.log(report.counterexample);
 * ```
 */
export async function checkConformance<T>(
  factory: SubjectFactory<T>,
  options: ConformanceOptions = {},
): Promise<ConformanceReport> {
  const profile = options.profile ?? "robust";
  const replay = options.replay === undefined ? undefined : parseReplay(options.replay);
  const spec = {
    profile,
    items: options.items ?? stringItems,
    maxCommands: options.maxCommands,
    replayPath: replay?.replayPath,
    shutDown: options.shutDown,
  };
  const shape = options.shape ?? "both";
  const arbitrary =
    shape === "both"
      ? fc.oneof(scenario({ ...spec, shape: "few" }), scenario({ ...spec, shape: "many" }))
      : scenario({ ...spec, shape });
  let commands = 0;
  const property = fc.asyncProperty(arbitrary, async (input) => {
    const plan = planOf(input);
    const made = factory({ maxRetries: input.maxRetries });
    const subject = isThenable(made) ? await made : made;
    if (options.shutDown === true && typeof subject.shutDown !== "function") {
      throw new TypeError("Expected the factory's queues to offer `shutDown()`, as `options.shutDown` is true");
    }
    commands += plan.length;
    const verifyOptions = { compareMessages: options.compareMessages ?? false, coverage: options.coverage };
    const violation = await verify(plan, input.maxRetries, subject as never, verifyOptions);
    if (violation !== undefined) throw new ViolationError(violation);
  });
  const details = await fc.check(property, {
    numRuns: options.runs ?? 100,
    ...(options.seed === undefined ? {} : { seed: options.seed }),
    ...(replay === undefined ? {} : { seed: replay.seed, path: replay.path, endOnFailure: true }),
  });
  const report = { profile, runs: details.numRuns, commands, invariants, seed: details.seed };
  if (!details.failed) return { ...report, verdict: "conforms" };
  if (!(details.errorInstance instanceof ViolationError)) throw details.errorInstance;
  const [input] = details.counterexample ?? [];
  const token = [details.seed, details.counterexamplePath, input === undefined ? "" : replayPathOf(input)].join(",");
  const counterexample = { ...details.errorInstance.counterexample, shrinks: details.numShrinks, replay: token };
  return { ...report, verdict: "does not conform", counterexample };
}
