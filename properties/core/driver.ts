/**
 * Drivers: how a plan reaches an implementation. The in-process driver calls a queue's methods; the protocol
 * driver (properties/protocol/) writes requests to a child process. Either way, verification sees one
 * observation per step: the answer and the views.
 */

import { ClockModel } from "../../model/index.js";
import { ProtocolBreach } from "./breach.js";
import { Deadline } from "./deadline.js";
import type { Views } from "./invariants.js";
import type { Answer, Backoff, Operation } from "./operation.js";
import { defaultTimeoutMs } from "./options.js";
import { showCall, showValue } from "./render.js";
import {
  capture,
  isThenable,
  type MaybePromise,
  perform,
  readView,
  type Subject,
  type SubjectFactory,
} from "./subject.js";

/**
 * What the implementation answered to one call and showed right after it.
 *
 * @inline
 */
export interface Observation {
  /** The answer. */
  readonly answer: Answer;
  /** The views the implementation offers, read after the call. */
  readonly views: Views;
}

/**
 * Makes the next observation of a run: performs the step's call and reads the views. Called in step order.
 *
 * @inline
 */
export type Observe = (operation: Operation, index: number) => MaybePromise<Observation>;

/**
 * Runs plans on an implementation, one fresh queue per run.
 *
 * @example
 * ```ts
 * import { checkDriver, type Driver } from "workqueue-spec/properties";
 *
 * // Your own transport; `connect`'s driver is one of these over a child process.
 * const driver: Driver = { start: (maxRetries, plan) => myTransport.start(maxRetries, plan) };
 * const report = await checkDriver(driver, { runs: 50 });
 * ```
 *
 * @public
 */
export interface Driver {
  /**
   * Starts a run on a fresh queue with `maxRetries`; the run's whole plan is given, so it may be sent ahead.
   *
   * @param maxRetries - The `maxRetries` of the fresh queue.
   * @param plan - Every call the run will make, in order.
   * @param backoff - When time is checked, the backoff the fresh queue's `retry` requeues with, if any.
   */
  start(maxRetries: number, plan: readonly Operation[], backoff?: Backoff): MaybePromise<Observe>;
  /**
   * How many later runs may be started before a run has been verified: a driver that sends each run ahead in one
   * write can take more while the gate verifies. @defaultValue 0: each run starts after the previous one is checked
   */
  readonly lookahead?: number;
  /**
   * The views this implementation could show at all: a report lists as checked without only the views it could
   * have shown and did not. Protocol v1 carries `size` (`len`), `shuttingDown`, `waiting` and, with `time`, the
   * metrics (the `metrics` feature), never `inFlight` or `failures`. @defaultValue every view: an in-process queue
   * may offer any
   */
  readonly offers?: readonly (keyof Views)[];
  /**
   * How a fresh queue with `maxRetries` and `backoff` is made, in the implementation's own language, as a
   * counterexample's first line shows it: over the protocol, its `new` request. @defaultValue `new WorkQueue({ … })`
   */
  readonly construction?: (maxRetries: number, backoff: Backoff | undefined) => string;
  /**
   * Queues of the same implementation whose calls may overlap: after the sequential runs conform, `checkDriver`
   * makes runs of overlapping rounds on them and checks them for linearizability ([docs/spec.md §10.8](../../docs/spec.md#§10-invariants)), as
   * `checkConformance` does for a queue whose calls answer promises. Over protocol v1, the `concurrent` feature.
   * @defaultValue none: only sequential runs
   */
  readonly concurrent?: SubjectFactory<unknown>;
}

/**
 * Runs `plan` on a fresh queue of `driver` and records what it answers and shows to each call, in order. Every call
 * is observed: a driver that sent the plan ahead expects its answers.
 */
export async function observeRun(
  driver: Driver,
  maxRetries: number,
  plan: readonly Operation[],
  backoff?: Backoff,
): Promise<Observation[]> {
  const started = driver.start(maxRetries, plan, backoff);
  const observe = isThenable(started) ? await started : started;
  const observations: Observation[] = [];
  for (const [index, operation] of plan.entries()) {
    const observed = observe(operation, index);
    observations.push(isThenable(observed) ? await observed : observed);
  }
  return observations;
}

/**
 * Reads a view, or calls the factory: what it throws (or rejects with) is not an answer the spec gives a meaning to,
 * so the check stops with a `threw` breach naming it, instead of a finding.
 */
function read<V>(what: () => string, thunk: () => V): V {
  let value: V;
  try {
    value = thunk();
  } catch (error) {
    throw new ProtocolBreach("threw", `${what()} threw ${showValue(error)}`, "");
  }
  let thenable: boolean;
  try {
    thenable = isThenable(value); // inline, not through `touch`: this runs for every view of every step
  } catch (error) {
    throw threwWhenRead(`${what()} answered a value that`, error, "then");
  }
  if (!thenable) return value;
  return Promise.resolve(value).catch((error: unknown) => {
    throw new ProtocolBreach("threw", `${what()} rejected with ${showValue(error)}`, "");
  }) as V;
}

/**
 * Reads the property `name` of something the implementation made, with `read`: a queue or an answer that throws
 * when read (a revoked `Proxy`, a getter that throws) is the implementation's doing, so the check stops with a
 * `threw` breach naming it (`who` says whose property it is), not with an error of the gate.
 */
function touch<V>(read: () => V, who: string, name: string): V {
  try {
    return read();
  } catch (error) {
    throw threwWhenRead(who, error, name);
  }
}

/** The `threw` breach of something of the implementation's (`who`) that threw `error` when its `name` was read. */
function threwWhenRead(who: string, error: unknown, name: string): ProtocolBreach {
  return new ProtocolBreach("threw", `${who} threw ${showValue(error)} when its \`${name}\` was read`, "");
}

