/**
 * `PostgresWorkQueue` on the machine's real PostgreSQL against the model, in both profiles: every run on a queue
 * of its own, in a schema of this suite's own (docs/spec.md §20.1: the rules of §4–§12 hold for string items).
 */
import { conformanceSuite } from "./conformance.js";

conformanceSuite("conformance", "the PostgreSQL queue answers as the model does after every call");
