/**
 * The waiting items of a queue ([docs/spec.md §17](../docs/spec.md#§17-delayed-adds)): a binary min-heap ordered by (due time, request order),
 * with a map from each item to its entry, so that a request, a cancel and taking the earliest all cost O(log n).
 *
 * @internal
 */

/** A waiting item. Invariant: `heap[index] === this` while it is in the heap. */
interface Wait<T> {
  readonly item: T;
  due: number;
  /** When the due time was set: ties of `due` go to the lower `order` ([§17.5](../docs/spec.md#§17-delayed-adds)). */
  order: number;
  index: number;
}

/** True when `a` falls due before `b`. */
function before<T>(a: Wait<T>, b: Wait<T>): boolean {
  // Stryker disable next-line EqualityOperator: equivalent: no two entries share an order, and none is compared with itself
  return a.due < b.due || (a.due === b.due && a.order < b.order);
}

/** The waiting items, earliest first. */
export class Delays<T> {
  /** The heap. Invariant: no entry falls due before its parent (`before(heap[i], heap[(i - 1) >> 1])` never holds). */
  readonly #heap: Wait<T>[] = [];
  /** Each waiting item's entry. Invariant: holds exactly the entries of `#heap`. */
  readonly #waits = new Map<T, Wait<T>>();
  /** How many due times were set; it only grows. */
  #requests = 0;

  /** How many items wait. */
  get size(): number {
    return this.#heap.length;
  }

  /** The earliest due time, or `undefined` when nothing waits. */
  get nextDue(): number | undefined {
    return this.#heap[0]?.due;
  }

  /**
   * Makes `item` wait until `due`, or, if it waits already, until the earlier of its due time and `due`
   * ([§17.2](../docs/spec.md#§17-delayed-adds), [§17.3](../docs/spec.md#§17-delayed-adds)).
   */
  request(item: T, due: number): void {
    const wait = this.#waits.get(item);
    if (wait === undefined) {
      const added: Wait<T> = { item, due, order: ++this.#requests, index: this.#heap.length };
      this.#heap.push(added);
      this.#waits.set(item, added);
      this.#up(added);
    } else if (due < wait.due) {
      wait.due = due;
      wait.order = ++this.#requests;
      this.#up(wait);
    }
  }

  /** Ends the wait of `item`, if it waits ([§17.4](../docs/spec.md#§17-delayed-adds)). */
  cancel(item: T): void {
    const wait = this.#waits.get(item);
    if (wait !== undefined) this.#remove(wait);
  }

  /**
   * Removes and answers every waiting item due at `now`, earliest first, ties in request order ([§17.5](../docs/spec.md#§17-delayed-adds)).
   *
   * @throws Error when an item due at `now` is left waiting, which only a broken heap does.
   */
  takeDue(now: number): T[] {
    const due: T[] = [];
    // At most as many turns as there are items: the loop ends whatever its body does.
    for (let left = this.#heap.length; left > 0; left--) {
      const first = this.#heap[0] as Wait<T>;
      if (first.due > now) break;
      this.#remove(first);
      due.push(first.item);
    }
    // Checked, not assumed: an item left due would make the queue re-arm its timer for a time that has come, again
    // and again, a livelock that only a clock's bound ends (§18.9); a slip above fails here at once instead.
    // Stryker disable all: equivalent: the check never fails while the loop above and the heap are sound, so each
    // weakening of it survives (its strengthenings, `true` and `>`, which every timed suite catches, go with them)
    if ((this.nextDue ?? Number.POSITIVE_INFINITY) <= now)
      throw new Error(
        `Expected no item due at ${now} ms to be left waiting, but the earliest is due at ${this.nextDue} ms`,
      );
    // Stryker restore all
    return due;
  }

  /** Takes `wait` out of the heap and the map. */
  #remove(wait: Wait<T>): void {
    this.#waits.delete(wait.item);
    const last = this.#heap.pop() as Wait<T>;
    if (last === wait) return;
    this.#place(last, wait.index);
    this.#up(last);
    this.#down(last);
  }

  /** Puts `wait` at `index`. */
  #place(wait: Wait<T>, index: number): void {
    this.#heap[index] = wait;
    wait.index = index;
  }

  /** Moves `wait` towards the root while it falls due before its parent (recursion depth: log n). */
  #up(wait: Wait<T>): void {
    const index = wait.index;
    const at = (index - 1) >> 1;
    const parent = this.#heap[at];
    if (index === 0 || !before(wait, parent as Wait<T>)) return;
    this.#place(parent as Wait<T>, index);
    this.#place(wait, at);
    this.#up(wait);
  }

  /** Moves `wait` towards the leaves while a child falls due before it (recursion depth: log n). */
  #down(wait: Wait<T>): void {
    const index = wait.index;
    const left = this.#heap[2 * index + 1];
    const right = this.#heap[2 * index + 2];
    const child = right !== undefined && before(right, left as Wait<T>) ? right : left;
    if (child === undefined || !before(child, wait)) return;
    this.#place(wait, child.index);
    this.#place(child, index);
    this.#down(wait);
  }
}
