/**
 * A JSON-lines session with a child process: requests on its stdin, one reply line each on its stdout, in order —
 * or, for requests that carry an `id` (the `concurrent` feature, docs/protocol.md), in any order, each reply
 * carrying its request's `id`.
 * It never hangs and never leaves the child behind: every reply has a deadline, and `close` reaps the process. The
 * deadline counts only time in which the gate was ready to read (see `Deadline`), so a busy gate never blames the
 * implementation for its own stall.
 */
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { type BreachKind, ProtocolBreach, StartError } from "../core/breach.js";
import { Deadline } from "../core/deadline.js";

/** Requests written together, waiting for their replies. */
interface Batch {
  /** The request lines. */
  readonly lines: readonly string[];
  /** The parsed replies so far, in order. */
  readonly replies: unknown[];
  readonly resolve: (replies: unknown[]) => void;
  readonly reject: (error: Error) => void;
}

/** A request that carries an `id`, waiting for the reply with that `id`. */
interface Tagged {
  /** The request line. */
  readonly line: string;
  readonly resolve: (reply: unknown) => void;
  readonly reject: (error: Error) => void;
}

/** How much of the child's stderr is kept for the report. */
const stderrKept = 4096;

/** A running implementation. Create with {@link Session.spawn}; always `close` it. */
export class Session {
  readonly #child: ChildProcessWithoutNullStreams;
  /** Batches written and not yet fully answered, oldest first. */
  readonly #pending: Batch[] = [];
  /** Requests with an `id` written and not yet answered, by `id`. */
  readonly #tagged = new Map<number, Tagged>();
  /** Requests with an `id` to be written together once the current task ends (see `call`). */
  #unwritten: string[] = [];
  /**
   * The deadline of the oldest unanswered request, counted from the last reply or from the first request of an idle
   * session; while the implementation starts, the start-up deadline (see `started`).
   */
  #deadline: Deadline;
  #stderr = "";
  /** Set once the session is over: every later request fails with it at once. */
  #failure: Error | undefined;
  readonly #exited: Promise<void>;

