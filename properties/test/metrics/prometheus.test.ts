/**
 * The Prometheus exporter (docs/spec.md §19.11, §19.12): a real `prom-client` registry, fed through the
 * `MetricsRecorder` on a `VirtualClock`, scraped as Prometheus scrapes it, and the text format parsed back into
 * exact numbers, compared with the model's.
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import * as fc from "fast-check";
import { Registry, register } from "prom-client";
import { assert, describe, expect, test } from "vitest";
import { MetricsModel } from "../../../model/index.js";
import { MetricsRecorder, VirtualClock } from "../../../src/index.js";
import { prometheusMetrics } from "../../../src/prometheus.js";
import { promClientRange, requirePromClient } from "../../../src/prometheus-peer.js";
import { params } from "../settings.js";

/** One scrape, parsed: each sample by `name{label="value",…}` (labels sorted), and each family's HELP and TYPE. */
interface Scrape {
  readonly samples: Map<string, number>;
  readonly help: Map<string, string>;
  readonly type: Map<string, string>;
}

/** Parses the Prometheus text exposition format (version 0.0.4): comments, samples, escaped label values. */
function parse(text: string): Scrape {
  const scrape: Scrape = { samples: new Map(), help: new Map(), type: new Map() };
  for (const line of text.split("\n")) {
    if (line === "") continue;
    const comment = /^# (HELP|TYPE) (\S+) (.*)$/.exec(line);
    if (comment !== null) {
      const [, kind, name, rest] = comment as unknown as [string, string, string, string];
      (kind === "HELP" ? scrape.help : scrape.type).set(name, rest.replace(/\\n/g, "\n").replace(/\\\\/g, "\\"));
      continue;
    }
    const sample = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (sample === null) throw new Error(`not a line of the text format: ${JSON.stringify(line)}`);
    const [, name, labelText = "", value] = sample as unknown as [string, string, string | undefined, string];
    const labels = [...labelText.matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)",?/g)].map(
      ([, key, raw]) => `${key}="${raw}"`,
    );
    const parsed =
      value === "+Inf" ? Number.POSITIVE_INFINITY : value === "-Inf" ? Number.NEGATIVE_INFINITY : Number(value);
    scrape.samples.set(`${name}{${labels.sort().join(",")}}`, parsed);
  }
  return scrape;
}

/** The bucket bounds as Prometheus writes them: `ExponentialBuckets(10e-9, 10, 10)`, by repeated multiplication. */
const bounds = (() => {
  const out: number[] = [];
  for (let i = 0, b = 10e-9; i < 10; i++, b *= 10) out.push(b);
  return out;
})();

/** The samples a histogram of `observations` (in milliseconds) shows for the queue `name`, in seconds. */
function histogram(metric: string, name: string, observations: readonly number[]): [string, number][] {
  const seconds = observations.map((ms) => ms / 1000);
  let sum = 0;
  for (const s of seconds) sum += s;
  return [
    ...bounds.map((le): [string, number] => [
      `${metric}_bucket{le="${le}",name="${name}"}`,
      seconds.filter((s) => s <= le).length,
    ]),
    [`${metric}_bucket{le="+Inf",name="${name}"}`, seconds.length],
    [`${metric}_sum{name="${name}"}`, sum],
    [`${metric}_count{name="${name}"}`, seconds.length],
  ];
}

