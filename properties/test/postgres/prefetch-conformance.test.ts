/**
 * `PostgresWorkQueue` with prefetched leases (docs/spec.md §20.18) against the model: the buffer is invisible to
 * the queue object's caller — its views count the buffered leases as queued items, an add of a buffered item is the
 * add of a queued one, and a call with token 0 of a buffered item gives its lease back first. A buffer of 3 is
 * smaller than most runs' queues, so that fills, hand-ons from the buffer and give-backs all happen.
 */
import { conformanceSuite } from "./conformance.js";

conformanceSuite(
  "prefetch_conformance",
  "with 3 leases prefetched, the PostgreSQL queue answers as the model does after every call",
  { prefetch: 3 },
);
