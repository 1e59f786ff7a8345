/**
 * A first-in, first-out ring buffer of slot numbers (see `ItemTable`): `push` at the tail, `shift` at the head, both
 * O(1) amortised.
 *
 * @remarks
 * Why not a plain array: `Array#shift` moves every remaining element, O(n) per call. Why not a `Set` used as a
 * queue: V8 leaves a hole for every entry deleted from the front, and the next iteration walks past all of them
 * (about 90 µs per removal at 100,000 entries). A ring buffer does neither: the head and the tail are indices that
 * wrap around a power-of-two array, so the wrap is a bit mask instead of a division. It holds slot numbers, not
 * items: an `Int32Array` takes 4 bytes a slot where an array of references takes 8, and holds no reference that
 * could keep an item alive.
 *
 * The buffer doubles when full and never shrinks; a queue that once held a million items keeps that capacity.
 *
 * @internal
 */
export class Fifo {
  /** The ring. Invariant: the length is a power of two. */
  #ring = new Int32Array(16);
  /** Invariant: `#ring.length - 1`, the mask that wraps an index. */
  #mask = 15;
  /** Invariant: the index of the oldest slot number; only meaningful when `#length > 0`. */
  #head = 0;
  /** Invariant: the number of slot numbers held, from `#head` onwards (wrapping), between 0 and `#ring.length`. */
  #length = 0;

  /** The number of slot numbers held. */
  get length(): number {
    return this.#length;
  }

  /** Appends `slot` at the tail, doubling the capacity first when the ring is full. */
  push(slot: number): void {
    if (this.#length === this.#ring.length) this.#grow();
    this.#ring[(this.#head + this.#length) & this.#mask] = slot;
    this.#length++;
  }

  /**
   * Removes and returns the slot number at the head.
   *
   * @remarks The caller must check `length` first: on an empty ring the result is meaningless, and the state is
   * corrupted.
   */
  shift(): number {
    const head = this.#head;
    this.#head = (head + 1) & this.#mask;
    this.#length--;
    return this.#ring[head] as number;
  }

  /**
   * Doubles the capacity of a full ring: the slot numbers are copied oldest first (from the head to the end, then
   * the part that wrapped around to the start) into a ring twice as long, and the head starts at 0 again. Amortised
   * over the pushes that filled the ring, a grow costs O(1) per push.
   */
  #grow(): void {
    const ring = this.#ring;
    const length = this.#length; // equals the capacity: only a full ring grows
    const grown = new Int32Array(2 * length);
    grown.set(ring.subarray(this.#head));
    grown.set(ring.subarray(0, this.#head), length - this.#head);
    this.#ring = grown;
    this.#mask = 2 * length - 1;
    this.#head = 0;
  }
}
