/**
 * The queue as the workers' loop sees it (docs/spec.md §15.1): each call of the loop made on the queue and on the
 * model of the lifecycle at the same moment, so that the workers' takes compare with the model's, and each worker's
 * calls after its handler compare with the model's line `workerCalls`.
 */
import { type LifecycleModel, type WorkerCall, workerCalls } from "../../../model/index.js";
import type { WorkQueue } from "../../../src/index.js";
import { showValue } from "../../core/render.js";
import type { TakeRecord } from "../../lifecycle/compare.js";
import type { Run } from "../../lifecycle/run.js";
import { track } from "../turns.js";
import { lifecycle } from "./invariants.js";

/** What a worker called for a key since its handler ended, and what decides the model's answer. */
interface Calls {
  readonly calls: WorkerCall[];
  readonly succeeded: boolean;
  requeued: boolean;
}

/** The loop's queue, mirrored on the model. */
export class ModelLoop {
  /** The workers' takes, on the queue and on the model. */
  readonly takes: TakeRecord[] = [];
  /** What each key's worker called since its handler ended. */
  readonly #after = new Map<string, Calls>();

  constructor(
    readonly run: Run,
    readonly queue: Pick<WorkQueue<string>, "take" | "forget" | "retry" | "done">,
    readonly model: LifecycleModel<string>,
  ) {}

  /** Books that the handler of `key` ended: from now on its worker's calls are booked. */
  ended(key: string, succeeded: boolean): void {
    this.#after.set(key, { calls: [], succeeded, requeued: false });
  }

  /** Books a call of a worker after the handler of `key` ended; at `done`, compares them with the model's (§15.1). */
  called(key: string, call: WorkerCall): void {
    const after = this.#after.get(key);
    if (after === undefined) return;
    after.calls.push(call);
    if (call !== "done") return;
    this.#after.delete(key);
    const expected = workerCalls(after.succeeded, after.requeued);
    if (after.calls.join() !== expected.join()) {
      const calls = `${after.calls.join(", ")}, not ${expected.join(", ")}`;
      this.run.fail(lifecycle.calls, `after handler(${showValue(key)}), the worker called ${calls}`);
    }
  }

  /** What the loop is given: the four verbs it uses, each made on both sides and booked. */
  readonly loop: Pick<WorkQueue<string>, "take" | "forget" | "retry" | "done"> = {
    take: (options) => {
      const signal = options?.signal;
      const take = this.model.take(signal?.aborted === true);
      const promise = this.queue.take(options);
      this.takes.push({ take, who: "a worker", signal, tracked: track(promise) });
      return promise;
    },
    forget: (item) => {
      this.queue.forget(item);
      this.model.queue.forget(item);
      this.called(item, "forget");
    },
    retry: (item) => {
      const requeued = this.queue.retry(item);
      this.model.retry(item);
      const after = this.#after.get(item);
      if (after !== undefined) after.requeued = requeued;
      this.called(item, "retry");
      return requeued;
    },
    done: (item) => {
      this.queue.done(item);
      this.model.done(item);
      this.called(item, "done");
    },
  };
}
