/**
 * `checkConformance`: the sequential check of a factory's queues, in process, and then, for a queue whose calls can
 * overlap, the check of overlapping calls (overlap/); one report composed of the two checks' reports.
 */
import { ClockModel } from "../../model/index.js";
import { inProcess } from "../core/driver.js";
import { isThenable, type SubjectFactory } from "../core/subject.js";
import { checkSequential } from "./conformance.js";
import { type ConformanceOptions, inProcessDefaults, qualify } from "./options.js";
import { composed, notRun, overlapping } from "./overlap-part.js";
import { type ConformanceReport, overlapReplay } from "./report.js";

/**
 * Checks that the queues `factory` makes answer as the model does and keep every invariant of [docs/spec.md §10](../../docs/spec.md#§10-invariants),
 * over `runs` random command sequences, each on a fresh queue. A failure is shrunk to a short counterexample.
 *
 * The factory's queues may answer plain values or promises. The check never throws for a queue that breaks the
 * rules; it reports. It throws when the factory itself or an option is broken.
 *
 * @param factory - Makes a fresh, empty queue from `{ maxRetries }`, once per run.
 * @param options - What to check and how (see {@link ConformanceOptions}).
 * @example
 * ```ts
 * import { checkConformance } from "workqueue-spec/properties";
 *
 * const report = await checkConformance((options) => new MyQueue(options), { profile: "contract", runs: 500 });
 * if (report.verdict !== "conforms") console.log(report.counterexample);
 * ```
 *
 * @public
 */
export async function checkConformance<T>(
  factory: SubjectFactory<T>,
  options: ConformanceOptions = {},
): Promise<ConformanceReport> {
  const qualified = qualify(options, inProcessDefaults);
  if (qualified.replay?.replayPath === overlapReplay) {
    const overlap = await overlapping(factory, qualified, qualified.replay);
    return composed(notRun(qualified), overlap, qualified);
  }
  const { shutDown, timeoutMs, time } = qualified;
  const report = await checkSequential(inProcess(factory, { shutDown, timeoutMs, time }), qualified);
  if (report.verdict !== "conforms" || qualified.replay !== undefined) return report;
  if (!(qualified.overlapping ?? (await answersPromises(factory, time, qualified.items.few[0])))) return report;
  return composed(report, await overlapping(factory, qualified, undefined), qualified);
}

/**
 * Whether a fresh queue's `get`, or its `add` of `item`, answers a promise: a queue that does is asynchronous, and
 * its calls may overlap (an `add` whose promise a caller does not await must still have made its change, §10.8);
 * `checkConformance` then makes overlapping calls, unless its `overlapping` option says otherwise.
 *
 * @internal
 */
export async function answersPromises<T>(
  factory: SubjectFactory<T>,
  time: boolean,
  item: unknown = "a",
): Promise<boolean> {
  const subject = await factory({ maxRetries: 1, ...(time ? { clock: new ClockModel() } : {}) });
  const answers = [() => subject.get(), () => subject.add(item as T)].map((call) => {
    try {
      return call();
    } catch {
      return undefined; // an answer, not a promise
    }
  });
  const promised = answers.filter(isThenable);
  await Promise.all(promised.map((answer) => Promise.resolve(answer).then(undefined, () => undefined)));
  return promised.length > 0;
}
