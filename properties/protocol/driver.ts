/**
 * The protocol driver: checks an implementation in any language over protocol v1 (docs/protocol.md). It runs the
 * implementation as a child process, shakes hands, and for each run sends `new` and the plan's calls — the whole
 * run in one write when pipelining, or one request at a time in lock step.
 */

import { ProtocolBreach } from "../core/breach.js";
import type { Driver, Observation, Observe } from "../core/driver.js";
import type { Views } from "../core/invariants.js";
import type { Operation } from "../core/operation.js";
import { defaultTimeoutMs } from "../core/options.js";
import { opening, type Request, requestFor, viewRequests } from "./codec.js";
import { concurrentQueues } from "./concurrent.js";
import { answerOf, opened } from "./replies.js";
import { describeErrors, validators } from "./schema.js";
import { Session } from "./session.js";

/**
 * Options of {@link connect}.
 *
 * @inline
 */
export interface ConnectOptions {
  /** How long to wait for each reply before giving up on the implementation, in milliseconds. @defaultValue 5000 */
  readonly timeoutMs?: number;
  /**
   * How long the implementation may take to start and answer the handshake, in milliseconds: a start on a busy
   * machine (a JVM, a cold interpreter) is not a hang. @defaultValue the larger of 30000 and `timeoutMs`
   */
  readonly startupTimeoutMs?: number;
  /** Whether to send a whole run before reading its replies, or one request at a time. @defaultValue `true` */
  readonly pipeline?: boolean;
}

/**
 * A connected implementation: a driver, with the name and features it announced. Always `close` it.
 *
 * @example
 * ```ts
 * import { connect, type ProtocolDriver } from "workqueue-spec/properties";
 *
 * const driver: ProtocolDriver = await connect("python3", ["my_queue.py"]);
 * console.log(driver.name, driver.features); // from its hello reply, as ["len", "shutdown"]
 * await driver.close();
 * ```
 *
 * @public
 */
export interface ProtocolDriver extends Driver {
  /** The name from the `hello` reply. */
  readonly name: string;
  /**
   * The features from the `hello` reply: `len` adds a `len` request after every call; `shutdown` adds `shutdown`
   * calls to the sequences, and a `shuttingDown` request after the first call of a run and after every `shutdown`;
   * `time` adds `addAfter` and `advance` calls, a `backoff` to some `new` requests, and a `waiting` request after
   * every call; `metrics`, with `time`, a `metrics` request after every call (without `time` it is not asked for);
   * `concurrent` adds runs of concurrent rounds, requests with an `id` (see {@link Driver.concurrent}).
   */
  readonly features: readonly string[];
  /** Ends the child process and reaps it. */
  close(): Promise<void>;
}

/** A view that a request reads, with the request. */
interface ViewRequest {
  readonly view: "size" | "shuttingDown" | "waiting" | "metrics";
  readonly request: Request;
}

/**
 * The value of a view from its reply: `len` gives the size, `shuttingDown` the flag, `waiting` the count, `metrics`
 * the reading.
 *
 * @throws ProtocolBreach when the reply is malformed or refuses: the implementation announced the feature.
 */
function viewOf(asked: ViewRequest, reply: unknown, session: Session): Views[ViewRequest["view"]] {
  const answer = answerOf(asked.request, reply, session);
  if (answer.kind === "error") {
    const message = `announced the request ${JSON.stringify(asked.request)} but answered ${JSON.stringify(reply)}`;
    throw new ProtocolBreach("refused", message, session.stderrTail);
  }
  return answer.value as Views[ViewRequest["view"]];
}

/**
 * Starts `command args…` (no shell), says hello, and returns a driver for it. Checks on the way that the
 * implementation answers an unknown request with `{"ok":false,…}`, as protocol v1 requires.
 *
 * @param command - The program to start, found on `PATH` as a shell would, but started without a shell.
 * @param args - Its arguments.
 * @param options - The reply timeout, the start-up timeout, and pipelining.
 * @throws StartError when the command cannot be started.
 * @throws ProtocolBreach when the implementation breaks the protocol during the handshake.
 * @example
 * ```ts
 * import { checkDriver, connect } from "workqueue-spec/properties";
 *
 * const driver = await connect("python3", ["my_queue.py"], { timeoutMs: 2000 });
 * try {
 *   console.log(driver.name, driver.features); // from its hello reply
 *   const report = await checkDriver(driver, { finiteMaxRetries: true });
 * } finally {
 *   await driver.close();
 * }
 * ```
 *
 * @public
 */
