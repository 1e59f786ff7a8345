/**
 * The errors of the PostgreSQL queue ([docs/spec.md §20](../../docs/spec.md#§20-leases-on-postgresql)).
 */

/**
 * A `done`, `retry`, `forget` or `extend` carried a lease that is not live: it expired, was done, or the item
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
      `${verb}(${JSON.stringify(item)}) refused: the lease with token ${token} expired, was done or was superseded; nothing changed`,
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
    super(`${verb} could not reach PostgreSQL: ${describe(cause)}`, { cause });
  }
}

/**
 * The cause of a failed connection in one line: the driver's message, its first line only, and what it means when
 * the message alone does not say (a malformed connection string).
 */
function describe(cause: unknown): string {
  const error = cause as { code?: unknown; hostname?: unknown } | null;
  const lines = String(cause instanceof Error ? cause.message : cause).split("\n", 1);
  // Stryker disable next-line StringLiteral: equivalent: split with a limit of 1 answers one part, which join leaves as it is
  const message = lines.join("");
  // pg's message is "Invalid URL", with the string redacted: a password must not reach a log either.
  if (error?.code === "ERR_INVALID_URL") return `the connection string is not a valid URL (${message})`;
  // pg reads a connection string without a scheme as a path under the host "base".
  if (error?.code === "ENOTFOUND" && error.hostname === "base") {
    return `${message} (a connection string without "postgres://" is read as a path: is the scheme missing?)`;
  }
  return message;
}

/**
 * A call found the schema without the queue's tables or functions, or found no schema: `migrate` was not run on it,
 * or not since an upgrade ([docs/spec.md §20.9](../../docs/spec.md#§20-leases-on-postgresql)). Its message names the `migrate` call to make.
 *
 * @example
 * ```ts
 * try {
 *   await queue.add("default/web");
 * } catch (error) {
 *   // add found no queue in the schema "jobs" (…): run migrate(pool, { schema: "jobs" }) first
 *   if (error instanceof SchemaNotMigratedError) await migrate(pool, { schema: "jobs" });
 * }
 * ```
 *
 * @public
 */
export class SchemaNotMigratedError extends Error {
  /** `"SchemaNotMigratedError"`. */
  override readonly name = "SchemaNotMigratedError";

  /**
   * @param verb - The call that failed.
   * @param schema - The queue's schema.
   * @param cause - What `pg` threw.
   */
  constructor(verb: string, schema: string, cause: unknown) {
    const message = cause instanceof Error ? cause.message : String(cause);
    super(
      `${verb} found no queue in the schema "${schema}" (${message}): run migrate(pool, { schema: "${schema}" }) first`,
      {
        cause,
      },
    );
  }
}

/** The errors of a schema `migrate` did not make or did not bring up to date: no schema, function or table. */
const unmigratedCodes: ReadonlySet<unknown> = new Set(["3F000", "42883", "42P01"]);

/** Whether `error` says that the queue's schema, one of its functions or one of its tables is missing. */
export function isUnmigrated(error: unknown): boolean {
  return unmigratedCodes.has((error as { code?: unknown } | null)?.code);
}

/**
 * The connection errors a call reports as {@link DatabaseUnavailableError}: refused, reset, timed out, ended by the
 * server, a host not found or unreachable, a database that does not exist (3D000), a user refused (28000, 28P01)
 * and a malformed connection string; and, by their messages, a server that stopped answering: pg's `query_timeout`
 * ("Query read timeout") and the pool's `connectionTimeoutMillis` while every connection is taken. A set of
 * strings: a code of another type is in it no more than an absent one.
 */
const unavailableCodes: ReadonlySet<unknown> = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "EPIPE",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ERR_INVALID_URL",
  "57P01",
  "57P02",
  "57P03",
  "3D000",
  "28000",
  "28P01",
]);

/** pg's and pg-pool's messages of a lost connection, a connection that timed out, and a server that stopped answering. */
const unavailableMessages =
  /Connection terminated|connection timeout|Client has encountered a connection error|Query read timeout|timeout exceeded when trying to connect/i;

/** Whether `error` says that the database is unreachable, rather than that a statement failed. */
export function isUnavailable(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  if (unavailableCodes.has(code)) return true;
  return error instanceof Error && unavailableMessages.test(error.message);
}
