/**
 * Naive queues that show why the reference is built as it is. Both keep the same item states as the reference
 * (one Map) and differ only in the FIFO: an array used with `push`/`shift`, and a `Set` used as the queue.
 * They are correct (they pass the conformance check) and slow in the way their FIFO is.
 */
const QUEUED = 0;
const IN_FLIGHT = 1;
const DIRTY = 2;

/** The surface the benchmarks drive. */
export interface BenchQueue {
  add(item: string): void;
  get(): string | undefined;
  done(item: string): void;
  retry(item: string): boolean;
  readonly size: number;
}

/** The state logic shared by the naive baselines; the FIFO is left to the subclass. */
abstract class MapStates implements BenchQueue {
  readonly #states = new Map<string, number>();
  readonly #failures = new Map<string, number>();

  constructor(readonly maxRetries: number) {}

  abstract get size(): number;
  protected abstract push(item: string): void;
  protected abstract shift(): string | undefined;

  add(item: string): void {
    const state = this.#states.get(item);
    if (state === undefined) {
      this.#states.set(item, QUEUED);
      this.push(item);
    } else if (state === IN_FLIGHT) this.#states.set(item, DIRTY);
  }

  get(): string | undefined {
    const item = this.shift();
    if (item !== undefined) this.#states.set(item, IN_FLIGHT);
    return item;
  }

  done(item: string): void {
    const state = this.#states.get(item);
    if (state === IN_FLIGHT) this.#states.delete(item);
    else if (state === DIRTY) {
      this.#states.set(item, QUEUED);
      this.push(item);
    }
  }

  retry(item: string): boolean {
    const failures = (this.#failures.get(item) ?? 0) + 1;
    this.#failures.set(item, failures);
    if (failures >= this.maxRetries) return false;
    this.add(item);
    return true;
  }
}

/** The FIFO is an array: `push` at the tail, `Array#shift` at the head, which moves the elements behind it. */
export class ArrayShiftQueue extends MapStates {
  readonly #fifo: string[] = [];
  get size(): number {
    return this.#fifo.length;
  }
  protected push(item: string): void {
    this.#fifo.push(item);
  }
  protected shift(): string | undefined {
    return this.#fifo.shift();
  }
}

/** The FIFO is a `Set` (insertion-ordered): the first entry is the head, deleted once handed out. */
export class SetFifoQueue extends MapStates {
  readonly #fifo = new Set<string>();
  get size(): number {
    return this.#fifo.size;
  }
  protected push(item: string): void {
    this.#fifo.add(item);
  }
  protected shift(): string | undefined {
    const first = this.#fifo.values().next();
    if (first.done === true) return undefined;
    this.#fifo.delete(first.value);
    return first.value;
  }
}
