/**
 * Macro commands: one generated command that stands for many calls, so that a run reaches real sizes — thousands
 * of items queued or in flight, tens of thousands of calls, long failure streaks — while fast-check generates and
 * shrinks a handful of numbers. Each expands, on the model, into plain calls appended to the plan; shrinking its
 * size shrinks the expansion.
 */
import type { WorkQueueModel } from "../../model/index.js";
import { type Planning, type QueueCommand, record } from "./commands.js";
import type { Operation } from "./operation.js";
import { showValue } from "./render.js";

/** What a macro does, `count` times. */
export type MacroKind =
  | "burst" // add `count` distinct items, from the `start`-th of the many
  | "drain" // get and done `count` items, while any is queued
  | "hold" // get `count` items and keep them in flight
  | "cycle" // take the oldest queued item and queue it again, `count` times, every other time by an add while it is in flight: a long steady history
  | "fail" // fail one item `count` times in a row — take it, retry it, done it — a long failure streak
  | "outage" // fail `count` distinct items, then each of them again, as when what they need is down: a wide failure table
  | "straggle" // hold one item while `count` others are added, taken and done, then add it again and done it: a slow worker
  | "resync"; // add every one of the few items, `count + 1` times over, as an informer's resync lists every key again

/** A macro command over the model and the plan, like {@link CallCommand}. Always applicable. */
export class MacroCommand implements QueueCommand {
  constructor(
    readonly kind: MacroKind,
    readonly count: number,
    readonly start: number,
    readonly many: (i: number) => unknown,
    /** The few items, awkward ones included, that a resync adds. */
    readonly few: readonly unknown[] = [],
  ) {}

  /** Always applicable: a macro that finds nothing to do makes fewer calls. */
  check(): boolean {
    return true;
  }

  /** Expands into calls, each recorded and applied to the model as it is made. */
  run(model: WorkQueueModel<unknown>, planning: Planning): void {
    const call = (operation: Operation) => record(model, planning, operation);
    const get = (): unknown => {
      const answer = call({ verb: "get" });
      return "value" in answer ? answer.value : undefined;
    };
    if (this.kind === "fail") {
      this.streak(model, call, get, this.many(this.start), this.count);
      return;
    }
    if (this.kind === "resync") {
      // Each of the few items added while it is already queued, in flight or dirty: the add that a queue
      // deduplicating by `===` or `indexOf` gets wrong for `NaN`.
      for (let round = 0; round <= this.count; round++) for (const item of this.few) call({ verb: "add", item });
      return;
    }
    if (this.kind === "straggle") {
      this.straggle(model, call, get);
      return;
    }
    if (this.kind === "outage") {
      for (let round = 0; round < 2; round++) {
        for (let i = 0; i < this.count; i++) {
          if (!this.streak(model, call, get, this.many(this.start + i), 1)) return;
        }
      }
      return;
    }
    for (let i = 0; i < this.count; i++) {
      if (this.kind === "burst") {
        call({ verb: "add", item: this.many(this.start + i) });
        continue;
      }
      if (model.size === 0) return; // nothing left to take: the macro ends early
      const item = get();
      if (this.kind === "drain") call({ verb: "done", item });
      // A steady controller sees changes arrive both after and during processing: half the cycles leave a dirty
      // mark for done to act on, so that a long history also exercises marks made long before, or across a wrap.
      if (this.kind === "cycle" && i % 2 === 0) {
        call({ verb: "done", item });
        call({ verb: "add", item });
      }
      if (this.kind === "cycle" && i % 2 === 1) {
        call({ verb: "add", item });
        call({ verb: "done", item });
      }
    }
  }

  /**
   * A failure streak of `item`, as a worker that keeps failing on it makes: add it when absent, take items (and
   * finish the others) until it is handed out, retry it, done it; `count` times. Whether it went on to the end,
   * rather than stopping where the item can be neither queued nor handed out (a shutdown).
   */
  streak(
    model: WorkQueueModel<unknown>,
    call: (operation: Operation) => unknown,
    get: () => unknown,
    item: unknown,
    count: number,
  ): boolean {
    for (let i = 0; i < count; i++) {
      if (model.stateOf(item) === "absent") call({ verb: "add", item });
      if (model.stateOf(item) === "absent") return false;
      while (model.stateOf(item) === "queued") {
        const got = get();
        if (got !== item) call({ verb: "done", item: got });
      }
      call({ verb: "retry", item });
      call({ verb: "done", item });
    }
    return true;
  }

  /**
   * A slow worker's item: taken (added first when nothing is queued) and held while `count` other items are added,
   * taken and done, then added again while still held (a change arrives for it) and done at last.
   */
  straggle(model: WorkQueueModel<unknown>, call: (operation: Operation) => unknown, get: () => unknown): void {
    if (model.size === 0) call({ verb: "add", item: this.many(this.start) });
    if (model.size === 0) return; // shut down: nothing can be taken
    const held = get();
    for (let i = 1; i <= this.count; i++) {
      call({ verb: "add", item: this.many(this.start + i) });
      const got = get();
      if (got !== undefined) call({ verb: "done", item: got });
    }
    call({ verb: "add", item: held });
    call({ verb: "done", item: held });
  }

  /** The macro, as a shrunk command sequence shows it. */
  toString(): string {
    const from = this.kind === "burst" || this.kind === "outage" ? ` from ${showValue(this.many(this.start))}` : "";
    return `${this.kind} ×${this.count}${from}`;
  }
}
