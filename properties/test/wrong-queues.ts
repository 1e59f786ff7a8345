/**
 * Deliberately wrong implementations, each with one defect the lifecycle properties must catch (docs/spec.md §16):
 * built on the reference queue and loop, so that the defect is the only difference.
 */
import { runWorkers, type WaitOptions, WorkQueue } from "../../src/index.js";

/** client-go's `ShutDownWithDrain`: it resolves once nothing is in flight, although items are still queued. */
export class EarlyDrain extends WorkQueue<string> {
  readonly #waiting: (() => void)[] = [];

  override shutDownWithDrain(options?: WaitOptions): Promise<void> {
    const drained = super.shutDownWithDrain(options);
    drained.catch(() => {});
    if (this.inFlight === 0) return Promise.resolve();
    return Promise.race([drained, new Promise<void>((resolve) => this.#waiting.push(resolve))]);
  }

  override done(item: string): void {
    super.done(item);
    if (this.inFlight === 0) for (const resolve of this.#waiting.splice(0)) resolve();
  }
}

/** Unfair waiting: an item queued while takes wait goes to the newest one. */
export class NewestTakeFirst extends WorkQueue<string> {
  readonly #waiting: ((item: string | undefined) => void)[] = [];

  override take(options?: WaitOptions): Promise<string | undefined> {
    const signal = options?.signal;
    if (this.size > 0 || this.shuttingDown || signal?.aborted) return super.take(options);
    return new Promise((resolve, reject) => {
      const abort = () => {
        this.#waiting.splice(this.#waiting.indexOf(serve), 1);
        reject(signal?.reason);
      };
      const serve = (item: string | undefined) => {
        signal?.removeEventListener("abort", abort);
        resolve(item);
      };
      signal?.addEventListener("abort", abort, { once: true });
      this.#waiting.push(serve);
    });
  }

  override add(item: string): void {
    super.add(item);
    this.#serve();
  }

  override done(item: string): void {
    super.done(item);
    this.#serve();
  }

  override shutDown(): void {
    super.shutDown();
    for (const serve of this.#waiting.splice(0)) serve(undefined);
  }

  #serve(): void {
    if (this.size > 0 && this.#waiting.length > 0) this.#waiting.pop()?.(this.get());
  }
}

/** The loop with `done` outside a `finally`: after a failure, the item is never done. */
export const doneOnlyOnSuccess: typeof runWorkers = (queue, handler, options) => {
  const failed = new Set<unknown>();
  const leaky: typeof queue = {
    take: (o) => queue.take(o),
    forget: (item) => queue.forget(item),
    retry: (item) => failed.add(item) && queue.retry(item),
    done: (item) => void (failed.delete(item) || queue.done(item)),
  };
  return runWorkers(leaky, handler, options);
};
