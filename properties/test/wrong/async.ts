/**
 * Deliberately wrong asynchronous queues (docs/spec.md §10.8): the reference queue behind promises, with one
 * realistic mistake of an asynchronous implementation each. Awaited one call at a time, each answers exactly as the
 * model does, so only overlapping calls show the mistake. `asyncReference` is the correct one.
 */
import { WorkQueueModel } from "../../../model/index.js";

/** A turn of the event loop: what a round trip to a database or another process costs at least. */
const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** The model, every verb and view answering a promise after a turn: correct. */
export class AsyncReference {
  protected readonly queue: WorkQueueModel<unknown>;
  constructor(options: { readonly maxRetries: number }) {
    this.queue = new WorkQueueModel<unknown>({ maxRetries: options.maxRetries });
  }
  async add(item: unknown): Promise<void> {
    await turn();
    this.queue.add(item);
  }
  async get(): Promise<unknown> {
    await turn();
    return this.queue.get();
  }
  async done(item: unknown): Promise<void> {
    await turn();
    this.queue.done(item);
  }
  async retry(item: unknown): Promise<boolean> {
    await turn();
    return this.queue.retry(item);
  }
  async forget(item: unknown): Promise<void> {
    await turn();
    this.queue.forget(item);
  }
  async size(): Promise<number> {
    await turn();
    return this.queue.size;
  }
  async inFlight(): Promise<number> {
    await turn();
    return this.queue.inFlight;
  }
  async failures(item: unknown): Promise<number> {
    await turn();
    return this.queue.failures(item);
  }
}

/**
 * `add` answers before its change is made, one turn later (a write that is not awaited), and `get` answers from
 * memory at once (a read from a cache): a `get` made as soon as an `add` answered misses it. Awaited one call at a
 * time, the views' turn lets the write land first.
 */
export class AddAnswersEarly extends AsyncReference {
  override async add(item: unknown): Promise<void> {
    if (item === undefined || item === null) throw new TypeError(`not an item: ${String(item)}`);
    void turn().then(() => this.queue.add(item));
  }
  override async get(): Promise<unknown> {
    return this.queue.get();
  }
}

/**
 * `get` reads the head, awaits a round trip, then takes it: two gets at once both read the same head and hand it
 * out twice (a read-then-write without a lock).
 */
export class GetReadsThenTakes extends AsyncReference {
  override async get(): Promise<unknown> {
    const head = this.queue.snapshot().queue[0];
    await turn();
    if (head === undefined) return undefined;
    if ([this.queue.snapshot().queue[0]].includes(head)) return this.queue.get(); // SameValueZero, as §1.1
    return head; // the other get took it meanwhile: handed out anyway
  }
}