describe("the Prometheus exporter (§19.11)", () => {
  test("exports client-go's seven metrics with Kubernetes' names, types, help texts and buckets", async () => {
    const registry = new Registry();
    prometheusMetrics({ name: "pods", registry });
    const scrape = parse(await registry.metrics());
    expect(Object.fromEntries(scrape.type)).toEqual({
      workqueue_depth: "gauge",
      workqueue_adds_total: "counter",
      workqueue_queue_duration_seconds: "histogram",
      workqueue_work_duration_seconds: "histogram",
      workqueue_retries_total: "counter",
      workqueue_unfinished_work_seconds: "gauge",
      workqueue_longest_running_processor_seconds: "gauge",
    });
    expect(Object.fromEntries(scrape.help)).toEqual({
      workqueue_depth: "Current depth of workqueue",
      workqueue_adds_total: "Total number of adds handled by workqueue",
      workqueue_queue_duration_seconds: "How long in seconds an item stays in workqueue before being requested.",
      workqueue_work_duration_seconds: "How long in seconds processing an item from workqueue takes.",
      workqueue_retries_total: "Total number of retries handled by workqueue",
      workqueue_unfinished_work_seconds:
        "How many seconds of work has done that is in progress and hasn't been observed by work_duration. Large values indicate stuck threads. One can deduce the number of stuck threads by observing the rate at which this increases.",
      workqueue_longest_running_processor_seconds:
        "How many seconds has the longest running processor for workqueue been running.",
    });
    // Before any event, and before a queue is connected: the counters and histograms at 0, the gauges absent.
    expect(Object.fromEntries(scrape.samples)).toEqual(
      Object.fromEntries([
        ['workqueue_adds_total{name="pods"}', 0],
        ['workqueue_retries_total{name="pods"}', 0],
        ...histogram("workqueue_queue_duration_seconds", "pods", []),
        ...histogram("workqueue_work_duration_seconds", "pods", []),
      ]),
    );
    expect(bounds.map(String)).toEqual([
      "1e-8",
      "1e-7",
      "0.000001",
      "0.000009999999999999999",
      "0.00009999999999999999",
      "0.001",
      "0.01",
      "0.1",
      "1",
      "10",
    ]);
  });

  test("a scrape shows, in seconds, exactly what the model reads at the clock's time, after random transitions", async () => {
    const next = { absent: "queued", queued: "handedOut", "in flight": "finished" } as const;
    const step = fc.oneof(
      fc.constantFrom("added", "retried"),
      { weight: 3, arbitrary: fc.record({ next: fc.constantFrom("a", "b") }) },
      fc.record({
        advance: fc.oneof(fc.integer({ min: 0, max: 20_000 }), fc.double({ min: 0, max: 20, noNaN: true })),
      }),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(step, { maxLength: 40, size: "medium" }), async (steps) => {
        const registry = new Registry();
        const clock = new VirtualClock();
        const recorder = new MetricsRecorder<string>({ sink: prometheusMetrics({ name: "q", registry }), clock });
        const model = new MetricsModel<string>();
        for (const s of steps) {
          if (s === "added" || s === "retried") {
            recorder[s]();
            model[s]();
          } else if ("advance" in s) clock.advance(s.advance);
          else {
            const kind = next[model.stateOf(s.next)];
            recorder[kind](s.next, clock.now());
            model[kind](s.next, clock.now());
          }
        }
        const scrape = parse(await registry.metrics());
        const m = model.read(clock.now());
        expect(Object.fromEntries(scrape.samples)).toEqual(
          Object.fromEntries([
            ['workqueue_depth{name="q"}', m.depth],
            ['workqueue_adds_total{name="q"}', m.adds],
            ['workqueue_retries_total{name="q"}', m.retries],
            ['workqueue_unfinished_work_seconds{name="q"}', m.unfinishedWorkMs / 1000],
            ['workqueue_longest_running_processor_seconds{name="q"}', m.longestRunningMs / 1000],
            ...histogram("workqueue_queue_duration_seconds", "q", model.queueDurations()),
            ...histogram("workqueue_work_duration_seconds", "q", model.workDurations()),
          ]),
        );
      }),
      params(100),
    );
  });

  test("exports several queues to one registry, each under its own name, and reads the gauges at each scrape", async () => {
    const registry = new Registry();
    const clock = new VirtualClock();
    const pods = new MetricsRecorder<string>({ sink: prometheusMetrics({ name: "pods", registry }), clock });
    const nodes = new MetricsRecorder<string>({ sink: prometheusMetrics({ name: "nodes", registry }), clock });
    pods.added();
    pods.queued("a", 0);
    pods.queued("b", 0);
    pods.handedOut("b", 0);
    pods.finished("b", 20);
    pods.handedOut("a", 500);
    nodes.added();
    nodes.added();
    nodes.queued("x", 0);
    clock.advance(2000);
    let samples = parse(await registry.metrics()).samples;
    expect(samples.get('workqueue_queue_duration_seconds_bucket{le="0.1",name="pods"}')).toBe(1); // "b": 0 s
    expect(samples.get('workqueue_queue_duration_seconds_bucket{le="1",name="pods"}')).toBe(2); // "a": 0.5 s
    expect(samples.get('workqueue_queue_duration_seconds_sum{name="pods"}')).toBe(0.5);
    expect(samples.get('workqueue_work_duration_seconds_bucket{le="0.01",name="pods"}')).toBe(0);
    expect(samples.get('workqueue_work_duration_seconds_bucket{le="0.1",name="pods"}')).toBe(1); // "b": 0.02 s
    expect(samples.get('workqueue_work_duration_seconds_sum{name="pods"}')).toBe(0.02);
    expect(samples.get('workqueue_queue_duration_seconds_count{name="nodes"}')).toBe(0);
    expect(samples.get('workqueue_adds_total{name="pods"}')).toBe(1);
    expect(samples.get('workqueue_adds_total{name="nodes"}')).toBe(2);
    expect(samples.get('workqueue_depth{name="pods"}')).toBe(0);
    expect(samples.get('workqueue_depth{name="nodes"}')).toBe(1);
    expect(samples.get('workqueue_longest_running_processor_seconds{name="pods"}')).toBe(1.5);
    expect(samples.get('workqueue_unfinished_work_seconds{name="nodes"}')).toBe(0);
    clock.advance(500); // no timer: the next scrape computes the gauges anew
    samples = parse(await registry.metrics()).samples;
    expect(samples.get('workqueue_unfinished_work_seconds{name="pods"}')).toBe(2);
    expect(samples.get('workqueue_longest_running_processor_seconds{name="pods"}')).toBe(2);
  });

  test("uses prom-client's default registry when none is given", async () => {
    const sink = prometheusMetrics({ name: "default-registry-test" });
    sink.add();
    expect(parse(await register.metrics()).samples.get('workqueue_adds_total{name="default-registry-test"}')).toBe(1);
    register.clear();
  });

  test("forgets the queues of a registry that was cleared, so the names can be used again", async () => {
    const registry = new Registry();
    prometheusMetrics({ name: "pods", registry }).add();
    registry.clear();
    prometheusMetrics({ name: "pods", registry }).retry();
    const samples = parse(await registry.metrics()).samples;
    expect(samples.get('workqueue_adds_total{name="pods"}')).toBe(0);
    expect(samples.get('workqueue_retries_total{name="pods"}')).toBe(1);
  });
});

