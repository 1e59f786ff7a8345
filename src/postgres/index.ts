/**
 * A keyed work queue in PostgreSQL, shared by many processes and hosts, with leases and fencing tokens
 * ([docs/spec.md §20](../../docs/spec.md#§20-leases-on-postgresql)). Needs the `pg` package, which the in-memory queue does not.
 *
 * @packageDocumentation
 * @module workqueue-spec/postgres
 */
export type { ObservablePool } from "./connections.js";
export {
  DatabaseUnavailableError,
  SchemaNotMigratedError,
  StaleLeaseError,
} from "./errors.js";
export { type MigrateOptions, migrate } from "./migrate.js";
export {
  type Lease,
  type ListeningClient,
  type PoolLike,
  type PostgresBackoff,
  PostgresWorkQueue,
  type PostgresWorkQueueOptions,
  type Queryable,
  type QueryResult,
} from "./queue.js";
export {
  type LeasedQueue,
  type LeaseHandlerContext,
  type LeaseWorkerOptions,
  runLeaseWorkers,
} from "./workers.js";
