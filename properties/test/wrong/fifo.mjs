/**
 * Wrong queues of the queue proper (docs/spec.md §2, §5, §9.1): items are handed out oldest first, every queued
 * item is kept however many there are, and `size` counts the queued items. Each mistake reorders the items, drops or
 * overwrites one past some capacity, misses the last one, or miscounts.
 */
import { DIRTY, IN_FLIGHT, make, Naive, QUEUED } from "./naive.mjs";

/** get hands out the newest queued item instead of the oldest. */
export const lifo = make(
  class extends Naive {
    get() {
      if (this.queue.length === 0) return undefined;
      const item = this.queue.pop();
      this.states.set(item, IN_FLIGHT);
      return item;
    }
  },
);

/** A ring buffer whose grow copies the slots in array order, not from the head: wrapped items come out of order. */
export const ringBufferBreaksOnGrow = make(
  class extends Naive {
    constructor(options) {
      super(options);
      this.ring = new Array(4);
      this.head = 0;
      this.length = 0;
    }
    get size() {
      return this.length;
    }
    add(item) {
      this.check(item);
      const state = this.states.get(item);
      if (state === IN_FLIGHT) this.states.set(item, DIRTY);
      if (state !== undefined) return;
      this.states.set(item, QUEUED);
      this.push(item);
    }
    push(item) {
      if (this.length === this.ring.length) this.ring = [...this.ring, ...new Array(this.ring.length)];
      this.ring[(this.head + this.length) % this.ring.length] = item;
      this.length++;
    }
    get() {
      if (this.length === 0) return undefined;
      const item = this.ring[this.head];
      this.head = (this.head + 1) % this.ring.length;
      this.length--;
      this.states.set(item, IN_FLIGHT);
      return item;
    }
    done(item) {
      this.check(item);
      const state = this.states.get(item);
      if (state === IN_FLIGHT) this.states.delete(item);
      if (state === DIRTY) {
        this.states.set(item, QUEUED);
        this.push(item);
      }
    }
  },
);

/** A fixed ring of 128 slots that never grows: the 129th queued item overwrites the oldest. */
export const fixedCapacity128 = make(
  class extends Naive {
    constructor(options) {
      super(options);
      this.ring = new Array(128);
      this.head = 0;
      this.length = 0;
      const ring = this;
      this.queue = {
        get length() {
          return Math.min(ring.length, 128);
        },
        push(item) {
          ring.ring[(ring.head + ring.length) % 128] = item;
          if (ring.length === 128) ring.head = (ring.head + 1) % 128;
          else ring.length++;
        },
        shift() {
          const item = ring.ring[ring.head];
          ring.head = (ring.head + 1) % 128;
          ring.length--;
          return item;
        },
      };
    }
  },
);

/**
 * At most 1,000 items queued or in flight, and an add past them is dropped silently, as a non-blocking send on a
 * full channel drops it. Shortest counterexample, 1,001 calls: 1,001 adds of distinct items (the last one lost);
 * the 1,000 items before it each take a call.
 */
export const dropsPast1000 = make(
  class extends Naive {
    add(item) {
      this.check(item);
      if (this.states.get(item) === undefined && this.states.size >= 1000) return;
      super.add(item);
    }
  },
);

/**
 * Item states in a bounded cache of 4,096 entries that evicts the least recently set one: an item queued or in
 * flight beyond them is forgotten, so its next add queues it a second time. Shortest counterexample, 4,098 calls:
 * 4,097 adds of distinct items (the first one's entry evicted), then add of the first one again; every entry takes
 * an add.
 */
export const evictsStatesBeyond4096 = make(
  class extends Naive {
    constructor(options) {
      super(options);
      const states = new Map();
      this.states = {
        get: (item) => states.get(item),
        set: (item, state) => {
          states.delete(item);
          states.set(item, state); // most recent last
          if (states.size > 4096) states.delete(states.keys().next().value);
        },
        delete: (item) => states.delete(item),
        get size() {
          return states.size;
        },
      };
    }
  },
);

/** size counts the items in flight too: the view is wrong, and only the view. */
export const sizeCountsInFlight = make(
  class extends Naive {
    get size() {
      return this.queue.length + [...this.states.values()].filter((state) => state !== QUEUED).length;
    }
  },
);

/** A bounded buffer of 3 that drops what comes after, silently: the fourth item added is lost. */
export const dropsPastThree = make(
  class extends Naive {
    add(item) {
      this.check(item);
      if (this.states.get(item) === undefined && this.queue.length >= 3) {
        this.states.set(item, QUEUED);
        return;
      }
      super.add(item);
    }
  },
);

/** get's emptiness test is off by one: with one item queued it answers undefined, and the item stays queued. */
export const getMissesTheLastItem = make(
  class extends Naive {
    get() {
      if (this.queue.length <= 1) return undefined;
      return super.get();
    }
  },
);
