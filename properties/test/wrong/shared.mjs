/**
 * Wrong queues that share state between queues: each queue a factory makes starts empty and with no failures
 * (docs/spec.md §3.5), whatever other queues of the process did. Each mistake keeps a table at module level or in a
 * static field, where a queue sees what another left.
 */
import { DIRTY, IN_FLIGHT, make, Naive } from "./naive.mjs";

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
