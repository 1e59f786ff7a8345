/**
 * fast-check commands: each one is a call of a verb. Run by `fc.modelRun` against the model, a command appends the
 * concrete operation to the plan that is later replayed against the implementation (see `verify`).
 */
import type * as fc from "fast-check";
import type { WorkQueueModel } from "../../model/index.js";
import type { ItemVerb, Operation } from "./operation.js";
import { showCall, showValue } from "./render.js";
import { perform } from "./subject.js";

/**
 * Which calls a sequence may make.
 * - `contract`: the caller keeps the protocol of docs/spec.md §2: `done` and `retry` only for an item it got and
 *   has not finished; `add` and `forget` of any item.
 * - `robust`: any verb on any item at any time, `undefined` and `null` included ([docs/spec.md §1.2](../../docs/spec.md#§1-items), [§11](../../docs/spec.md#§11-misuse-and-how-it-is-answered)).
 *
 * @public
 */
export type Profile = "contract" | "robust";

/** The planned operations of one run, in order. */
export type Plan = Operation[];

/** A command over the model (as fast-check's model) and the plan being recorded (as fast-check's real system). */
export type QueueCommand = fc.Command<WorkQueueModel<unknown>, Plan>;

/** A call of `verb` on a given item, or `get()`; or any given operation. Always applicable. */
export class CallCommand implements QueueCommand {
  readonly #operation: Operation;

  /** A call of `verb` on `item`; `get` and `shutDown` ignore `item`; an operation is taken as it is. */
  constructor(verb: ItemVerb | "get" | "shutDown" | Operation, item?: unknown) {
    if (typeof verb === "object") this.#operation = verb;
    else this.#operation = verb === "get" ? { verb } : verb === "shutDown" ? { verb } : { verb, item };
  }

  /** Always applicable. */
  check(): boolean {
    return true;
  }

  /** Records the call and applies it to the model. */
  run(model: WorkQueueModel<unknown>, plan: Plan): void {
    plan.push(this.#operation);
    perform(model, this.#operation);
  }

  /** The call, as a trace shows it. */
  toString(): string {
    return showCall(this.#operation);
  }
}

/**
 * A `done` or `retry` of an item the caller holds (the contract profile): the `pick`-th item in flight, counted
 * modulo how many there are. Applicable only while something is in flight.
 */
export class HeldCommand implements QueueCommand {
  constructor(
    readonly verb: "done" | "retry",
    readonly pick: number,
  ) {}

  /** Applicable while the model has an item in flight. */
  check(model: Readonly<WorkQueueModel<unknown>>): boolean {
    return model.inFlight > 0;
  }

  /** Resolves the held item, records the call and applies it to the model. */
  run(model: WorkQueueModel<unknown>, plan: Plan): void {
    const held = model.snapshot().inFlight;
    const operation: Operation = { verb: this.verb, item: held[this.pick % held.length] };
    plan.push(operation);
    perform(model, operation);
  }

  /** The call, naming which held item it picks. */
  toString(): string {
    return `${this.verb}(held #${showValue(this.pick)})`;
  }
}
