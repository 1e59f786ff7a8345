/**
 * The executable specification of the lifecycle ([docs/spec.md §13](../docs/spec.md#§13-draining)–[§15](../docs/spec.md#§15-the-controller-loop)): the model of waiting takes, with the drains that
 * wait for the queue to empty, the steps of `for await`, and what a worker of the controller loop does next. As
 * naive as the model of waiting: a drain is a record in a plain array, settled by the rule that settles it.
 */
import { type Take, WaitingModel } from "./waiting-model.js";

/**
 * A call of `shutDownWithDrain` as the model sees it: waiting, or settled as its promise is.
 *
 * @public
 */
export interface Drain {
  /** The drain's number: the first drain of a model is 1. */
  readonly id: number;
  /** `waiting`, `resolved` ([§13.1](../docs/spec.md#§13-draining)) or `rejected` (its signal aborted, [§13.3](../docs/spec.md#§13-draining)). */
  state: "waiting" | "resolved" | "rejected";
}

/**
 * What a worker of the controller loop calls after its handler ended, in order ([§15.1](../docs/spec.md#§15-the-controller-loop)).
 *
 * @public
 */
export type WorkerCall = "forget" | "retry" | "onError" | "onGiveUp" | "done";

/**
 * The model of the lifecycle: a {@link WaitingModel} whose `shutDownWithDrain` answers a {@link Drain}, settled by
 * the rules of [§13](../docs/spec.md#§13-draining). Only `done` and the drain itself can finish a drain: handing out an item puts it in flight, and
 * nothing else empties the queue while it is shut down ([§12](../docs/spec.md#§12-shutdown), [§13.1](../docs/spec.md#§13-draining)).
 *
 * @typeParam T - The item type.
 * @example
 * ```ts
 * import { LifecycleModel } from "workqueue-spec/model";
 *
 * const model = new LifecycleModel<string>({ maxRetries: 3 });
 * model.add("a");
 * const drain = model.shutDownWithDrain(); // "a" is queued: it waits
 * const take = model.take(); // resolves with "a", now in flight
 * drain.state; // "waiting": the item handed out is not done
 * model.done("a");
 * drain.state; // "resolved"
 * model.next().item; // undefined: `for await` ends (§14.7)
 * ```
 *
 * @public
 */
export class LifecycleModel<T> extends WaitingModel<T> {
  /** [§13.2](../docs/spec.md#§13-draining): the waiting drains. */
  #drains: Drain[] = [];
  /** How many drains were made. */
  #count = 0;

  /**
   * [§13.1](../docs/spec.md#§13-draining): shuts the queue down and answers a drain, resolved at once when nothing is queued, in flight or waiting;
   * [§13.3](../docs/spec.md#§13-draining): rejected at once when its signal already `aborted`, the queue shut down all the same.
   *
   * @param aborted - Whether the drain's signal has already aborted ([§13.3](../docs/spec.md#§13-draining)).
   */
  shutDownWithDrain(aborted = false): Drain {
    const drain: Drain = {
      id: ++this.#count,
      state: aborted ? "rejected" : "waiting",
    }; // §13.3
    this.shutDown(); // §13.1, §13.3: shut down all the same
    if (!aborted) this.#drains.push(drain);
    this.#settle(); // §13.1: resolved at once if drained already
    return drain;
  }

  /**
   * [§13.3](../docs/spec.md#§13-draining): a waiting drain is withdrawn and rejects; a settled one stays as it is; the other drains keep waiting.
   *
   * @param drain - A drain this model answered.
   */
  abortDrain(drain: Drain): void {
    if (drain.state !== "waiting") return;
    drain.state = "rejected";
    this.#drains = this.#drains.filter((d) => d !== drain);
  }

  /**
   * [§6](../docs/spec.md#§6), [§14.3](../docs/spec.md#§14-waiting-for-work), then [§13.1](../docs/spec.md#§13-draining): the `done` that ends the last item in flight while nothing is queued or
   * waiting resolves every waiting drain ([§13.2](../docs/spec.md#§13-draining)).
   *
   * @param item - The item whose processing ended.
   */
  override done(item: T): void {
    super.done(item);
    this.#settle();
  }

