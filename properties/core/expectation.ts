/**
 * Expectations: what the model answered to one call and showed after it, recorded once, while the run is planned
 * on the model, so that verifying a run that conforms does not run the model a second time. Every named check
 * compares the implementation with the model, so a step whose answer and views equal the model's keeps them all;
 * only a step that differs is verified check by check, on a model replayed up to it (see `verify`).
 */
import type { WorkQueueModel } from "../../model/index.js";
import type { Observation } from "./driver.js";
import { type Answer, type Operation, sameAnswer } from "./operation.js";

/** The model's answer to one call and its views right after it. */
export interface Expectation {
  /** What the model answered. */
  readonly answer: Answer;
  /** [docs/spec.md §9.1](../../docs/spec.md#§9-views) */
  readonly size: number;
  /** [§9.2](../../docs/spec.md#§9-views) */
  readonly inFlight: number;
  /** [§9.3](../../docs/spec.md#§9-views): the failure count of the call's item; `undefined` for a call without a valid item. */
  readonly failures: number | undefined;
  /** [§12.2](../../docs/spec.md#§12-shutdown) */
  readonly shuttingDown: boolean;
  /** [§17.6](../../docs/spec.md#§17-delayed-adds) */
  readonly waiting: number;
}

/** What `model` shows right after it answered `answer` to `operation`. */
export function expectationOf(model: WorkQueueModel<unknown>, operation: Operation, answer: Answer): Expectation {
  const item = "item" in operation ? operation.item : undefined;
  return {
    answer,
    size: model.size,
    inFlight: model.inFlight,
    failures: item === undefined || item === null ? undefined : model.failures(item),
    shuttingDown: model.shuttingDown,
    waiting: model.waiting,
  };
}

/**
 * True when `observation` equals `expected` in everything the checks compare: the answer (messages only with
 * `compareMessages`), and each view the implementation shows. Metrics are not recorded, so a step that shows them
 * never meets its expectation and is checked against the model instead.
 */
export function meets(expected: Expectation, observation: Observation, compareMessages: boolean): boolean {
  const { views } = observation;
  return (
    sameAnswer(expected.answer, observation.answer, compareMessages) &&
    views.metrics === undefined &&
    (views.size === undefined || views.size === expected.size) &&
    (views.inFlight === undefined || views.inFlight === expected.inFlight) &&
    (views.failures === undefined || expected.failures === undefined || views.failures === expected.failures) &&
    (views.shuttingDown === undefined || views.shuttingDown === expected.shuttingDown) &&
    (views.waiting === undefined || views.waiting === expected.waiting)
  );
}
