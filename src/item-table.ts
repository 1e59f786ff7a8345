/**
 * The states of an item in {@link ItemTable} ([docs/spec.md §2](../docs/spec.md#§2-state-and-the-callers-protocol)).
 * Queued, in flight and in flight + dirty are the spec's; an absent item is either `FAILED`, kept for its failure
 * count, or a `TOMBSTONE`, kept for nothing but the next `add` of it.
 */
export const QUEUED = 0;
export const IN_FLIGHT = 1;
export const IN_FLIGHT_DIRTY = 2;
/** Absent, with a failure count above 0 ([docs/spec.md §7](../docs/spec.md#§7)): kept until `forget`. */
export const FAILED = 3;
/** Absent, with no failure count: kept so that the next `add` of the item reuses its slot, until swept. */
export const TOMBSTONE = 4;
/**
 * The slot of no item: {@link ItemTable.find} answers it for an item the table does not hold, and it reads as an
 * absent item with no failure count (a `TOMBSTONE`, failures 0), so a caller that only reads needs no branch.
 * It is never in the map, never inserted, swept or freed, and nothing changes it.
 */
export const NO_SLOT = 0;

/** The states of an item that is queued or in flight. */
export type LiveState = typeof QUEUED | typeof IN_FLIGHT | typeof IN_FLIGHT_DIRTY;
/** A state: every absent state is at least `FAILED`. */
export type State = LiveState | typeof FAILED | typeof TOMBSTONE;

/**
 * What a queue knows of each item it holds: the item, its state and its failure count, in parallel arrays indexed by
 * a slot number that one `Map` gives each item. A slot is the item's for as long as it is in the table.
 * Slot 0 is {@link NO_SLOT}.
 *
 * @remarks
 * Why slots: the cycle `get → done → add` reads or writes an item's state five times. Kept in a `Map` from item to
 * state, each of them is a hash lookup, and at a million keys every lookup misses the cache. With a slot, the FIFO
 * holds the slot, so `get` reaches the item and its state by index, and `done` and `add` find the slot with one
 * lookup each: two per cycle. Why parallel typed arrays, not a record per item that the map and the FIFO both
 * reference: a record object costs 48 bytes, 86 a key in all at a million keys against 51, over the budget of 60,
 * though its cycle was faster there (docs/performance.md has both, measured side by side). Every array is indexed
 * by small integers, so V8 keeps its fast elements.
 *
 * Every operation is O(1) amortised: a slot comes from the free list or the end of the arrays, which double when
 * full (and never shrink, as the FIFO); the sweep is paid for by the `done`s and `forget`s that made its tombstones.
 *
 * @internal
 */
export class ItemTable<T> {
  /**
   * Each item in the table, with its slot (items compared as `Map` keys, SameValueZero). Invariant: `#items` holds
   * each entry's item at its slot, and no two entries share a slot.
   */
  readonly #slots = new Map<T, number>();
  /** The item of each slot in use; `undefined` in any other, so that the table keeps no item it dropped alive. */
  #items: (T | undefined)[] = Array.from({ length: 16 });
  /** The state of each slot in use, and `TOMBSTONE` in `NO_SLOT`. Invariant: as long as `#items`, as are `#failures`. */
  #states = new Uint8Array(16);
  /**
   * The failure count of each slot in use: above 0 exactly when `retry` counted a failure that no `forget` cleared;
   * 0 in `NO_SLOT`. A free slot holds the next free slot instead, or `NO_SLOT`: the free list is threaded through
   * it, and costs no memory.
   */
  #failures = new Float64Array(16);
  /** The first free slot, or `NO_SLOT`. Invariant: its list holds every slot but `NO_SLOT` below `#fresh` that no item has. */
  #free = NO_SLOT;
  /** The slots from here on have never been used. Invariant: above `NO_SLOT`, at most `#items.length`, the capacity. */
  #fresh = NO_SLOT + 1;
  /**
   * The number of entries in state `TOMBSTONE`. Invariant: once a call returns, at most as many as the other entries
   * (queued, in flight or failed), so the table holds at most twice the items it must (`#sweep`).
   */
  #tombstones = 0;

  /** Creates an empty table. */
  constructor() {
    this.#states[NO_SLOT] = TOMBSTONE;
  }

  /** The slot of `item`, or `NO_SLOT` when the table does not hold it: one hash lookup. */
  find(item: T): number {
    return this.#slots.get(item) ?? NO_SLOT;
  }

  /** The item in `slot`, which must be in use. */
  item(slot: number): T {
    return this.#items[slot] as T;
  }

  /** The state of `slot`, which must be in use or `NO_SLOT`. */
  state(slot: number): State {
    return this.#states[slot] as State;
  }

  /** The failure count of `slot`, which must be in use or `NO_SLOT`. */
  failures(slot: number): number {
    return this.#failures[slot] as number;
  }

