/**
 * The base of the deliberately wrong queues of this folder: `Naive`, a plain, correct queue (arrays and a Map, no
 * speed), and the names of its item states. Each wrong queue extends it and overrides the method it gets wrong, so
 * that its mistake is the only difference. Every export of the family files is a factory `(options) => queue`,
 * loadable by `--module` and by `serve-module.js <file> <export>`; all.mjs gathers them.
 */

export const QUEUED = "queued";
export const IN_FLIGHT = "in flight";
export const DIRTY = "in flight + dirty";

/** A correct queue, written plainly: the base the mistakes are made in. */
export class Naive {
  constructor({ maxRetries }) {
    this.maxRetries = maxRetries;
    this.states = new Map();
    this.queue = [];
    this.counts = new Map();
  }
  get size() {
    return this.queue.length;
  }
  check(item) {
    if (item === undefined || item === null) throw new TypeError(`not an item: ${item}`);
  }
  /** Appends `item` to the tail of the queue, queued. */
  enqueue(item) {
    this.states.set(item, QUEUED);
    this.queue.push(item);
  }
  add(item) {
    this.check(item);
    const state = this.states.get(item);
    if (state === undefined) {
      this.enqueue(item);
    } else if (state === IN_FLIGHT) this.states.set(item, DIRTY);
  }
  get() {
    if (this.queue.length === 0) return undefined;
    const item = this.queue.shift();
    this.states.set(item, IN_FLIGHT);
    return item;
  }
  done(item) {
    this.check(item);
    const state = this.states.get(item);
    if (state === IN_FLIGHT) this.states.delete(item);
    if (state === DIRTY) {
      this.enqueue(item);
    }
  }
  /** Counts a failure of `item` and answers the new count. */
  fail(item) {
    this.check(item);
    const count = (this.counts.get(item) ?? 0) + 1;
    this.counts.set(item, count);
    return count;
  }
  retry(item) {
    if (this.fail(item) >= this.maxRetries) return false;
    this.add(item);
    return true;
  }
  forget(item) {
    this.check(item);
    this.counts.delete(item);
  }
  failures(item) {
    this.check(item);
    return this.counts.get(item) ?? 0;
  }
}

/** A factory of `Queue`'s queues: what every wrong queue exports. */
export const make = (Queue) => (options) => new Queue(options);

/** The correct base, to show that the gate accepts it. */
export const naive = make(Naive);
