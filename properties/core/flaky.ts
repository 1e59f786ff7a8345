/**
 * A flaky item: one item that a worker takes again and again, its handler failing or succeeding by turns, with the
 * clock moved to each due time the backoff sets ([docs/spec.md §15](../../docs/spec.md#§15), §8.1, §18.2). Drawn
 * in timed runs, so that a `forget` falls between successive backed-off retries of the same item and advances land
 * on, just before or just past each backoff's due time: where a backoff that counts the failures wrongly, does not
 * restart from its base after a `forget`, or doubles once too often shows. Random calls seldom make that history:
 * it needs the item to fall due and be taken again between the failures.
 */
import type { WorkQueueModel } from "../../model/index.js";
import { type Landing, landingTime, type Planning, type QueueCommand, record } from "./commands.js";
import { type Answer, type Operation, sameItem } from "./operation.js";
import { showValue } from "./render.js";

/** The rounds of one item's handler, each failing or succeeding, and where the clock lands on its due times. */
export class FlakyCommand implements QueueCommand {
  constructor(
    readonly item: unknown,
    /** Each round's outcome, in order: `true` when the handler fails (a `retry`), `false` when it succeeds. */
    readonly failures: readonly boolean[],
    readonly landing: Landing,
  ) {}

  /** Always applicable: a round that cannot take the item ends the command. */
  check(): boolean {
    return true;
  }

  /**
   * Each round: wait for the item if it waits (an `advance`, halfway first when landing `before`), add it if it is
   * absent, take items (finishing the others) until it is handed out, then `retry` or `forget` it and `done` it.
   * After the last round, wait for it once more, so that its last backoff's due time is reached.
   */
  run(model: WorkQueueModel<unknown>, planning: Planning): void {
    const call = (operation: Operation) => record(model, planning, operation);
    for (const fails of this.failures) {
      this.#fallDue(model, call);
      if (!this.#take(model, call)) return;
      call({ verb: fails ? "retry" : "forget", item: this.item });
      call({ verb: "done", item: this.item });
    }
    this.#fallDue(model, call);
  }

  /** Moves the clock to the item's due time, as the landing says, if it waits. */
  #fallDue(model: WorkQueueModel<unknown>, call: (operation: Operation) => Answer): void {
    const due = model.dueOf(this.item);
    if (due === undefined) return;
    if (this.landing === "before") call({ verb: "advance", ms: (due - model.now) / 2 });
    const at = landingTime(model, due, this.landing === "past" ? "past" : "on");
    call({ verb: "advance", ms: at - model.now });
  }

  /** Adds the item if absent and takes items until it is in flight: whether it is (not when shut down). */
  #take(model: WorkQueueModel<unknown>, call: (operation: Operation) => Answer): boolean {
    if (model.stateOf(this.item) === "absent") call({ verb: "add", item: this.item });
    while (model.stateOf(this.item) === "queued") {
      const answer = call({ verb: "get" });
      if (answer.kind !== "value" || answer.value === undefined) return false;
      if (!sameItem(answer.value, this.item)) call({ verb: "done", item: answer.value });
    }
    return model.stateOf(this.item) !== "absent";
  }

  /** The command, naming its item, its rounds and its landing. */
  toString(): string {
    const rounds = this.failures.map((fails) => (fails ? "fails" : "succeeds")).join(", ");
    return `flaky(${showValue(this.item)}: ${rounds}; lands ${this.landing} due)`;
  }
}
