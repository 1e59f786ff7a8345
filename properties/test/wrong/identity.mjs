/**
 * Wrong queues of item identity (docs/spec.md §1.1): two items are one item when they are the same value
 * (SameValueZero), and only then. Each mistake makes distinct items collapse into one (by a key that coerces, folds
 * or normalises), or loses an item that is there (a falsy value, a name a plain object already has, a probe that
 * stops too early, NaN never found by `indexOf`).
 */
import { DIRTY, IN_FLIGHT, make, Naive } from "./naive.mjs";

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