export async function connect(
  command: string,
  args: readonly string[],
  options: ConnectOptions = {},
): Promise<ProtocolDriver> {
  const timeoutMs = options.timeoutMs ?? defaultTimeoutMs;
  const session = await Session.spawn(command, args, options.startupTimeoutMs ?? Math.max(30_000, timeoutMs));
  let hello: { name: string; features: string[] };
  try {
    const [helloReply, unknownReply] = await session.send([{ op: "hello" }, { op: "frobnicate" }]);
    if (!validators().reply.hello(helloReply)) {
      const why = `${describeErrors(validators().reply.hello.errors)}; got ${JSON.stringify(helloReply)}`;
      throw new ProtocolBreach("malformed reply", `the hello reply is malformed: ${why}`, session.stderrTail);
    }
    if (!validators().reply.error(unknownReply)) {
      const why = `must be answered with {"ok":false,"error":"…"}, got ${JSON.stringify(unknownReply)}`;
      throw new ProtocolBreach("malformed reply", `the unknown request {"op":"frobnicate"} ${why}`, session.stderrTail);
    }
    hello = helloReply as typeof hello;
    session.started(timeoutMs);
  } catch (error) {
    await session.close();
    throw error;
  }
  return protocolDriver(session, hello.name, hello.features, options.pipeline ?? true);
}

/** The driver over a session that has shaken hands. */
function protocolDriver(
  session: Session,
  name: string,
  features: readonly string[],
  pipeline: boolean,
): ProtocolDriver {
  const withLen = features.includes("len");
  const withShutdown = features.includes("shutdown");
  const withTime = features.includes("time");
  // §19's durations are comparable on the fake clock only, as in process (docs/spec.md §18.8).
  const withMetrics = withTime && features.includes("metrics");
  /**
   * The requests of one step, built once: the call, then the views read after it — the size after every call, the
   * flag after the first call and after every shutdown, the waiting count and the metrics after every call.
   */
  const viewsOf = (flag: boolean): readonly ViewRequest[] => [
    ...(withLen ? [{ view: "size", request: viewRequests.size } as const] : []),
    ...(withShutdown && flag ? [{ view: "shuttingDown", request: viewRequests.shuttingDown } as const] : []),
    ...(withTime ? [{ view: "waiting", request: viewRequests.waiting } as const] : []),
    ...(withMetrics ? [{ view: "metrics", request: viewRequests.metrics } as const] : []),
  ];
  const [plainViews, flagViews] = [viewsOf(false), viewsOf(true)];
  const stepOf = (operation: Operation, index: number): { call: Request; views: readonly ViewRequest[] } => {
    const views = index === 0 || operation.verb === "shutDown" ? flagViews : plainViews;
    return { call: requestFor(operation), views };
  };
  const requestsOf = (step: ReturnType<typeof stepOf>): Request[] => [
    step.call,
    ...step.views.map((asked) => asked.request),
  ];
  /** The observation of one step from its replies, which start at `from`, in the order of its requests. */
  const observation = (step: ReturnType<typeof stepOf>, replies: readonly unknown[], from = 0): Observation => {
    const views: Record<string, Views[ViewRequest["view"]]> = {};
    for (let i = 0; i < step.views.length; i++) {
      const asked = step.views[i] as ViewRequest;
      views[asked.view] = viewOf(asked, replies[from + i + 1], session);
    }
    return { answer: answerOf(step.call, replies[from], session), views: views as Views };
  };
  return {
    name,
    features,
    // Pipelined, the next runs are written while one is verified; in lock step, one run at a time.
    lookahead: pipeline ? 32 : 0,
    // Every view protocol v1 can carry: one that a timed implementation did not announce is listed as checked without.
    offers: ["size", "shuttingDown", "waiting", "metrics"],
    // The `new` request, as written: what a reader of the implementation's code looks for.
    construction: (maxRetries, backoff) => {
      const { op: _, ...fields } = opening(maxRetries, backoff);
      return `new ${JSON.stringify(fields)}`;
    },
    close: () => session.close(),
    ...(features.includes("concurrent") ? { concurrent: concurrentQueues(session, features) } : {}),
    async start(maxRetries, plan, backoff): Promise<Observe> {
      const request = opening(maxRetries, backoff);
      if (!pipeline) {
        opened(request, (await session.send([request]))[0], session);
        return async (operation, index) => {
          const step = stepOf(operation, index);
          return observation(step, await session.send(requestsOf(step)));
        };
      }
      const steps = plan.map(stepOf);
      const replies = await session.send([request, ...steps.flatMap(requestsOf)]);
      opened(request, replies[0], session);
      // Every reply is checked now, so that a malformed one is a breach even after a wrong answer earlier on.
      let next = 1;
      const observations = steps.map((step) => {
        next += 1 + step.views.length;
        return observation(step, replies, next - 1 - step.views.length);
      });
      return (_, index) => observations[index] as Observation;
    },
  };
}
