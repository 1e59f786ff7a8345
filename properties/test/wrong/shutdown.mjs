/**
 * Wrong queues of shutting down (docs/spec.md §12): after `shutDown`, `add` and `retry` queue nothing new. The
 * mistake here only sets a flag that nothing reads.
 */
import { make, Naive } from "./naive.mjs";

/** shutDown only sets the flag: add still queues new work, and retry still requeues. */
export const shutDownOnlySetsAFlag = make(
  class extends Naive {
    shuttingDown = false;
    shutDown() {
      this.shuttingDown = true;
    }
  },
);