describe("the Prometheus exporter for queues with leases (§20.17)", () => {
  /** A shared queue's gauge reader answering `gauges`, counting its reads; it rejects while `failing`. */
  const sharedReader = (gauges: {
    depth: number;
    unfinishedWorkMs: number;
    longestRunningMs: number;
    expiredLeases: number;
  }) => {
    const state = { reads: 0, failing: false };
    const read = async () => {
      state.reads++;
      if (state.failing) throw new Error("the database cannot answer");
      return gauges;
    };
    return { state, read };
  };

  test("exports the shared gauges read once per scrape, the expired leases and the stale calls; a queue whose read fails is left out of that scrape's gauges", async () => {
    const registry = new Registry();
    const sink = prometheusMetrics({ name: "jobs", registry });
    sink.staleCall?.(); // before the queue connects: nothing to count on
    const gauges = { depth: 3, unfinishedWorkMs: 1_500, longestRunningMs: 1_000, expiredLeases: 4 };
    const { state, read } = sharedReader(gauges);
    sink.connectShared?.(read);
    let scrape = parse(await registry.metrics());
    expect(state.reads).toBe(1); // one read for the five gauges
    expect(scrape.type.get("workqueue_stale_calls_total")).toBe("counter");
    expect(scrape.type.get("workqueue_expired_leases")).toBe("gauge");
    expect(scrape.help.get("workqueue_stale_calls_total")).toBe(
      "Total number of calls this process made with a lease of workqueue that was refused as stale",
    );
    expect(scrape.help.get("workqueue_expired_leases")).toBe(
      "How many leases of workqueue expired, counted by the database for every process: the same value in each process.",
    );
    expect(scrape.samples.get('workqueue_stale_calls_total{name="jobs"}')).toBe(0);
    expect(scrape.samples.get('workqueue_expired_leases{name="jobs"}')).toBe(4);
    expect(scrape.samples.get('workqueue_depth{name="jobs"}')).toBe(3);
    expect(scrape.samples.get('workqueue_unfinished_work_seconds{name="jobs"}')).toBe(1.5);
    expect(scrape.samples.get('workqueue_longest_running_processor_seconds{name="jobs"}')).toBe(1);
    sink.staleCall?.();
    sink.staleCall?.();
    gauges.depth = 7;
    scrape = parse(await registry.metrics());
    expect(state.reads).toBe(2); // a new scrape reads again
    expect(scrape.samples.get('workqueue_stale_calls_total{name="jobs"}')).toBe(2);
    expect(scrape.samples.get('workqueue_depth{name="jobs"}')).toBe(7);
    state.failing = true;
    scrape = parse(await registry.metrics());
    for (const gauge of ["depth", "unfinished_work_seconds", "longest_running_processor_seconds", "expired_leases"]) {
      expect(scrape.samples.has(`workqueue_${gauge}{name="jobs"}`)).toBe(false);
    }
    expect(scrape.samples.get('workqueue_stale_calls_total{name="jobs"}')).toBe(2);
  });

  test("queues with leases and a reference queue share one registry; only the former have lease metrics", async () => {
    const registry = new Registry();
    for (const name of ["first", "second"]) {
      const expiredLeases = name === "first" ? 1 : 2;
      prometheusMetrics({ name, registry }).connectShared?.(
        sharedReader({ depth: 0, unfinishedWorkMs: 0, longestRunningMs: 0, expiredLeases }).read,
      );
    }
    prometheusMetrics({ name: "later", registry }); // made, not connected yet: no gauges
    const clock = new VirtualClock();
    const recorder = new MetricsRecorder<string>({ clock, sink: prometheusMetrics({ name: "pods", registry }) });
    recorder.added();
    recorder.queued("a", 0);
    const samples = parse(await registry.metrics()).samples;
    expect(samples.get('workqueue_expired_leases{name="first"}')).toBe(1);
    expect(samples.get('workqueue_expired_leases{name="second"}')).toBe(2);
    expect(samples.has('workqueue_expired_leases{name="pods"}')).toBe(false);
    expect(samples.has('workqueue_stale_calls_total{name="pods"}')).toBe(false);
    expect(samples.get('workqueue_depth{name="pods"}')).toBe(1);
    expect(samples.get('workqueue_depth{name="first"}')).toBe(0);
    expect(samples.has('workqueue_expired_leases{name="later"}')).toBe(false);
    expect(samples.has('workqueue_depth{name="later"}')).toBe(false);
  });

  test("a registry of reference queues only shows client-go's seven metrics", async () => {
    const registry = new Registry();
    prometheusMetrics({ name: "reference", registry }).staleCall?.();
    const text = await registry.metrics();
    expect(text).not.toContain("workqueue_stale_calls_total");
    expect(text).not.toContain("workqueue_expired_leases");
  });
});

