/**
 * The errors of the PostgreSQL queue ([docs/spec.md §20](../../docs/spec.md#§20-leases-on-postgresql)).
 */

/**
 * A `done`, `retry`, `forget` or `extend` carried a lease that is no longer the item's: it expired, or the item
 * was handed out again under a later token ([docs/spec.md §20.4](../../docs/spec.md#§20-leases-on-postgresql)). Nothing changed.
 *
 * @public
 * @example
 * ```ts
 * try {
 *   await queue.done(lease);
 * } catch (error) {
 *   if (!(error instanceof StaleLeaseError)) throw error;
 *   // another worker holds the item now: drop the result of this processing
 * }
 * ```
 */
export class StaleLeaseError extends Error {
  /** `"StaleLeaseError"`. */
  override readonly name = "StaleLeaseError";
  /** The item of the refused lease. */
  readonly item: string;
  /** The refused lease's token. */
  readonly token: number;

  /**
   * @param verb - The refused call.
   * @param item - The lease's item.
   * @param token - The lease's token.
   */
  constructor(verb: string, item: string, token: number) {
    super(
      `${verb}(${JSON.stringify(item)}) refused: the lease with token ${token} expired or was superseded; nothing changed`,
    );
    this.item = item;
    this.token = token;
  }
}

/**
 * The database could not be reached, or the connection was lost during a call ([docs/spec.md §20.8](../../docs/spec.md#§20-leases-on-postgresql)). A
 * verb is one transaction, so a call that fails this way changed nothing or everything: a `done` or `retry`
 * whose connection was lost may be called again with the same lease.
 *
 * @public
 * @example
 * ```ts
 * try {
 *   await queue.add("default/web");
 * } catch (error) {
 *   if (error instanceof DatabaseUnavailableError) console.error(error.message, error.cause);
 * }
 * ```
 */
export class DatabaseUnavailableError extends Error {
  /** `"DatabaseUnavailableError"`. */
  override readonly name = "DatabaseUnavailableError";

  /**
   * @param verb - The call that failed.
   * @param cause - What `pg` threw.
   */
  constructor(verb: string, cause: unknown) {
    super(`${verb} could not reach PostgreSQL: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
  }
}

/**
 * The connection errors a call reports as {@link DatabaseUnavailableError}: refused, reset, timed out, or ended by the
 * server. A set of strings: a code of another type is in it no more than an absent one.
 */
const unavailableCodes: ReadonlySet<unknown> = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "EPIPE",
  "ENOTFOUND",
  "57P01",
  "57P02",
  "57P03",
]);

/** Whether `error` says that the database is unreachable, rather than that a statement failed. */
export function isUnavailable(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  if (unavailableCodes.has(code)) return true;
  return (
    error instanceof Error &&
    /Connection terminated|connection timeout|Client has encountered a connection error/i.test(error.message)
  );
}
