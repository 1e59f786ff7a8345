/**
 * Wrong queues of the in-flight state and its dirty mark (docs/spec.md §2, §4, §5, §6): an item handed out is in
 * flight until its `done`; an `add` while it is in flight marks it dirty instead of queueing it, and its `done`
 * requeues it then, once; a `done` of an item not in flight changes nothing (§6.3). Each mistake loses the mark,
 * keeps it too long, hands out or queues the item a second time, or refuses a `done` that the spec makes safe.
 */
import { DIRTY, IN_FLIGHT, make, Naive, QUEUED } from "./naive.mjs";

/** retry queues the item itself instead of going through add: an item in flight is queued, not marked dirty. */
export const retryPushesToFifo = make(
  class extends Naive {
    retry(item) {
      if (this.fail(item) >= this.maxRetries) return false;
      if (this.states.get(item) !== QUEUED) {
        this.enqueue(item);
      }
      return true;
    }
  },
);

/** done forgets the dirty mark: a change that arrived during processing is lost. */
export const lostDirtyMark = make(
  class extends Naive {
    done(item) {
      this.check(item);
      this.states.delete(item);
    }
  },
);

/** client-go's Done: "dirty" also means queued, so a done of a queued item queues it a second time (#79934). */
export const doneDuplicatesQueued = make(
  class {
    constructor({ maxRetries }) {
      this.maxRetries = maxRetries;
      this.queue = [];
      this.dirty = new Set();
      this.processing = new Set();
      this.counts = new Map();
    }
    get size() {
      return this.queue.length;
    }
    check(item) {
      if (item === undefined || item === null) throw new TypeError(`not an item: ${item}`);
    }
    add(item) {
      this.check(item);
      if (this.dirty.has(item)) return;
      this.dirty.add(item);
      if (!this.processing.has(item)) this.queue.push(item);
    }
    get() {
      if (this.queue.length === 0) return undefined;
      const item = this.queue.shift();
      this.processing.add(item);
      this.dirty.delete(item);
      return item;
    }
    done(item) {
      this.check(item);
      this.processing.delete(item);
      if (this.dirty.has(item)) this.queue.push(item);
    }
    retry(item) {
      this.check(item);
      const count = (this.counts.get(item) ?? 0) + 1;
      this.counts.set(item, count);
      if (count >= this.maxRetries) return false;
      this.add(item);
      return true;
    }
    forget(item) {
      this.check(item);
      this.counts.delete(item);
    }
  },
);

/** add ignores the in-flight state: an item added while it is processed is queued, and a second worker gets it. */
export const addWhileInFlightQueues = make(
  class extends Naive {
    add(item) {
      this.check(item);
      if (this.states.get(item) === QUEUED) return;
      this.enqueue(item);
    }
  },
);

/** done requeues every item it finishes, dirty or not: each success is processed again. */
export const doneAlwaysRequeues = make(
  class extends Naive {
    done(item) {
      this.check(item);
      const state = this.states.get(item);
      if (state !== IN_FLIGHT && state !== DIRTY) return;
      this.enqueue(item);
    }
  },
);

/** The dirty mark is never cleared: after one add in flight, every later done of the item requeues it again. */
export const dirtyMarkNeverCleared = make(
  class extends Naive {
    constructor(options) {
      super(options);
      this.marked = new Set();
    }
    add(item) {
      this.check(item);
      if (this.states.get(item) === IN_FLIGHT) this.marked.add(item);
      super.add(item);
    }
    done(item) {
      this.check(item);
      const state = this.states.get(item);
      if (state !== IN_FLIGHT && state !== DIRTY) return;
      if (this.marked.has(item)) {
        this.enqueue(item);
      } else this.states.delete(item);
    }
  },
);

/** Every 20th finished item triggers a compaction that drops the dirty marks: it needs a long history to show. */
export const compactionDropsDirtyMarks = make(
  class extends Naive {
    finished = 0;
    done(item) {
      this.check(item);
      if (this.states.get(item) === IN_FLIGHT || this.states.get(item) === DIRTY) {
        if (++this.finished % 20 === 0) {
          for (const [key, state] of this.states) if (state === DIRTY) this.states.set(key, IN_FLIGHT);
        }
      }
      super.done(item);
    }
  },
);

/**
 * A lazy dirty mark: every call takes a stamp from a `bits`-bit clock, `get` records when it handed the item out,
 * an add while in flight records when it came, and `done` requeues the item when the mark is newer than the get,
 * so that a stale mark needs no clearing. Compared with `>`, the stamps lie once the clock wraps. Shortest
 * counterexample, 2^bits + 2 calls: add(x) (stamp 0), get (stamp 1), 2^bits - 2 calls of any kind, add(x) (stamp
 * 2^bits, read as 0: older than the get), done(x) (not requeued). Any failure needs a get and an add while in flight
 * (or a later get of the marked item) whose order the numbers invert, so 2^bits calls apart, and a done after them.
 */
const stampWraps = (bits) =>
  make(
    class extends Naive {
      clock = 0;
      taken = new Map();
      marked = new Map();
      tick() {
        const stamp = this.clock;
        this.clock = (stamp + 1) & ((1 << bits) - 1);
        return stamp;
      }
      mark(item, stamp) {
        if (this.states.get(item) === IN_FLIGHT) this.marked.set(item, stamp);
        else if (this.states.get(item) === undefined) this.enqueue(item);
      }
      add(item) {
        this.check(item);
        this.mark(item, this.tick());
      }
      get() {
        const stamp = this.tick();
        const item = super.get();
        if (item !== undefined) this.taken.set(item, stamp);
        return item;
      }
      done(item) {
        this.check(item);
        this.tick();
        if (this.states.get(item) !== IN_FLIGHT) return;
        if ((this.marked.get(item) ?? -1) > this.taken.get(item)) this.enqueue(item);
        else this.states.delete(item);
      }
      retry(item) {
        const stamp = this.tick();
        if (this.fail(item) >= this.maxRetries) return false;
        this.mark(item, stamp);
        return true;
      }
      forget(item) {
        this.tick();
        super.forget(item);
      }
    },
  );

/** {@link stampWraps} with an 8-bit clock: it breaks 256 calls after an item is handed out. Shortest: 258 calls. */
export const stampWrapsAt256 = stampWraps(8);

/** {@link stampWraps} with a 16-bit clock: it breaks 65,536 calls after an item is handed out. Shortest: 65,538 calls. */
export const stampWrapsAt65536 = stampWraps(16);

/** get answers the oldest item but leaves it queued: the next get hands it out again while it is in flight. */
export const getLeavesItemQueued = make(
  class extends Naive {
    get() {
      if (this.queue.length === 0) return undefined;
      const [item] = this.queue;
      this.states.set(item, IN_FLIGHT);
      return item;
    }
  },
);

/** done of an item that is not in flight throws, where §6.3 says nothing changes. */
export const doneThrowsWhenNotInFlight = make(
  class extends Naive {
    done(item) {
      this.check(item);
      const state = this.states.get(item);
      if (state !== IN_FLIGHT && state !== DIRTY) throw new Error(`${item} is not in flight`);
      super.done(item);
    }
  },
);
