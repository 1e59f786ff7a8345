/**
 * The executable specification of the keyed work queue: a deliberately naive model of docs/spec.md that other
 * implementations are checked against. It never imports the reference implementation.
 *
 * @packageDocumentation
 * @module workqueue-spec/model
 */

export { backoffModel, ClockModel } from "./clock-model.js";
export { type Fenced, LeaseModel, type ModelLease } from "./lease-model.js";
export {
  type Drain,
  type LeaseFault,
  LifecycleModel,
  leaseWorkerCalls,
  type WorkerCall,
  workerCalls,
  workerStops,
} from "./lifecycle-model.js";
export { MetricsModel, type MetricsModelReading } from "./metrics-model.js";
export { type Take, WaitingModel } from "./waiting-model.js";
export {
  type ItemState,
  type ModelOptions,
  type ModelRateLimiter,
  type ModelSnapshot,
  WorkQueueModel,
} from "./work-queue-model.js";
