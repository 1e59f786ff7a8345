/**
 * Reading the replies of protocol v1 on the gate's side: each is validated against the schema of the kind of reply
 * its request gets and turned into the spec's answer; a malformed one breaks the session.
 */
import { ProtocolBreach } from "../core/breach.js";
import type { Answer } from "../core/operation.js";
import { answerFromReply, type Request, replyTo } from "./codec.js";
import { describeErrors, validators } from "./schema.js";
import type { Session } from "./session.js";

/**
 * Checks that `reply` is a well-formed answer to `request`, and turns it into an answer: an `ok: false` reply is an
 * error answer, which the model never gives to a well-formed request, so the check reports it as a wrong answer.
 *
 * @throws ProtocolBreach when the reply is malformed.
 */
export function answerOf(request: Request, reply: unknown, session: Session): Answer {
  if ((reply as { ok?: unknown } | null)?.ok === false && validators().reply.error(reply)) {
    return answerFromReply(request, reply as object);
  }
  const validate = validators().reply[replyTo[request.op]];
  if (!validate(reply)) {
    const why = describeErrors(validate.errors);
    const message = `the reply to ${JSON.stringify(request)} is malformed: ${why}; got ${JSON.stringify(reply)}`;
    throw new ProtocolBreach("malformed reply", message, session.stderrTail);
  }
  return answerFromReply(request, reply as object);
}

/**
 * Checks the reply to `new`: a queue that cannot be made cannot be checked.
 *
 * @throws ProtocolBreach when the reply is malformed or refuses.
 */
export function opened(request: Request, reply: unknown, session: Session): void {
  if (answerOf(request, reply, session).kind === "error") {
    throw new ProtocolBreach(
      "refused",
      `refused ${JSON.stringify(request)}: ${JSON.stringify(reply)}`,
      session.stderrTail,
    );
  }
}
