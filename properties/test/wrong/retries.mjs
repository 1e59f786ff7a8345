/**
 * Wrong queues of the failure count (docs/spec.md §7, §8): `retry` counts a failure of its item and gives up when the
 * count reaches `maxRetries`; `forget` resets it and does nothing else; nothing else touches it. Each mistake gives
 * up too late or too early, counts for the wrong item, loses counts, or makes `forget` do less or more.
 */
import { make, Naive } from "./naive.mjs";

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

/** done resets the failure count, so failures never add up across processing cycles and retry never gives up. */
export const failuresResetOnDone = make(
  class extends Naive {
    done(item) {
      super.done(item);
      this.counts.delete(item);
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
