/**
 * Wrong queues that once escaped the gate (issue #30): each keeps one realistic mistake that shows only after a
 * long history — hundreds of distinct failing items, a long hold while many other items finish — or only to a
 * caller that does not await, or only on `NaN`. Written from docs/spec.md alone, as a test writer would, each on the
 * folder's correct base (`Naive`, naive.mjs). Every export is a factory `(options) => queue`, like those of the
 * family files.
 */

import { DIRTY, IN_FLIGHT, make, Naive } from "./naive.mjs";

/** The correct base, to show that the gate accepts it. */
export const plain = make(Naive);

/**
 * The failure table is a cache of the 64 most recently failed items (a bounded LRU, so that a flood of failing
 * keys cannot exhaust memory): the count of an item evicted by 64 others starts again at 0. Shortest
 * counterexample, robust profile: 65 retries of distinct items, then a retry of the first (66 calls).
 */
export const failureTableOf64 = make(
  class extends Naive {
    fail(item) {
      const count = super.fail(item);
      this.counts.delete(item);
      this.counts.set(item, count); // most recent last
      if (this.counts.size > 64) this.counts.delete(this.counts.keys().next().value);
      return count;
    }
  },
);

/**
 * A sweep reclaims items held too long, measuring "too long" in completions: once 33 other items were finished
 * while an item was in flight, the item is dropped, as if its worker had died. A later `add` of it queues it while
 * it is still in flight. Shortest counterexample: add and get the item, 33 others added, got and done, then add it
 * again (102 calls).
 */
export const sweepDropsLongHeld = make(
  class extends Naive {
    finished = 0;
    heldSince = new Map();
    get() {
      const item = super.get();
      if (item !== undefined) this.heldSince.set(item, this.finished);
      return item;
    }
    done(item) {
      const state = this.states.get(item);
      super.done(item);
      if (state !== IN_FLIGHT && state !== DIRTY) return;
      this.heldSince.delete(item);
      this.finished++;
      for (const [held, since] of this.heldSince) {
        if (this.finished - since < 33) continue;
        this.heldSince.delete(held);
        this.states.delete(held); // its worker is presumed dead
      }
    }
  },
);

/**
 * `add` answers a promise that is already resolved, and makes its change on a later microtask (a write-behind
 * journal): a caller that awaits the answer sees the item, one that does not await sees it missing, against §10.8
 * (a promise resolves only once its change is made). Its `get` is synchronous, as are the other verbs. Shortest
 * counterexample: one round, `add(a) ‖ get()` (2 calls), the add's promise resolved before the get was made.
 */
export const addResolvesBeforeItsChange = make(
  class extends Naive {
    add(item) {
      this.check(item);
      queueMicrotask(() => super.add(item));
      return Promise.resolve();
    }
    retry(item) {
      if (this.fail(item) >= this.maxRetries) return false;
      super.add(item); // at once: only the journal of `add` writes behind
      return true;
    }
  },
);

/**
 * The queue deduplicates with `indexOf` over its arrays (no Map of states): `NaN !== NaN`, so `NaN` is never found
 * queued or in flight, and an `add(NaN)` while it is queued queues it twice. Shortest counterexample: `add(NaN)`
 * twice (2 calls), in either profile.
 */
export const indexOfEverywhere = make(
  class extends Naive {
    held = [];
    dirty = [];
    add(item) {
      this.check(item);
      if (this.held.indexOf(item) >= 0) {
        if (this.dirty.indexOf(item) < 0) this.dirty.push(item);
        return;
      }
      if (this.queue.indexOf(item) < 0) this.queue.push(item);
    }
    get() {
      if (this.queue.length === 0) return undefined;
      const item = this.queue.shift();
      this.held.push(item);
      return item;
    }
    done(item) {
      this.check(item);
      const at = this.held.indexOf(item);
      if (at < 0) return;
      this.held.splice(at, 1);
      const mark = this.dirty.indexOf(item);
      if (mark < 0) return;
      this.dirty.splice(mark, 1);
      this.queue.push(item);
    }
  },
);
