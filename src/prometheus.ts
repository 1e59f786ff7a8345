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
import type { MetricsSink, SharedQueueGauges, WorkQueueMetrics } from "./metrics.js";
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

/** What a queue's gauges read: a reference queue's metrics, or a shared queue's gauges with its expired leases. */
type Gauges = Pick<WorkQueueMetrics, "depth" | "unfinishedWorkMs" | "longestRunningMs"> & {
  readonly expiredLeases?: number;
};

/**
 * Reads a queue's gauges once per scrape: the gauges of one registry are collected at once, so the first asks the
 * queue (a statement, for a shared queue: §20.17) and the others share its answer.
 */
function oncePerScrape(read: () => Gauges | Promise<Gauges>): () => Promise<Gauges> {
  let pending: Promise<Gauges> | undefined;
  return () => {
    if (pending === undefined) {
      pending = (async () => read())().finally(() => {
        pending = undefined;
      });
    }
    return pending;
  };
}

/** The seven metrics registered in one registry, shared by every queue exporting to it, and their queues. */
interface Family {
  readonly adds: Counter<Label>;
  readonly retries: Counter<Label>;
  readonly queueDuration: Histogram<Label>;
  readonly workDuration: Histogram<Label>;
  /**
   * The names of the queues exporting to this registry, each with the function that reads its gauges once its
   * sink is connected. Invariant: a name is here exactly when a sink was made for it in this family.
   */
  readonly readers: Map<string, (() => Promise<Gauges>) | undefined>;
  /**
   * The counter of stale calls refused (§20.17), registered when the first queue with leases connects: a registry
   * of reference queues shows client-go's seven metrics only.
   */
  staleCalls?: Counter<Label>;
}

/** The family of each registry: a registry holds one metric of each name, so every queue shares them by label. */
const families = new WeakMap<Registry, Family>();

/** The family registered in `registry`, registered now if it is not (a `registry.clear()` forgets it). */
function familyOf(client: typeof PromClient, registry: Registry): Family {
  const known = families.get(registry);
  if (known !== undefined && registry.getSingleMetric("workqueue_adds_total") === known.adds) return known;
  const readers = new Map<string, (() => Promise<Gauges>) | undefined>();
  const registers = [registry];
  // client-go's buckets for both durations, as Kubernetes registers them: `ExponentialBuckets(10e-9, 10, 10)`, 10 ns
  // to 10 s, each ten times the one before, by repeated multiplication as Go does, so the bounds are the same numbers.
  const buckets = client.exponentialBuckets(10e-9, 10, 10);
  /**
   * A gauge read from every connected queue when the registry is scraped (§19.1, §19.5, §19.6); a queue whose read
   * fails (its database cannot answer) is left out of that scrape.
   */
  const gauge = (name: string, help: string, value: (metrics: Gauges) => number) =>
    new client.Gauge<Label>({
      name,
      help,
      labelNames: ["name"],
      registers,
      async collect() {
        for (const [queue, read] of readers) {
          if (read === undefined) continue; // not connected yet
          const reading = read(); // a promise, rejected when the queue cannot be read
          try {
            this.set({ name: queue }, value(await reading));
          } catch {
            this.remove({ name: queue });
          }
        }
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
 * The two metrics of queues with leases (§20.17), registered in the family's registry at the first such queue's
 * connection: the counter of stale calls and the gauge of expired leases, read like the other gauges.
 */
function registerLeaseMetrics(client: typeof PromClient, registry: Registry, family: Family): Counter<Label> {
  if (family.staleCalls !== undefined) return family.staleCalls;
  const { readers } = family;
  new client.Gauge<Label>({
    name: "workqueue_expired_leases",
    help: "How many leases of workqueue expired, counted by the database for every process: the same value in each process.",
    labelNames: ["name"],
    registers: [registry],
    async collect() {
      for (const [queue, read] of readers) {
        if (read === undefined) continue; // not connected yet
        const reading = read(); // a promise, rejected when the queue cannot be read
        try {
          const { expiredLeases } = await reading;
          // Stryker disable next-line ConditionalExpression: equivalent: prom-client refuses to set undefined, and the catch leaves the reference queue out all the same
          if (expiredLeases !== undefined) this.set({ name: queue }, expiredLeases);
        } catch {
          this.remove({ name: queue });
        }
      }
    },
  });
  family.staleCalls = new client.Counter({
    name: "workqueue_stale_calls_total",
    help: "Total number of calls this process made with a lease of workqueue that was refused as stale",
    labelNames: ["name"],
    registers: [registry],
  });
  return family.staleCalls;
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
  /** Made by `connectShared`: a queue with leases counts its stale calls there. */
  let staleCalls: ReturnType<Counter<Label>["labels"]> | undefined;
  const connect = (read: () => Gauges | Promise<Gauges>): void => {
    if (family.readers.get(name) !== undefined) {
      throw new Error(`The Prometheus sink named ${JSON.stringify(name)} is already connected: make one per queue`);
    }
    family.readers.set(name, oncePerScrape(read));
  };
  return {
    add: () => adds.inc(),
    retry: () => retries.inc(),
    observeQueueDuration: (ms) => queueDuration.observe(ms / 1000),
    observeWorkDuration: (ms) => workDuration.observe(ms / 1000),
    staleCall: () => staleCalls?.inc(),
    connect,
    connectShared(read: () => Promise<SharedQueueGauges>) {
      connect(read);
      staleCalls = registerLeaseMetrics(client, registry, family).labels(labels);
      staleCalls.inc(0);
    },
  };
}
