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

export type { Driver } from "./core/driver.js";
export type { Subject, SubjectOptions } from "./core/subject.js";
export { stringItems } from "./core/universes.js";
export { checkHistory, type HistoryEvent } from "./history/check-history.js";
export {
  checkLifecycle,
  type LifecycleOptions,
  type LifecycleReport,
} from "./lifecycle/check-lifecycle.js";
export type { LifecycleSubject } from "./lifecycle/scenario.js";
export { checkOverlapping, type OverlappingOptions, type OverlappingReport } from "./overlap/check-overlapping.js";
export { connect, type ProtocolDriver } from "./protocol/driver.js";
export { serve } from "./protocol/serve.js";
export { conformanceTests } from "./report/conformance-tests.js";
export { lifecycleTests } from "./report/lifecycle-tests.js";
export { formatReport } from "./report/text.js";
export { historyTimeline, overlapTimeline } from "./report/timeline.js";
export { checkConformance } from "./sequential/check-conformance.js";
export { checkDriver } from "./sequential/conformance.js";
export type { ConformanceOptions } from "./sequential/options.js";
export type { ConformanceReport } from "./sequential/report.js";
