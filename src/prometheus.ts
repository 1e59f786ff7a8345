/**
 * A Prometheus exporter for the work queue's metrics ([docs/spec.md §19.11](../docs/spec.md#§19-metrics)), through `prom-client`, under client-go's
 * metric names with a `name` label. `prom-client` is an optional peer dependency: install it beside
 * `workqueue-spec` to use this entry (`npm install prom-client`). This module imports only its types;
 * {@link prometheusMetrics} loads it, and without it throws an error that names the install command.
 *
 * @packageDocumentation
 * @module workqueue-spec/prometheus
 */
import { createRequire } from "node:module";
import type * as PromClient from "prom-client";
import type { Counter, Histogram, Registry } from "prom-client";
import type { MetricsSink, WorkQueueMetrics } from "./metrics.js";
import { requirePromClient } from "./prometheus-peer.js";
import { expected } from "./validate.js";

/** Loads the user's `prom-client`; Node.js caches it, so a second call only looks it up. */
const require = createRequire(import.meta.url);

/**
 * Options for {@link prometheusMetrics}.
 *
 * @public
 */
export interface PrometheusMetricsOptions {
  /** The queue's name: the value of the `name` label of its metrics. A non-empty string, one per queue. */
  readonly name: string;
  /**
   * The registry the metrics are registered in and scraped from.
   *
   * @defaultValue `prom-client`'s default registry, `register`.
   */
  readonly registry?: Registry | undefined;
}

/** The label every metric carries: the queue's name. */
type Label = "name";

/** The seven metrics registered in one registry, shared by every queue exporting to it, and their queues. */
interface Family {
  readonly adds: Counter<Label>;
  readonly retries: Counter<Label>;
  readonly queueDuration: Histogram<Label>;
  readonly workDuration: Histogram<Label>;
  /**
   * The names of the queues exporting to this registry, each with the function that reads its metrics once its
   * sink is connected. Invariant: a name is here exactly when a sink was made for it in this family.
   */
  readonly readers: Map<string, (() => WorkQueueMetrics) | undefined>;
}

/** The family of each registry: a registry holds one metric of each name, so every queue shares them by label. */
const families = new WeakMap<Registry, Family>();

/** The family registered in `registry`, registered now if it is not (a `registry.clear()` forgets it). */
function familyOf(client: typeof PromClient, registry: Registry): Family {
  const known = families.get(registry);
  if (known !== undefined && registry.getSingleMetric("workqueue_adds_total") === known.adds) return known;
  const readers = new Map<string, (() => WorkQueueMetrics) | undefined>();
  const registers = [registry];
  // client-go's buckets for both durations, as Kubernetes registers them: `ExponentialBuckets(10e-9, 10, 10)`, 10 ns
  // to 10 s, each ten times the one before, by repeated multiplication as Go does, so the bounds are the same numbers.
  const buckets = client.exponentialBuckets(10e-9, 10, 10);
  /** A gauge read from every connected queue when the registry is scraped (§19.1, §19.5, §19.6). */
  const gauge = (name: string, help: string, value: (metrics: WorkQueueMetrics) => number) =>
    new client.Gauge<Label>({
      name,
      help,
      labelNames: ["name"],
      registers,
      collect() {
        for (const [queue, read] of readers) if (read !== undefined) this.set({ name: queue }, value(read()));
      },
    });
  gauge("workqueue_depth", "Current depth of workqueue", (m) => m.depth);
  const family: Family = {
    adds: new client.Counter({
      name: "workqueue_adds_total",
      help: "Total number of adds handled by workqueue",
      labelNames: ["name"],
      registers,
    }),
    queueDuration: new client.Histogram({
      name: "workqueue_queue_duration_seconds",
      help: "How long in seconds an item stays in workqueue before being requested.",
      labelNames: ["name"],
      buckets,
      registers,
    }),
    workDuration: new client.Histogram({
      name: "workqueue_work_duration_seconds",
      help: "How long in seconds processing an item from workqueue takes.",
      labelNames: ["name"],
      buckets,
      registers,
    }),
    retries: new client.Counter({
      name: "workqueue_retries_total",
      help: "Total number of retries handled by workqueue",
      labelNames: ["name"],
      registers,
    }),
    readers,
  };
  gauge(
    "workqueue_unfinished_work_seconds",
    "How many seconds of work has done that is in progress and hasn't been observed by work_duration. Large values indicate stuck threads. One can deduce the number of stuck threads by observing the rate at which this increases.",
    (m) => m.unfinishedWorkMs / 1000,
  );
  gauge(
    "workqueue_longest_running_processor_seconds",
    "How many seconds has the longest running processor for workqueue been running.",
    (m) => m.longestRunningMs / 1000,
  );
  families.set(registry, family);
  return family;
}

