/**
 * Connections that survive their own death ([docs/spec.md §20.8](../../docs/spec.md#§20-leases-on-postgresql)): `pg` emits a lost connection as
 * an `'error'` event on its `Client`, or on the `Pool` for an idle one, and an `'error'` event without a listener
 * ends the process. The queue's calls report a lost connection themselves, as a `DatabaseUnavailableError`; these
 * listeners only keep the event from killing the process.
 *
 * @internal
 */

/**
 * A pool that tells of the clients it hands out: `pg`'s `Pool`. The queue adds one listener of each event to the
 * pool it is given (and one `'error'` listener to each client), so that no lost connection ends the process.
 *
 * @public
 */
export interface ObservablePool {
  /**
   * Subscribes to a client's checkout, made synchronously as the pool hands the client out.
   *
   * @param event - `"acquire"`.
   * @param listener - Called with the client, before the code that asked for it has it: anything with `on`
   * for its `'error'` events, as `pg`'s `Client`.
   */
  on(
    event: "acquire",
    listener: (client: { on(event: "error", listener: (error: Error) => void): unknown }) => void,
  ): unknown;
  /**
   * Subscribes to the errors of the pool's idle clients.
   *
   * @param event - `"error"`.
   * @param listener - Called with the error of a client that was lost while idle.
   */
  on(event: "error", listener: (error: Error) => void): unknown;
}

/** Ignores a lost connection: the call that used it rejects, and the pool makes another. */
function ignore(): void {}

/** The pools already guarded, so that many queues on one pool add two listeners in all, not two each. */
const guarded = new WeakSet<object>();

/** The clients already given a listener: the pool hands the same client out many times. */
const listened = new WeakSet<object>();

/**
 * Gives every client the pool hands out, from the moment it does, an `'error'` listener, and the pool one for its
 * idle clients: no lost connection of the pool can end the process. Does nothing for a pool without `on` (a
 * `Client`, or a pool of the caller's making), whose errors are the caller's to listen to.
 *
 * @remarks
 * The listener is added in the pool's `'acquire'` event, which `pg` emits synchronously as it hands a client out: a
 * listener added once the `connect` promise resolved would come too late for an error read from the same chunk as
 * the message that ended the connect (a backend terminated as soon as it started).
 */
export function guardPool(pool: Partial<ObservablePool>): void {
  if (typeof pool.on !== "function" || guarded.has(pool)) return;
  guarded.add(pool);
  pool.on("error", ignore);
  pool.on("acquire", (client) => {
    if (listened.has(client)) return;
    listened.add(client);
    client.on("error", ignore);
  });
}
