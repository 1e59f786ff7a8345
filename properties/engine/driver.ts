/**
 * Drivers: how a plan reaches an implementation. The in-process driver calls a queue's methods; the protocol
 * driver (properties/protocol/) writes requests to a child process. Either way, verification sees one
 * observation per step: the answer and the views.
 */
import type { Views } from "./invariants.js";
import type { Answer, Operation } from "./operation.js";
import { isThenable, type MaybePromise, perform, readView, type Subject, type SubjectFactory } from "./subject.js";

/** What the implementation answered to one call and showed right after it. */
export interface Observation {
  /** The answer. */
  readonly answer: Answer;
  /** The views the implementation offers, read after the call. */
  readonly views: Views;
}

/** Makes the next observation of a run: performs the step's call and reads the views. Called in step order. */
export type Observe = (operation: Operation, index: number) => MaybePromise<Observation>;

/** Runs plans on an implementation, one fresh queue per run. */
export interface Driver {
  /** Starts a run on a fresh queue with `maxRetries`; the run's whole plan is given, so it may be sent ahead. */
  start(maxRetries: number, plan: readonly Operation[]): MaybePromise<Observe>;
  /**
   * How many later runs may be started before a run has been verified: a driver that sends each run ahead in one
   * write can take more while the gate verifies. @defaultValue 0: each run starts after the previous one is checked
   */
  readonly lookahead?: number;
}

/** Reads the views an in-process queue offers, once `answer` is in. */
function withViews(subject: Subject<unknown>, operation: Operation, answer: Answer): MaybePromise<Observation> {
  const item = "item" in operation ? operation.item : undefined;
  const views = [
    readView(subject, "size"),
    readView(subject, "inFlight"),
    item === undefined || item === null ? undefined : subject.failures?.(item),
    readView(subject, "shuttingDown"),
  ] as const;
  const observation = ([size, inFlight, failures, shuttingDown]: readonly unknown[]): Observation => ({
    answer,
    views: { size, inFlight, failures, shuttingDown } as Views,
  });
  return views.some(isThenable) ? Promise.all(views).then(observation) : observation(views);
}

/** Performs a call on an in-process queue and then reads its views. */
function observe(subject: Subject<unknown>, operation: Operation): MaybePromise<Observation> {
  const answer = perform(subject, operation);
  return isThenable(answer)
    ? answer.then((a) => withViews(subject, operation, a))
    : withViews(subject, operation, answer);
}

/**
 * The driver of queues made in this process by `factory`; their methods may answer values or promises. With
 * `shutDown`, the queues must offer `shutDown()`: a check that sends it would otherwise fail for a reason that is
 * not the queue's answer.
 */
export function inProcess<T>(factory: SubjectFactory<T>, options: { readonly shutDown?: boolean } = {}): Driver {
  const ready = (subject: Subject<T>): Observe => {
    if (options.shutDown === true && typeof subject.shutDown !== "function") {
      throw new TypeError("Expected the factory's queues to offer `shutDown()`, as `options.shutDown` is true");
    }
    return (operation) => observe(subject as Subject<unknown>, operation);
  };
  return {
    start(maxRetries) {
      const made = factory({ maxRetries });
      return isThenable(made) ? Promise.resolve(made).then(ready) : ready(made);
    },
  };
}
