/**
 * Protocol v1's `concurrent` feature (docs/protocol.md, "Concurrent rounds"): the queues of an implementation that
 * runs requests concurrently, as queues whose calls answer promises, so that `checkOverlapping` (overlap/) checks
 * them for linearizability against the model as it checks an asynchronous queue in process (docs/spec.md §10.8) —
 * one checker for both. Each call is a request that carries an `id`; the calls made without waiting go out in one
 * write, and each is answered by the reply that carries its `id`, in whatever order the replies come.
 */
import type { Subject, SubjectFactory } from "../core/subject.js";
import { opening, type Request } from "./codec.js";
import { answerOf, opened } from "./replies.js";
import type { Session } from "./session.js";

/**
 * The factory of queues over `session` for `checkOverlapping`: each makes a fresh queue with `new` (without a
 * backoff: overlapping runs never move the clock), and its `add`, `get`, `done`, `retry` and `forget` — and `size`,
 * when the implementation announced `len` — are requests with an `id`. A reply `{"ok":false,…}` rejects with its
 * error, which the model never gives; a malformed reply, or none within the timeout, rejects with the breach that
 * ends the session. The caller's obligation: no other request is unanswered while a queue's calls are.
 */
export function concurrentQueues(session: Session, features: readonly string[]): SubjectFactory<string> {
  let ids = 0;
  const call = async (request: Request): Promise<unknown> => {
    const tagged = { ...request, id: ids++ };
    const answer = answerOf(tagged, await session.call(tagged), session);
    if (answer.kind === "error") throw new Error(answer.message);
    return answer.value;
  };
  return async ({ maxRetries }) => {
    const request = opening(maxRetries, undefined);
    opened(request, (await session.send([request]))[0], session);
    const queue = {
      add: (item: string) => call({ op: "add", item }),
      get: () => call({ op: "get" }),
      done: (item: string) => call({ op: "done", item }),
      retry: (item: string) => call({ op: "retry", item }),
      forget: (item: string) => call({ op: "forget", item }),
      // Without `len`, no size is read (the runs skip the view a queue does not offer).
      size: features.includes("len") ? () => call({ op: "len" }) : undefined,
    };
    return queue as unknown as Subject<string>;
  };
}