  private constructor(child: ChildProcessWithoutNullStreams, timeoutMs: number) {
    this.#child = child;
    this.#deadline = this.#deadlineOf(timeoutMs);
    child.stderr.setEncoding("utf8");
    child.stderr.on("data", (chunk: string) => {
      this.#stderr = (this.#stderr + chunk).slice(-stderrKept);
    });
    child.stdin.on("error", () => {}); // a child that exits early closes the pipe; the exit handler reports it
    // Lines are split by hand: readline's per-line machinery costs more than the rest of a reply's handling.
    let partial = "";
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (chunk: string) => {
      const lines = (partial + chunk).split("\n");
      partial = lines.pop() as string;
      for (const line of lines) this.#onLine(line.endsWith("\r") ? line.slice(0, -1) : line);
    });
    // "close" comes after the child's stdout is drained, so replies written just before exiting still count.
    this.#exited = new Promise((resolve) =>
      child.once("close", (code, signal) => {
        const how = signal === null ? `with code ${code}` : `on signal ${signal}`;
        const kind = code === 0 ? "exited early" : "crashed";
        this.#fail(new ProtocolBreach(kind, `the implementation exited ${how}`, this.stderrTail));
        resolve();
      }),
    );
  }

  /**
   * Starts `command` with `args` (no shell) and waits until it is running.
   *
   * @throws StartError when the command cannot be started.
   */
  static async spawn(command: string, args: readonly string[], timeoutMs: number): Promise<Session> {
    const child = spawn(command, args, { stdio: ["pipe", "pipe", "pipe"] });
    await new Promise<void>((resolve, reject) => {
      child.once("spawn", resolve);
      child.once("error", (error) => reject(new StartError(`cannot start \`${command}\`: ${error.message}`)));
    });
    return new Session(child, timeoutMs);
  }

  /**
   * Says that the implementation has started (it answered the handshake): from now on each reply must come within
   * `timeoutMs`. Until then the start-up deadline applies, so that a slow start on a busy machine is not mistaken for
   * a hung implementation.
   */
  started(timeoutMs: number): void {
    this.#deadline.disarm();
    this.#deadline = this.#deadlineOf(timeoutMs);
    if (this.#awaiting) this.#deadline.arm();
  }

  /** Whether a reply is awaited. */
  get #awaiting(): boolean {
    return this.#pending.length > 0 || this.#tagged.size > 0;
  }

  /** The last lines the implementation wrote to stderr. */
  get stderrTail(): string {
    return this.#stderr.trimEnd();
  }

  /**
   * Writes `messages`, one line each, in one write, and resolves with their parsed replies in order. Each reply
   * must come within the timeout of the one before it (or of the write, for the first).
   */
  send(messages: readonly object[]): Promise<unknown[]> {
    const lines = messages.map((message) => JSON.stringify(message));
    const answered = new Promise<unknown[]>((resolve, reject) => {
      this.#pending.push({ lines, replies: [], resolve, reject });
    });
    if (this.#failure !== undefined) this.#fail(this.#failure);
    else {
      if (this.#pending.length === 1) this.#deadline.progress();
      this.#child.stdin.write(`${lines.join("\n")}\n`);
      this.#deadline.arm();
    }
    return answered;
  }

  /**
   * Writes `request`, which carries a numeric `id` that no unanswered request has, and resolves with the reply that
   * carries the same `id`, whenever it comes. The requests of one task (a round's calls, made without waiting) go
   * out in one write once the task ends, so that the implementation reads them together. Each reply must come
   * within the timeout of the one before it (or of the write). The caller's obligation: no request without an `id`
   * is unanswered meanwhile.
   */
  call(request: { readonly id: number }): Promise<unknown> {
    const line = JSON.stringify(request);
    const answered = new Promise<unknown>((resolve, reject) => {
      this.#tagged.set(request.id, { line, resolve, reject });
    });
    if (this.#failure !== undefined) this.#fail(this.#failure);
    else {
      if (this.#unwritten.length === 0) queueMicrotask(() => this.#flush());
      this.#unwritten.push(line);
    }
    return answered;
  }

  /** Writes the requests with an `id` that `call` holds, in one write. */
  #flush(): void {
    const lines = this.#unwritten;
    this.#unwritten = [];
    if (this.#failure !== undefined) return;
    if (this.#tagged.size === lines.length) this.#deadline.progress();
    this.#child.stdin.write(`${lines.join("\n")}\n`);
    this.#deadline.arm();
  }

  /** Ends the child's stdin, gives it a moment to exit, then kills it; resolves once it is reaped. */
  async close(): Promise<void> {
    this.#fail(new Error("the session is closed"));
    this.#child.stdin.end();
    const kill = setTimeout(() => this.#child.kill("SIGKILL"), 1000);
    await this.#exited;
    clearTimeout(kill);
  }

  #onLine(line: string): void {
    if (this.#pending.length === 0 && this.#tagged.size > 0) {
      this.#onTagged(line);
      return;
    }
    const head = this.#pending[0];
    if (head === undefined) {
      this.#breach("unasked output", `printed a line nobody asked for: ${line}`);
      return;
    }
    this.#deadline.progress();
    let reply: unknown;
    try {
      reply = JSON.parse(line);
    } catch (error) {
      const request = head.lines[head.replies.length];
      this.#breach("malformed reply", `the reply to ${request} is not JSON (${(error as Error).message}): ${line}`);
      return;
    }
    head.replies.push(reply);
    if (head.replies.length < head.lines.length) return;
    this.#pending.shift();
    head.resolve(head.replies);
  }

  /** A reply to a request with an `id`: it must be JSON and carry the `id` of an unanswered request. */
  #onTagged(line: string): void {
    this.#deadline.progress();
    let reply: unknown;
    try {
      reply = JSON.parse(line);
    } catch (error) {
      this.#breach(
        "malformed reply",
        `a reply to a request with an id is not JSON (${(error as Error).message}): ${line}`,
      );
      return;
    }
    const id = (reply as { id?: unknown } | null)?.id;
    const waiting = typeof id === "number" ? this.#tagged.get(id) : undefined;
    if (waiting === undefined) {
      const awaited = [...this.#tagged.keys()].join(", ");
      this.#breach("malformed reply", `a reply must carry the id of a request awaiting one (${awaited}): ${line}`);
      return;
    }
    this.#tagged.delete(id as number);
    waiting.resolve(reply);
  }

  /** A deadline of `timeoutMs` for the oldest unanswered request, which breaks the session when it passes. */
  #deadlineOf(timeoutMs: number): Deadline {
    return new Deadline(
      timeoutMs,
      () => this.#awaiting,
      () => {
        const head = this.#pending[0];
        const request = head === undefined ? [...this.#tagged.values()][0]?.line : head.lines[head.replies.length];
        this.#breach("timed out", `no reply to ${request} within ${timeoutMs} ms`);
      },
    );
  }

  /** Ends the session with a breach of the protocol and kills the child, which cannot be trusted any more. */
  #breach(kind: BreachKind, message: string): void {
    this.#fail(new ProtocolBreach(kind, message, this.stderrTail));
    this.#child.kill("SIGKILL");
  }

  /** Ends the session with `error` (the first one wins) and rejects every pending batch. */
  #fail(error: Error): void {
    this.#failure ??= error;
    this.#deadline.disarm();
    for (const pending of this.#pending.splice(0)) pending.reject(this.#failure);
    for (const tagged of this.#tagged.values()) tagged.reject(this.#failure);
    this.#tagged.clear();
  }
}