  /**
   * Gives `item`, which the table must not hold, a slot in `state`, with no failure count, and answers the slot.
   * An item enters the table to be queued, in flight or failed, never as a tombstone.
   */
  insert(item: T, state: LiveState | typeof FAILED): number {
    let slot = this.#free;
    if (slot !== NO_SLOT) this.#free = this.#failures[slot] as number;
    else {
      if (this.#fresh === this.#items.length) this.#grow();
      slot = this.#fresh++;
    }
    this.#slots.set(item, slot);
    this.#items[slot] = item;
    this.#states[slot] = state;
    this.#failures[slot] = 0;
    return slot;
  }

  /**
   * Sets the state of `slot` to queued, in flight or in flight + dirty. An absent slot must be {@link ItemTable.revive}d
   * first, so that the tombstones are counted.
   */
  set(slot: number, state: LiveState): void {
    this.#states[slot] = state;
  }

  /** Counts the absent `slot` out of the tombstones, if it is one, before it is queued or handed out again. */
  // Stryker disable BlockStatement,ConditionalExpression,UpdateOperator: equivalent where a revived tombstone still counts (`{}`, `false`, `++`): that only sweeps earlier, and a tombstone is an absent item either way; the variant that sweeps later (`true`) is killed by properties/test/queue/memory.test.ts
  revive(slot: number): void {
    if (this.#states[slot] === TOMBSTONE) this.#tombstones--;
  }
  // Stryker restore BlockStatement,ConditionalExpression,UpdateOperator

  /**
   * Makes `slot`, in flight until now, absent: `FAILED` if it has a failure count, otherwise a tombstone, and
   * sweeps when the tombstones outnumber the rest.
   */
  vacate(slot: number): void {
    if (this.#failures[slot] === 0) this.#bury(slot);
    else this.#states[slot] = FAILED;
  }

  /** Sets the failure count of `slot` to `count`, above 0; a tombstone becomes `FAILED`. */
  fail(slot: number, count: number): void {
    this.#failures[slot] = count;
    if (this.#states[slot] === TOMBSTONE) {
      // Stryker disable next-line UpdateOperator: equivalent: counting the tombstone twice instead of out only sweeps earlier, and a tombstone is an absent item either way
      this.#tombstones--;
      this.#states[slot] = FAILED;
    }
  }

  /**
   * Clears the failure count of `slot`, in use or `NO_SLOT`; a `FAILED` slot becomes a tombstone, and the table
   * sweeps when due.
   */
  forget(slot: number): void {
    this.#failures[slot] = 0;
    if (this.#states[slot] === FAILED) this.#bury(slot);
  }

  /** Makes `slot` a tombstone, and sweeps when the tombstones outnumber the other entries. */
  #bury(slot: number): void {
    this.#states[slot] = TOMBSTONE;
    this.#tombstones++;
    // Stryker disable next-line ConditionalExpression,EqualityOperator,ArithmeticOperator: equivalent when they only sweep earlier or more often (`true`, `>=`): a tombstone is an absent item either way, so no caller can tell; the variants that sweep later or never (`false`, `<=`, `/`) are killed by properties/test/queue/memory.test.ts
    if (2 * this.#tombstones > this.#slots.size) this.#sweep();
  }

  /**
   * Frees the slot of every tombstone: its entry leaves the map, its item the table, and the slot goes on the free
   * list.
   *
   * Why tombstones: a controller's keys come back. Deleting a done item's entry and inserting it again at the next
   * `add` churns V8's hash table, which then rehashes every live entry again and again; at a million keys that
   * made a `get → done → add` cycle about 1.6 times slower (docs/performance.md). Reusing the entry costs nothing.
   * The sweep keeps the memory bounded: at most as many done items stay referenced as there are other entries,
   * none once the queue is idle and nothing has a failure count, and each sweep walks fewer than twice as many
   * entries as it frees, so it is paid for by the `done`s and `forget`s that made them: O(1) amortised.
   */
  #sweep(): void {
    const states = this.#states;
    for (const [item, slot] of this.#slots) {
      if (states[slot] !== TOMBSTONE) continue;
      this.#slots.delete(item);
      this.#items[slot] = undefined;
      this.#failures[slot] = this.#free;
      this.#free = slot;
    }
    this.#tombstones = 0;
  }

  /**
   * Doubles the arrays when every slot has been used: the items, states and failure counts keep their slots.
   * Amortised over the inserts that used the slots, a grow costs O(1) per insert.
   */
  #grow(): void {
    const length = this.#fresh; // equals the capacity: only a table whose every slot was used grows
    this.#items = this.#items.concat(Array.from({ length }));
    const states = new Uint8Array(2 * length);
    states.set(this.#states);
    this.#states = states;
    const failures = new Float64Array(2 * length);
    failures.set(this.#failures);
    this.#failures = failures;
  }
}