/**
 * A metrics sink that exports one queue's metrics to Prometheus ([docs/spec.md §19.11](../docs/spec.md#§19-metrics)): client-go's seven metrics, named as
 * Kubernetes names them (`workqueue_depth`, `workqueue_adds_total`, `workqueue_queue_duration_seconds`,
 * `workqueue_work_duration_seconds`, `workqueue_unfinished_work_seconds`,
 * `workqueue_longest_running_processor_seconds`, `workqueue_retries_total`), labelled `name`, in seconds.
 *
 * Give it to one queue (or to a `MetricsRecorder`). The counters and histograms count the observations as they
 * come; the gauges are read from the queue at its clock's time whenever the registry is scraped, so no timer runs.
 * Several queues can export to one registry, each under its own name.
 *
 * @param options - The queue's `name`, and the `registry` (see {@link PrometheusMetricsOptions}).
 * @throws TypeError when `options` is not an object, `name` is not a non-empty string, or `registry` is not a
 * `prom-client` `Registry`.
 * @throws Error when `prom-client` cannot be found, naming the command that installs it; when a sink for the same
 * `name` was already made for this registry; and, from `connect`, when the sink is given to a second queue.
 * @public
 * @example
 * ```ts
 * import { Registry } from "prom-client";
 * import { MetricsRecorder } from "workqueue-spec";
 * import { prometheusMetrics } from "workqueue-spec/prometheus";
 *
 * const registry = new Registry();
 * const recorder = new MetricsRecorder<string>({ sink: prometheusMetrics({ name: "pods", registry }) });
 * recorder.added();
 * await registry.metrics(); // … workqueue_adds_total{name="pods"} 1 …
 * ```
 */
export function prometheusMetrics(options: PrometheusMetricsOptions): MetricsSink {
  if (typeof options !== "object" || options === null) {
    throw new TypeError(expected("options", 'an object such as { name: "pods" }', options));
  }
  const client = requirePromClient(require);
  const { name, registry = client.register } = options;
  if (typeof name !== "string" || name === "") throw new TypeError(expected("name", "a non-empty string", name));
  if (!(registry instanceof client.Registry)) {
    throw new TypeError(expected("registry", "a prom-client Registry", registry));
  }
  const family = familyOf(client, registry);
  if (family.readers.has(name)) {
    throw new Error(
      `A queue named ${JSON.stringify(name)} already exports to this registry: give each queue its own name`,
    );
  }
  family.readers.set(name, undefined);
  const labels = { name };
  // Made now, so that a scrape shows every series at 0 before the first event, and each event costs one lookup less.
  const adds = family.adds.labels(labels);
  const retries = family.retries.labels(labels);
  const queueDuration = family.queueDuration.labels(labels);
  const workDuration = family.workDuration.labels(labels);
  adds.inc(0);
  retries.inc(0);
  family.queueDuration.zero(labels);
  family.workDuration.zero(labels);
  return {
    add: () => adds.inc(),
    retry: () => retries.inc(),
    observeQueueDuration: (ms) => queueDuration.observe(ms / 1000),
    observeWorkDuration: (ms) => workDuration.observe(ms / 1000),
    connect(read) {
      if (family.readers.get(name) !== undefined) {
        throw new Error(`The Prometheus sink named ${JSON.stringify(name)} is already connected: make one per queue`);
      }
      family.readers.set(name, read);
    },
  };
}
