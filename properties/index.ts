/**
 * The oracle: check any work queue against the executable model of docs/spec.md with random command sequences,
 * named invariants after every step, and short, replayable counterexamples — in process, or over protocol v1
 * (docs/protocol.md) for an implementation in any language.
 *
 * @packageDocumentation
 */
export { type ItemUniverse, referenceItems, type Shape, stringItems } from "./arbitraries.js";
export type { Profile } from "./commands.js";
export {
  type ConformanceOptions,
  type ConformanceReport,
  type Counterexample,
  checkConformance,
  checkDriver,
} from "./conformance.js";
export { type Band, Coverage, type ReachableOptions, reachable, type Transition } from "./coverage.js";
export { type Driver, inProcess, type Observation, type Observe } from "./driver.js";
export { type Invariant, invariants, type StepFacts, type Views } from "./invariants.js";
export { loadFactory } from "./load.js";
export type {
  Answer,
  ErrorAnswer,
  GetOperation,
  ItemOperation,
  ItemVerb,
  Operation,
  ShutDownOperation,
  ValueAnswer,
} from "./operation.js";
export { type ConnectOptions, connect, type ProtocolDriver } from "./protocol/driver.js";
export {
  type JsonSchema,
  type ReplyKind,
  type RequestOp,
  replySchemas,
  replyTo,
  requestSchemas,
} from "./protocol/schema.js";
export { serve } from "./protocol/serve.js";
export { type BreachKind, ProtocolBreach, StartError } from "./protocol/session.js";
export { formatReport, formatSteps } from "./report.js";
export { type GateOutcome, toJson, toJunit } from "./report-formats.js";
export type { MaybePromise, Subject, SubjectFactory } from "./subject.js";
export { runTrace, type TraceSubject, traceOf } from "./traces.js";
export type { Step } from "./verify.js";
export { conformanceTests, type TestFunction } from "./vitest.js";
