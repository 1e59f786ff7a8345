/**
 * A JSON-lines session with a child process: requests on its stdin, one reply line each on its stdout, in order.
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

/** How much of the child's stderr is kept for the report. */
const stderrKept = 4096;

/** A running implementation. Create with {@link Session.spawn}; always `close` it. */
export class Session {
  readonly #child: ChildProcessWithoutNullStreams;
  /** Batches written and not yet fully answered, oldest first. */
  readonly #pending: Batch[] = [];
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
    if (this.#pending.length > 0) this.#deadline.arm();
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

  /** Ends the child's stdin, gives it a moment to exit, then kills it; resolves once it is reaped. */
  async close(): Promise<void> {
    this.#fail(new Error("the session is closed"));
    this.#child.stdin.end();
    const kill = setTimeout(() => this.#child.kill("SIGKILL"), 1000);
    await this.#exited;
    clearTimeout(kill);
  }

  #onLine(line: string): void {
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

  /** A deadline of `timeoutMs` for the oldest unanswered request, which breaks the session when it passes. */
  #deadlineOf(timeoutMs: number): Deadline {
    return new Deadline(
      timeoutMs,
      () => this.#pending.length > 0,
      () => {
        const head = this.#pending[0] as Batch;
        this.#breach("timed out", `no reply to ${head.lines[head.replies.length]} within ${timeoutMs} ms`);
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
  }
}