  /** [§14.7](../docs/spec.md#§14-waiting-for-work): one step of `for await`: a take without a signal; the loop ends when it resolves with `undefined`. */
  next(): Take<T> {
    return this.take();
  }

  /** How many drains wait ([§13.2](../docs/spec.md#§13-draining)). */
  get drains(): number {
    return this.#drains.length;
  }

  /** [§13.1](../docs/spec.md#§13-draining), [§13.2](../docs/spec.md#§13-draining): once drained, every waiting drain resolves. */
  #settle(): void {
    if (!this.drained) return;
    for (const drain of this.#drains) drain.state = "resolved";
    this.#drains = [];
  }
}

/**
 * [§15.1](../docs/spec.md#§15-the-controller-loop): what a worker calls once its handler ended: on success `forget`, on failure `retry`, `onError` and, if
 * `retry` gave up, `onGiveUp`; and in every case, last, `done`.
 *
 * @param succeeded - Whether the handler succeeded (neither threw nor rejected).
 * @param requeued - What `retry` answered, after a failure: `false` when it gave up.
 * @example
 * ```ts
 * import { workerCalls } from "workqueue-spec/model";
 *
 * workerCalls(false, false); // ["retry", "onError", "onGiveUp", "done"]
 * ```
 *
 * @public
 */
export function workerCalls(succeeded: boolean, requeued: boolean): readonly WorkerCall[] {
  if (succeeded) return ["forget", "done"];
  return requeued ? ["retry", "onError", "done"] : ["retry", "onError", "onGiveUp", "done"];
}

/**
 * How one of a lease worker's calls with its lease failed ([§20.14](../docs/spec.md#§20-leases-on-postgresql)): refused as stale, or the database out of reach.
 *
 * @public
 */
export type LeaseFault = "refused" | "unavailable";

/**
 * [§20.14](../docs/spec.md#§20-leases-on-postgresql): what a worker of `runLeaseWorkers` calls once its handler
 * ended — §15.1's calls, made with the lease, where a call that failed is followed by an `onError` reporting it: a
 * refused call (the lease was lost) ends the calls, after the handler's error when it was `retry`; a call that did
 * not reach the database does not, and a `retry` that did not answer gives no `onGiveUp`.
 *
 * @param succeeded - Whether the handler succeeded (neither threw nor rejected).
 * @param requeued - What `retry` answered, after a failure: `false` when it gave up.
 * @param faults - How `forget`, `retry` or `done` failed, for those that did.
 * @example
 * ```ts
 * import { leaseWorkerCalls } from "workqueue-spec/model";
 *
 * leaseWorkerCalls(true, false, { forget: "refused" }); // ["forget", "onError"]
 * ```
 *
 * @public
 */
export function leaseWorkerCalls(
  succeeded: boolean,
  requeued: boolean,
  faults: Readonly<Partial<Record<"forget" | "retry" | "done", LeaseFault>>> = {},
): readonly WorkerCall[] {
  const calls: WorkerCall[] = [];
  for (const call of workerCalls(succeeded, requeued || faults.retry !== undefined)) {
    calls.push(call);
    const fault = call === "onError" || call === "onGiveUp" ? undefined : faults[call];
    if (fault === undefined) continue;
    calls.push("onError");
    if (fault === "refused") return call === "retry" ? [...calls, "onError"] : calls;
  }
  return calls;
}

/**
 * [§15.3](../docs/spec.md#§15-the-controller-loop): whether a worker stops once its `take` settled: when it answers `undefined` or rejects.
 *
 * @param take - The worker's take, as the model settled it.
 * @example
 * ```ts
 * import { LifecycleModel, workerStops } from "workqueue-spec/model";
 *
 * const model = new LifecycleModel<string>({ maxRetries: 1 });
 * model.shutDown();
 * workerStops(model.take()); // true
 * ```
 *
 * @public
 */
export function workerStops(take: Take<unknown>): boolean {
  return take.state === "rejected" || (take.state === "resolved" && take.item === undefined);
}
