/**
 * The zoo of `checkLifecycle`: deliberately wrong queues, each with one lifecycle bug of the kind real queues have
 * (docs/spec.md §13, §14, §16, §17.7), built on the reference queue so that the bug is the only difference. Each
 * names the rule that must reject it, and whether only a timed check can see it.
 */

import { type WaitOptions, WorkQueue } from "../../../src/index.js";
import type { LifecycleRule } from "../../lifecycle/rules.js";
import { lifecycleRules as rules } from "../../lifecycle/rules.js";

/** A take waiting in a wrong queue's own list: how to hand it an item, and whether its signal withdrew it. */
interface Waiter {
  readonly serve: (item: string | undefined) => void;
  withdrawn: boolean;
}

/** A queue that keeps its own list of waiting takes, served by `pick` — the base of the takes that are wrong. */
abstract class OwnTakes extends WorkQueue<string> {
  protected readonly waiters: Waiter[] = [];

  /** Which waiting take gets the next item; `undefined` for none. */
  protected abstract pick(): Waiter | undefined;

  /** What an abort does to a waiting take: by default it leaves the list. */
  protected withdraw(waiter: Waiter): void {
    this.waiters.splice(this.waiters.indexOf(waiter), 1);
  }

  override take(options?: WaitOptions): Promise<string | undefined> {
    const signal = options?.signal;
    if (this.size > 0 || this.shuttingDown || signal?.aborted) return super.take(options);
    return new Promise((resolve, reject) => {
      const abort = () => {
        waiter.withdrawn = true;
        this.withdraw(waiter);
        reject(signal?.reason);
      };
      const waiter: Waiter = {
        withdrawn: false,
        serve: (item) => {
          signal?.removeEventListener("abort", abort);
          if (!waiter.withdrawn) resolve(item);
        },
      };
      signal?.addEventListener("abort", abort, { once: true });
      this.waiters.push(waiter);
    });
  }

  override add(item: string): void {
    super.add(item);
    this.#serve();
  }

  override retry(item: string): boolean {
    const requeued = super.retry(item);
    this.#serve();
    return requeued;
  }

  override done(item: string): void {
    super.done(item);
    this.#serve();
  }

  /** Whether `shutDown` resolves the waiting takes with `undefined` (§14.4). */
  protected readonly endsTakes: boolean = true;

  override shutDown(): void {
    super.shutDown();
    if (this.endsTakes) for (const waiter of this.waiters.splice(0)) waiter.serve(undefined);
  }

  #serve(): void {
    for (let waiter = this.pick(); this.size > 0 && waiter !== undefined; waiter = this.pick()) {
      this.waiters.splice(this.waiters.indexOf(waiter), 1);
      waiter.serve(this.get());
    }
  }
}

/** Unfair waiting: an item queued while takes wait goes to the newest one (a stack, not a queue). */
export class NewestTakeFirst extends OwnTakes {
  protected pick(): Waiter | undefined {
    return this.waiters.at(-1);
  }
}

/** An abort rejects the take but leaves it in the list: the next item is handed to it, in flight, and lost. */
export class AbortSwallowsItem extends OwnTakes {
  protected pick(): Waiter | undefined {
    return this.waiters[0];
  }

  protected override withdraw(): void {}
}

/** `shutDown` only sets its flag: the takes waiting then wait for ever (the drains' rule kept, the takes' forgotten). */
export class ShutDownKeepsTakesWaiting extends OwnTakes {
  protected override readonly endsTakes = false;

  protected pick(): Waiter | undefined {
    return this.waiters[0];
  }
}

/** `take` checks the shutdown before the queue: once shut down it answers `undefined`, though items are queued. */
export class UndefinedWhileQueued extends WorkQueue<string> {
  override take(options?: WaitOptions): Promise<string | undefined> {
    if (this.shuttingDown && !options?.signal?.aborted) return Promise.resolve(undefined);
    return super.take(options);
  }
}

/** A drain that resolves when `done` (or the drain itself) finds `ready` true, instead of the rule of §13.1. */
abstract class ReadyDrain extends WorkQueue<string> {
  readonly #drains: (() => void)[] = [];

  /** When this queue thinks it is drained. */
  protected abstract get ready(): boolean;

  override shutDownWithDrain(options?: WaitOptions): Promise<void> {
    const drained = super.shutDownWithDrain(options);
    drained.catch(() => {});
    if (options?.signal?.aborted || !this.ready) {
      return Promise.race([drained, new Promise<void>((resolve) => this.#drains.push(resolve))]);
    }
    return Promise.resolve();
  }

  /** Checks after every call that may empty the queue. */
  protected check(): void {
    if (this.ready) for (const resolve of this.#drains.splice(0)) resolve();
  }

  override get(): string | undefined {
    const item = super.get();
    this.check();
    return item;
  }

  override done(item: string): void {
    super.done(item);
    this.check();
  }
}

/** client-go's `ShutDownWithDrain`: it resolves once nothing is in flight, although items are still queued. */
export class EarlyDrain extends ReadyDrain {
  protected get ready(): boolean {
    return this.inFlight === 0;
  }
}

/** A drain that waits only for the queued items: it resolves while an item handed out is still in flight. */
export class DrainWhileInFlight extends ReadyDrain {
  protected get ready(): boolean {
    return this.size === 0;
  }
}

/** A drain that forgets the delayed adds: it resolves with items still waiting to fall due (§17.7). */
export class DrainIgnoresWaiting extends ReadyDrain {
  protected get ready(): boolean {
    return this.size === 0 && this.inFlight === 0;
  }
}

/** `for await` that stops as soon as the queue shuts down, leaving queued items behind. */
export class ForAwaitStopsOnShutDown extends WorkQueue<string> {
  override async *[Symbol.asyncIterator](): AsyncGenerator<string, void, undefined> {
    while (!this.shuttingDown) {
      const item = await this.take();
      if (item === undefined) return;
      yield item;
    }
  }
}

/**
 * The zoo: each wrong queue, the rules that may reject it (the first is the one its bug is about), and whether only
 * a timed check can see it. A queue's `for await` is built on its `take`, so a take that answers `undefined` too early
 * may show first as a loop that ends while items are queued (§14.7).
 */
export const lifecycleZoo: readonly (readonly [
  string,
  new (options: { maxRetries: number }) => WorkQueue<string>,
  readonly LifecycleRule[],
  boolean,
])[] = [
  [
    "a drain that resolves once nothing is in flight, though items are queued (client-go)",
    EarlyDrain,
    [rules.drainExact],
    false,
  ],
  ["waiting takes served newest first (LIFO)", NewestTakeFirst, [rules.fifo], false],
  [
    "a take that resolves with undefined while items are queued",
    UndefinedWhileQueued,
    [rules.noMoreWork, rules.iteration],
    false,
  ],
  ["a drain that resolves while an item is in flight", DrainWhileInFlight, [rules.drainExact], false],
  ["a drain that ignores the waiting (delayed) items", DrainIgnoresWaiting, [rules.drainExact], true],
  ["an aborted take that still consumes an item, which is lost", AbortSwallowsItem, [rules.abort], false],
  ["a shutDown that leaves the waiting takes waiting", ShutDownKeepsTakesWaiting, [rules.shutDownTakes], false],
  ["for await that stops early on shutDown while items are queued", ForAwaitStopsOnShutDown, [rules.iteration], false],
];
