/**
 * fast-check commands: each one is a call of a verb. Run by `fc.modelRun` against the model, a command appends the
 * concrete operation to the plan that is later replayed against the implementation (see `verify`).
 */
import type * as fc from "fast-check";
import type { WorkQueueModel } from "../../model/index.js";
import { type Expectation, expectationOf } from "./expectation.js";
import type { Answer, ItemVerb, Operation } from "./operation.js";
import { showCall, showValue } from "./render.js";
import { perform } from "./subject.js";

/**
 * Which calls a sequence may make.
 * - `contract`: the caller keeps the protocol of docs/spec.md §2: `done` and `retry` only for an item it got and
 *   has not finished; `add` and `forget` of any item.
 * - `robust`: any verb on any item at any time, `undefined` and `null` included ([docs/spec.md §1.2](../../docs/spec.md#§1-items), [§11](../../docs/spec.md#§11-misuse-and-how-it-is-answered)).
 *
 * @inline
 */
export type Profile = "contract" | "robust";

/** The profile a check of command sequences runs when it is not told: any call on any item (docs/spec.md §11). */
export const defaultProfile: Profile = "robust";

/** The planned operations of one run, in order. */
export type Plan = Operation[];

/** A plan as it is recorded on the model: the operations, and what the model answered and showed after each. */
export interface Planning {
  /** The operations, in order. */
  readonly plan: Plan;
  /** The model's answer and views after each operation, by index. */
  readonly expected: Expectation[];
}

/** Records `operation` in `planning`, applies it to the model and records what the model answered and showed. */
export function record(model: WorkQueueModel<unknown>, planning: Planning, operation: Operation): Answer {
  planning.plan.push(operation);
  const answer = perform(model, operation) as Answer; // the model answers at once
  planning.expected.push(expectationOf(model, operation, answer));
  return answer;
}

/** A command over the model (as fast-check's model) and the plan being recorded (as fast-check's real system). */
export type QueueCommand = fc.Command<WorkQueueModel<unknown>, Planning>;

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
  run(model: WorkQueueModel<unknown>, planning: Planning): void {
    record(model, planning, this.#operation);
  }

  /** The call, as a trace shows it. */
  toString(): string {
    return showCall(this.#operation);
  }
}

/**
 * A `done`, `retry` or `forget` of an item the caller holds (the contract profile): the `pick`-th item in flight,
 * counted modulo how many there are. Applicable only while something is in flight.
 */
export class HeldCommand implements QueueCommand {
  constructor(
    readonly verb: "done" | "retry" | "forget",
    readonly pick: number,
  ) {}

  /** Applicable while the model has an item in flight. */
  check(model: Readonly<WorkQueueModel<unknown>>): boolean {
    return model.inFlight > 0;
  }

  /** Resolves the held item, records the call and applies it to the model. */
  run(model: WorkQueueModel<unknown>, planning: Planning): void {
    const held = model.snapshot().inFlight;
    record(model, planning, {
      verb: this.verb,
      item: held[this.pick % held.length],
    });
  }

  /** The call, naming which held item it picks. */
  toString(): string {
    return `${this.verb}(held #${showValue(this.pick)})`;
  }
}

/** The distinct due times of the model's waiting items, earliest first ([docs/spec.md §17](../../docs/spec.md#§17-delayed-adds)). */
function dueTimes(model: Readonly<WorkQueueModel<unknown>>): number[] {
  return [...new Set(model.snapshot().waiting.map(([, due]) => due))].sort((a, b) => a - b);
}

/**
 * Where an {@link AdvanceToDueCommand} moves the clock, relative to the due time it picks: exactly `on` it, halfway
 * `before` it (between the last due time passed, or now, and it), or halfway `past` it towards the next one.
 */
export type Landing = "on" | "before" | "past";

/**
 * The time at which the clock lands relative to `due`, one of the model's due times: `due` itself, halfway between
 * the due time before it (or now) and it, or halfway between it and the next (or one millisecond past it). Halves of
 * dyadic times are dyadic, so the step is exact.
 */
export function landingTime(model: Readonly<WorkQueueModel<unknown>>, due: number, landing: Landing): number {
  if (landing === "on") return due;
  const dues = dueTimes(model);
  if (landing === "before") return ((dues.filter((at) => at < due).pop() ?? model.now) + due) / 2;
  return (due + (dues.find((at) => at > due) ?? due + 1)) / 2;
}

/**
 * An `advance` that lands on, just before or just past the `pick`-th due time of the waiting items, counted modulo
 * how many there are ([docs/spec.md §17.5](../../docs/spec.md#§17-delayed-adds)): random steps rarely land exactly on a due time, or between two
 * successive backoffs of one item, which is where a queue that falls due late, early or in the wrong order shows it.
 * Halves of dyadic times are dyadic, so the step is exact. Applicable only while an item waits.
 */
export class AdvanceToDueCommand implements QueueCommand {
  constructor(
    readonly pick: number,
    readonly landing: Landing,
  ) {}

  /** Applicable while the model has an item waiting. */
  check(model: Readonly<WorkQueueModel<unknown>>): boolean {
    return model.waiting > 0;
  }

  /** Resolves the step from the model's due times, records the `advance` and applies it to the model. */
  run(model: WorkQueueModel<unknown>, planning: Planning): void {
    const dues = dueTimes(model);
    const at = landingTime(model, dues[this.pick % dues.length] as number, this.landing);
    record(model, planning, { verb: "advance", ms: at - model.now });
  }

  /** The step, naming the due time it picks. */
  toString(): string {
    return `advance(${this.landing} due #${showValue(this.pick)})`;
  }
}

/**
 * An `addAfter` of `item` whose delay makes it due exactly when the `pick`-th due time of the waiting items comes,
 * counted modulo how many there are: a tie ([docs/spec.md §17.5](../../docs/spec.md#§17-delayed-adds): items due at the same time are added in the
 * order their due times were set), or, for the item itself, the same due time asked for again (§17.3). Applicable
 * only while an item waits.
 */
export class TieCommand implements QueueCommand {
  constructor(
    readonly item: unknown,
    readonly pick: number,
  ) {}

  /** Applicable while the model has an item waiting. */
  check(model: Readonly<WorkQueueModel<unknown>>): boolean {
    return model.waiting > 0;
  }

  /** Resolves the delay from the model's due times, records the `addAfter` and applies it to the model. */
  run(model: WorkQueueModel<unknown>, planning: Planning): void {
    const dues = dueTimes(model);
    const due = dues[this.pick % dues.length] as number;
    record(model, planning, {
      verb: "addAfter",
      item: this.item,
      delayMs: due - model.now,
    });
  }

  /** The call, naming the due time it ties with. */
  toString(): string {
    return `addAfter(${showValue(this.item)}, tie with due #${showValue(this.pick)})`;
  }
}