describe("the Prometheus exporter's errors (§19.12)", () => {
  test("rejects options, a name or a registry that are not what they should be, naming the value", () => {
    expect(() => prometheusMetrics(undefined as never)).toThrow(
      new TypeError('Expected `options` to be an object such as { name: "pods" }, got `undefined` (undefined)'),
    );
    expect(() => prometheusMetrics(null as never)).toThrow(
      new TypeError('Expected `options` to be an object such as { name: "pods" }, got `null` (null)'),
    );
    expect(() => prometheusMetrics({ name: "" })).toThrow(
      new TypeError('Expected `name` to be a non-empty string, got `""` (string)'),
    );
    expect(() => prometheusMetrics({ name: 7 as never })).toThrow(
      new TypeError("Expected `name` to be a non-empty string, got `7` (number)"),
    );
    expect(() => prometheusMetrics({ name: "pods", registry: {} as never })).toThrow(
      new TypeError("Expected `registry` to be a prom-client Registry, got `[object Object]` (object)"),
    );
  });

  test("rejects a second queue with the same name on one registry, and a sink given to two queues", () => {
    const registry = new Registry();
    const sink = prometheusMetrics({ name: "pods", registry });
    expect(() => prometheusMetrics({ name: "pods", registry })).toThrow(
      new Error('A queue named "pods" already exports to this registry: give each queue its own name'),
    );
    prometheusMetrics({ name: "pods", registry: new Registry() }); // another registry is another namespace
    new MetricsRecorder({ sink });
    expect(() => new MetricsRecorder({ sink })).toThrow(
      new Error('The Prometheus sink named "pods" is already connected: make one per queue'),
    );
  });

  test("says in one line how to install prom-client when it is missing, and loads it when it is there", () => {
    /** A `require` that finds only the packages in `present`, and loads each as its own name. */
    const requireOf = (present: string[]) =>
      Object.assign((id: string) => (present.includes(id) ? `loaded ${id}` : assert.fail(`loaded ${id}`)), {
        resolve: (id: string) => {
          if (present.includes(id)) return `/node_modules/${id}/index.js`;
          throw Object.assign(new Error(`Cannot find module '${id}'`), { code: "MODULE_NOT_FOUND" });
        },
      }) as never;
    expect(() => requirePromClient(requireOf([]))).toThrow(
      new Error(
        'workqueue-spec/prometheus needs prom-client (an optional peer dependency of workqueue-spec), which cannot be found: npm install prom-client@"^15.1.3"',
      ),
    );
    expect(requirePromClient(requireOf(["prom-client"]))).toBe("loaded prom-client");
    expect(requirePromClient(createRequire(import.meta.url)).Registry).toBe(Registry);
  });

  test("names the range that package.json declares, and declares prom-client an optional peer", () => {
    const pkg = JSON.parse(readFileSync(new URL("../../../package.json", import.meta.url), "utf8"));
    expect(pkg.peerDependencies["prom-client"]).toBe(promClientRange);
    expect(pkg.peerDependenciesMeta["prom-client"]).toEqual({ optional: true });
    expect(pkg.devDependencies["prom-client"]).toMatch(/^\d+\.\d+\.\d+$/);
    expect(pkg.dependencies?.["prom-client"]).toBeUndefined();
  });
});
