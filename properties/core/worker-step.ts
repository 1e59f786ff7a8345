/**
 * A worker's step, as a controller loop makes it ([docs/spec.md §15](../../docs/spec.md#§15)): take the next item,
 * then `retry` it when its handler fails or `forget` it when it succeeds, and `done` it either way; when nothing is
 * queued, wait for the earliest due item (an `advance` to its due time). Drawn in timed runs, so that an item goes
 * round failure, backoff, falling due, success and failure again — a `forget` between successive backed-off
 * retries, and advances that land between successive backoffs (§8.1, §18.2).
 */
import type { WorkQueueModel } from "../../model/index.js";
import { type Planning, type QueueCommand, record } from "./commands.js";

/** One step of a worker whose handler fails or succeeds. Applicable while an item is queued or waiting. */
export class WorkerStepCommand implements QueueCommand {
  constructor(readonly fails: boolean) {}

  /** Applicable while the model has an item queued, or one waiting to fall due. */
  check(model: Readonly<WorkQueueModel<unknown>>): boolean {
    return model.size > 0 || model.waiting > 0;
  }

  /** Takes the next item and retries or forgets it, then done; or, with nothing queued, advances to a due time. */
  run(model: WorkQueueModel<unknown>, planning: Planning): void {
    if (model.size === 0) {
      const due = Math.min(...model.snapshot().waiting.map(([, at]) => at));
      record(model, planning, { verb: "advance", ms: due - model.now });
      return;
    }
    const answer = record(model, planning, { verb: "get" });
    const item = "value" in answer ? answer.value : undefined;
    if (item === undefined) return; // shut down: nothing handed out
    if (this.fails) record(model, planning, { verb: "retry", item });
    else record(model, planning, { verb: "forget", item });
    record(model, planning, { verb: "done", item });
  }

  /** The step, naming the handler's outcome. */
  toString(): string {
    return `worker step (${this.fails ? "fails" : "succeeds"})`;
  }
}
