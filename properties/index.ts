/**
 * The oracle: check any work queue against the executable model of docs/spec.md with random command sequences,
 * named invariants after every step, and short, replayable counterexamples — in process, or over protocol v1
 * (docs/protocol.md) for an implementation in any language.
 *
 * Needs `fast-check` (and, for the protocol, `ajv`) installed next to `workqueue-spec`: they are optional peer
 * dependencies, so that users of the queue alone install nothing else.
 *
 * @packageDocumentation
 * @module workqueue-spec/properties
 */

export type { Shape } from "./core/arbitraries.js";
export { type BreachKind, ProtocolBreach, StartError } from "./core/breach.js";
export type { Profile } from "./core/commands.js";
export type { Driver, Observation, Observe } from "./core/driver.js";
export { OptionError } from "./core/errors.js";
export type { Invariant, Rule, Views } from "./core/invariants.js";
export type {
  AddAfterOperation,
  AdvanceOperation,
  Answer,
  Backoff,
  ErrorAnswer,
  GetOperation,
  ItemOperation,
  ItemVerb,
  Operation,
  ShutDownOperation,
  ValueAnswer,
} from "./core/operation.js";
export type { ShrinkStop } from "./core/shrink-budget.js";
export type { MaybePromise, Subject, SubjectClock, SubjectFactory, SubjectOptions } from "./core/subject.js";
export { anyItems, type ItemUniverse, stringItems } from "./core/universes.js";
export type { Step } from "./core/verify.js";
export { checkHistory, type HistoryEvent, type HistoryViolation } from "./history/check-history.js";
export {
  checkLifecycle,
  type LifecycleCounterexample,
  type LifecycleOptions,
  type LifecycleReport,
} from "./lifecycle/check-lifecycle.js";
export type { LifecycleRule } from "./lifecycle/rules.js";
export type { LifecycleFactory, LifecycleSubject, LifecycleWaitOptions } from "./lifecycle/scenario.js";
export {
  checkOverlapping,
  type OverlapCounterexample,
  type OverlappingOptions,
  type OverlappingReport,
} from "./overlap/check-overlapping.js";
export type { OverlapCall } from "./overlap/runs.js";
export { type ConnectOptions, connect, type ProtocolDriver } from "./protocol/driver.js";
export { type JsonSchema, type ReplyKind, type RequestOp, replySchemas, requestSchemas } from "./protocol/schema.js";
export { serve } from "./protocol/serve.js";
export { conformanceTests, type TestFunction, type TestsOptions } from "./report/conformance-tests.js";
export { lifecycleTests } from "./report/lifecycle-tests.js";
export { formatLifecycleReport } from "./report/lifecycle-text.js";
export { formatReport } from "./report/text.js";
export { runTrace, type TraceSubject, traceOf } from "./report/traces.js";
export { checkConformance } from "./sequential/check-conformance.js";
export { checkDriver } from "./sequential/conformance.js";
export type { ConformanceOptions } from "./sequential/options.js";
export type { ConformanceReport, Counterexample, UncheckedView } from "./sequential/report.js";