/** The verbs every queue must offer ([docs/spec.md §4](../../docs/spec.md#§4)–[§8](../../docs/spec.md#§8)). */
const verbs = ["add", "get", "done", "retry", "forget"] as const;

/** Reads the views an in-process queue offers, once `answer` is in. */
function withViews(
  subject: Subject<unknown>,
  operation: Operation,
  answer: Answer,
  timed: boolean,
): MaybePromise<Observation> {
  const item = "item" in operation ? operation.item : undefined;
  const views = [
    read(
      () => `size after ${showCall(operation)}`,
      () => readView(subject, "size"),
    ),
    read(
      () => `inFlight after ${showCall(operation)}`,
      () => readView(subject, "inFlight"),
    ),
    item === undefined || item === null
      ? undefined
      : read(
          () => `failures(${showValue(item)})`,
          () => subject.failures?.(item),
        ),
    read(
      () => `shuttingDown after ${showCall(operation)}`,
      () => readView(subject, "shuttingDown"),
    ),
    read(
      () => `waiting after ${showCall(operation)}`,
      () => readView(subject, "waiting"),
    ),
    // §19: on the gate's clock only; on a real clock no two readings of a duration agree.
    timed
      ? read(
          () => `metrics() after ${showCall(operation)}`,
          () => subject.metrics?.(),
        )
      : undefined,
  ] as const;
  const observation = ([
    size,
    inFlight,
    failures,
    shuttingDown,
    waiting,
    metrics,
  ]: readonly unknown[]): Observation => ({
    answer,
    views: { size, inFlight, failures, shuttingDown, waiting, metrics } as Views,
  });
  return views.some(isThenable) ? Promise.all(views).then(observation) : observation(views);
}

/**
 * Settles with `promise`, or rejects with a `timed out` breach naming `what` once it has had `timeoutMs` to settle
 * while the event loop was free (see {@link Deadline}: a stall of the gate is not charged to the queue). The
 * deadline stops as soon as the promise settles, so a check that ends leaves no timer behind.
 */
export function bounded<V>(promise: PromiseLike<V>, timeoutMs: number, what: string): Promise<V> {
  let deadline: Deadline | undefined;
  let settled = false;
  const late = new Promise<never>((_, reject) => {
    const message = `${what} did not settle within ${timeoutMs} ms`;
    deadline = new Deadline(
      timeoutMs,
      () => !settled,
      () => reject(new ProtocolBreach("timed out", message, "")),
    );
    deadline.arm();
  });
  return Promise.race([promise, late]).finally(() => {
    settled = true;
    deadline?.disarm();
  });
}

/**
 * Performs a call on an in-process queue — or moves its clock, for an `advance` — and then reads its views, each
 * bounded by `timeoutMs`.
 */
function observe(
  subject: Subject<unknown>,
  clock: ClockModel | undefined,
  operation: Operation,
  timeoutMs: number,
): MaybePromise<Observation> {
  const answer =
    operation.verb === "advance" && clock !== undefined
      ? capture(() => clock.advance(operation.ms))
      : perform(subject, operation);
  const after = (a: Answer) => {
    const observed = withViews(subject, operation, a, clock !== undefined);
    return isThenable(observed)
      ? bounded(observed, timeoutMs, `reading the views after ${showCall(operation)}`)
      : observed;
  };
  return isThenable(answer) ? bounded(answer, timeoutMs, showCall(operation)).then(after) : after(answer);
}

/**
 * The driver of queues made in this process by `factory`; their methods may answer values or promises. With
 * `shutDown`, the queues must offer `shutDown()`: a check that sends it would otherwise fail for a reason that is
 * not the queue's answer. With `time`, each queue is made with a clock of its own (a {@link ClockModel}) that
 * `advance` moves, and must offer `addAfter`.
 */
export function inProcess<T>(
  factory: SubjectFactory<T>,
  options: { readonly shutDown?: boolean; readonly timeoutMs?: number; readonly time?: boolean } = {},
): Driver {
  const timeoutMs = options.timeoutMs ?? defaultTimeoutMs;
  const ready = (subject: Subject<T>, clock: ClockModel | undefined): Observe => {
    const has = (name: string) =>
      touch(
        () => typeof (subject as unknown as Record<string, unknown> | null)?.[name] === "function",
        "the factory's queue",
        name,
      );
    const missing = verbs.find((verb) => !has(verb));
    if (missing !== undefined) {
      const what = typeof subject === "object" && subject !== null ? "a queue" : showValue(subject);
      throw new ProtocolBreach("missing verb", `the factory made ${what} without a \`${missing}\` method`, "");
    }
    if (options.shutDown === true && !has("shutDown")) {
      throw new TypeError("Expected the factory's queues to offer `shutDown()`, as `options.shutDown` is true");
    }
    if (clock !== undefined && !has("addAfter")) {
      throw new ProtocolBreach(
        "missing verb",
        "the factory made a queue without an `addAfter` method, and time is checked",
        "",
      );
    }
    return (operation) => observe(subject as Subject<unknown>, clock, operation, timeoutMs);
  };
  return {
    start(maxRetries, _plan, backoff) {
      const clock = options.time === true ? new ClockModel() : undefined;
      const made = read(
        () => "the factory",
        () => factory({ maxRetries, ...(clock ? { clock } : {}), ...(backoff ? { backoff } : {}) }),
      );
      const go = (subject: Subject<T>) => ready(subject, clock);
      return isThenable(made) ? bounded(made, timeoutMs, "the factory").then(go) : go(made);
    },
  };
}
