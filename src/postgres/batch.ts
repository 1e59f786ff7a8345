/**
 * Calls that go out together: while one statement of a kind is in flight, the calls of that kind that arrive wait
 * and then go out as one statement, each answered by its own result ([docs/spec.md §20.1](../../docs/spec.md#§20-leases-on-postgresql)).
 *
 * @internal
 */

/** A call waiting for its statement: its input and how to answer it. */
interface Waiting<I, O> {
  readonly input: I;
  resolve(output: O): void;
  reject(error: unknown): void;
}

/**
 * Sends calls in batches: the first call goes out at once, alone; the calls that arrive while a statement is in
 * flight go out together as the next one, as soon as it ends. A call resolves or rejects only once its statement
 * answered, so after its commit.
 *
 * @remarks
 * Invariant: `#waiting` is empty while no statement is in flight. Under load this sends one statement per round
 * trip however many calls arrive, which is what bounds the statements per call (docs/performance.md).
 */
export class Batcher<I, O> {
  /** Sends one statement for `inputs` and answers one result for each, in their order. */
  readonly #send: (inputs: readonly I[]) => Promise<readonly O[]>;
  /** The calls that arrived while a statement was in flight, in their order. */
  #waiting: Waiting<I, O>[] = [];
  /** Whether a statement is in flight. */
  #sending = false;

  /** @param send - One statement for the inputs, answering one result per input, in their order. */
  constructor(send: (inputs: readonly I[]) => Promise<readonly O[]>) {
    this.#send = send;
  }

  /** Sends `input` with the calls that wait beside it; resolves with its own result, or rejects with the statement's error. */
  call(input: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.#waiting.push({ input, resolve, reject });
      if (!this.#sending) {
        this.#sending = true;
        void this.#flush();
      }
    });
  }

  /** Sends every waiting call as one statement; then, once it answered, the calls that arrived meanwhile, if any. */
  async #flush(): Promise<void> {
    const batch = this.#waiting;
    this.#waiting = [];
    try {
      const outputs = await this.#send(batch.map((call) => call.input));
      for (const [i, call] of batch.entries()) call.resolve(outputs[i] as O);
    } catch (error) {
      for (const call of batch) call.reject(error);
    }
    if (this.#waiting.length > 0) void this.#flush();
    else this.#sending = false;
  }
}
