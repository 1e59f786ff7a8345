/**
 * The oracle: check any work queue against the executable model of docs/spec.md with random command sequences,
 * named invariants after every step, and short, replayable counterexamples.
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
} from "./conformance.js";
export { type Band, Coverage, type ReachableOptions, reachable, type Transition } from "./coverage.js";
export { type Invariant, invariants, type StepFacts, type Views } from "./invariants.js";
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
export { formatReport, formatSteps } from "./report.js";
export type { MaybePromise, Subject, SubjectFactory } from "./subject.js";
export type { Step } from "./verify.js";
