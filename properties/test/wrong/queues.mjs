/**
 * Deliberately wrong work queues, each with one realistic mistake, to prove that the gate rejects them. `Naive`
 * is a plain, correct queue (arrays and a Map, no speed); each wrong queue overrides the method it gets wrong.
 * Every export is a factory `(options) => queue`, loadable by `--module` and by `serve-module.js <file> <export>`.
 */

const QUEUED = "queued";
const IN_FLIGHT = "in flight";
const DIRTY = "in flight + dirty";

/** A correct queue, written plainly: the base the mistakes are made in. */
class Naive {
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

const make = (Queue) => (options) => new Queue(options);

/** The correct base, to show that the gate accepts it. */
export const naive = make(Naive);

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

/** retry gives up one failure too late: `>` where the spec says "reaches". */
export const offByOneGiveUp = make(
  class extends Naive {
    retry(item) {
      if (this.fail(item) > this.maxRetries) return false;
      this.add(item);
      return true;
    }
  },
);

/** forget does nothing: an item that recovered keeps its old failures and is given up on too early. */
export const forgetDoesNothing = make(
  class extends Naive {
    forget(item) {
      this.check(item);
    }
  },
);

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

/** add tests the item for truthiness, so the empty string is never queued. */
export const emptyStringIsNothing = make(
  class extends Naive {
    add(item) {
      this.check(item);
      if (!item) return;
      super.add(item);
    }
  },
);

/** One failure counter for all items: one item's failures make another give up. */
export const sharedFailureCount = make(
  class extends Naive {
    retry(item) {
      this.check(item);
      this.shared = (this.shared ?? 0) + 1;
      this.counts.set(item, this.shared);
      if (this.shared >= this.maxRetries) return false;
      this.add(item);
      return true;
    }
    forget(item) {
      this.check(item);
      this.shared = 0;
      this.counts.delete(item);
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

/** done resets the failure count, so failures never add up across processing cycles and retry never gives up. */
export const failuresResetOnDone = make(
  class extends Naive {
    done(item) {
      super.done(item);
      this.counts.delete(item);
    }
  },
);

/** States kept in a plain object: "__proto__" and "constructor" are already "there", so they are never queued. */
export const plainObjectStates = make(
  class extends Naive {
    constructor(options) {
      super(options);
      const states = {};
      this.states = {
        get: (item) => states[item],
        set: (item, state) => {
          states[item] = state;
        },
        delete: (item) => delete states[item],
      };
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

/** shutDown only sets the flag: add still queues new work, and retry still requeues. */
export const shutDownOnlySetsAFlag = make(
  class extends Naive {
    shuttingDown = false;
    shutDown() {
      this.shuttingDown = true;
    }
  },
);

/** A queue whose item states are kept under `key(item)` instead of the item: the mistake is in `key`. */
const keyedBy = (key) =>
  make(
    class extends Naive {
      constructor(options) {
        super(options);
        const states = new Map();
        this.states = {
          get: (item) => states.get(key(item)),
          set: (item, state) => states.set(key(item), state),
          delete: (item) => states.delete(key(item)),
        };
      }
    },
  );

/** Keys are coerced to strings, as a plain object or a string-keyed store would: 1 and "1" are one item. */
export const coercesToString = keyedBy((item) => String(item));

/** Keys are persisted as JSON: two distinct objects equal as JSON are one item. */
export const jsonKeys = keyedBy((item) => JSON.stringify(item) ?? String(item));

/** Dedup by `indexOf` on the queue: NaN is never found, so it is queued again and again. */
export const indexOfDedup = make(
  class extends Naive {
    add(item) {
      this.check(item);
      const state = this.states.get(item);
      if (state === IN_FLIGHT) this.states.set(item, DIRTY);
      if (state === IN_FLIGHT || state === DIRTY) return;
      if (this.queue.indexOf(item) >= 0) return;
      this.enqueue(item);
    }
  },
);

/** String keys are folded to lower case, as a case-insensitive store would: "a" and "A" are one item. */
export const foldsCase = keyedBy((item) => (typeof item === "string" ? item.toLowerCase() : item));

/** String keys are normalised to NFC: "é" composed and decomposed are one item. */
export const normalizesKeys = keyedBy((item) => (typeof item === "string" ? item.normalize("NFC") : item));

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

/** Failure counts kept in a byte: they saturate at 255, so a maxRetries above 255 is never reached. */
export const saturatingCount = make(
  class extends Naive {
    fail(item) {
      this.check(item);
      const count = Math.min(255, (this.counts.get(item) ?? 0) + 1);
      this.counts.set(item, count);
      return count;
    }
  },
);

/** `Infinity` silently means ten retries. */
export const infinityMeansTen = make(
  class extends Naive {
    constructor(options) {
      super({ maxRetries: options.maxRetries === Number.POSITIVE_INFINITY ? 10 : options.maxRetries });
    }
  },
);

/** The failure table keeps the 16 most recently failed items and evicts the rest: their counts start again. */
export const evictsFailuresBeyond16 = make(
  class extends Naive {
    fail(item) {
      const count = super.fail(item);
      this.counts.delete(item);
      this.counts.set(item, count); // most recent last
      while (this.counts.size > 16) this.counts.delete(this.counts.keys().next().value);
      return count;
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

/** Java's `String.hashCode`: `s[0]*31^(n-1) + … + s[n-1]`, in 32 bits; `"Aa"` and `"BB"` both hash to 2112. */
const javaHash = (text) => {
  let hash = 0;
  for (let i = 0; i < text.length; i++) hash = (Math.imul(hash, 31) + text.charCodeAt(i)) | 0;
  return hash;
};

/**
 * Item states in a small open-addressing table (8 slots, doubling at half full, linear probing on Java's string
 * hash), whose delete empties the slot instead of leaving a tombstone: an item stored past a colliding neighbour is
 * no longer found once the neighbour is removed, so its next add queues it a second time. Shortest counterexample,
 * 5 calls: add("Aa"), add("BB") (probed one slot on), get (→ "Aa"), done("Aa") (its slot emptied), add("BB") (not
 * found: queued again). Removing an item takes its add, a get and its done; the one stored past it needs its own
 * add before the removal and one call after it that looks it up.
 */
export const hashTableLosesCollided = make(
  class extends Naive {
    constructor(options) {
      super(options);
      let slots = new Array(8).fill(undefined); // each undefined, or [item, state]
      let used = 0;
      const same = (a, b) => [a].includes(b); // SameValueZero, as a Map compares keys
      const home = (item) => javaHash(typeof item === "string" ? item : String(item)) & (slots.length - 1);
      const find = (item) => {
        for (let i = home(item); slots[i] !== undefined; i = (i + 1) & (slots.length - 1)) {
          if (same(slots[i][0], item)) return i;
        }
        return -1; // an empty slot ends the probe: an entry past an emptied slot is never reached
      };
      const insert = (item, state) => {
        let i = home(item);
        while (slots[i] !== undefined) i = (i + 1) & (slots.length - 1);
        slots[i] = [item, state];
        used++;
      };
      this.states = {
        get: (item) => slots[find(item)]?.[1],
        set: (item, state) => {
          const i = find(item);
          if (i >= 0) {
            slots[i][1] = state;
            return;
          }
          if (2 * (used + 1) > slots.length) {
            const old = slots.filter((slot) => slot !== undefined);
            slots = new Array(slots.length * 2).fill(undefined);
            used = 0;
            for (const [key, value] of old) insert(key, value);
          }
          insert(item, state);
        },
        delete: (item) => {
          const i = find(item);
          if (i < 0) return;
          slots[i] = undefined; // the mistake: no tombstone, no shift back of the entries probed past it
          used--;
        },
      };
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

/** One failure table for every queue, at module level: a queue starts with the counts other queues left. */
const failureTable = new Map();
export const failuresSharedByQueues = make(
  class extends Naive {
    constructor(options) {
      super(options);
      this.counts = failureTable;
    }
  },
);

/** The items being processed in a static field, shared by every queue: one queue's in-flight item is dirty in the next. */
export const processingSharedByQueues = make(
  class extends Naive {
    static processing = new Set();
    add(item) {
      this.check(item);
      if (this.constructor.processing.has(item)) this.states.set(item, DIRTY);
      else super.add(item);
    }
    get() {
      const item = super.get();
      if (item !== undefined) this.constructor.processing.add(item);
      return item;
    }
    done(item) {
      this.check(item);
      if (this.states.get(item) === IN_FLIGHT) this.constructor.processing.delete(item);
      super.done(item);
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

/** forget queues the item it forgets when it is absent, as a "forget and re-enqueue" helper might. */
export const forgetQueues = make(
  class extends Naive {
    forget(item) {
      super.forget(item);
      if (this.states.get(item) === undefined) {
        this.enqueue(item);
      }
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
