/**
 * The metrics (docs/spec.md §19): the reference's `MetricsRecorder` and the naive `MetricsModel`, driven by the same
 * random transitions on a `VirtualClock`, read the same after every step, to the bit; the sink gets every count
 * and observation the model lists; and the worked examples of §19 on both.
 */
import * as fc from "fast-check";
import { describe, expect, test } from "vitest";
import { MetricsModel } from "../../../model/index.js";
import { MetricsRecorder, type MetricsSink, VirtualClock, type WorkQueueMetrics } from "../../../src/index.js";
import { params } from "../settings.js";
import { noMetrics, recordingSink } from "../sinks.js";

type Step =
  | { readonly op: "count"; readonly kind: "added" | "retried" }
  | { readonly op: "read" }
  | { readonly op: "move"; readonly kind: Move; readonly item: string; readonly earlierMs: number }
  | { readonly op: "next"; readonly item: string }
  | { readonly op: "advance"; readonly ms: number };
type Move = "queued" | "handedOut" | "finished";

/** Reports the transition `kind` of `item` at `atMs` to `subject`. */
function move(subject: MetricsRecorder<string> | MetricsModel<string>, kind: Move, item: string, atMs: number) {
  if (kind === "queued") subject.queued(item, atMs);
  else if (kind === "handedOut") subject.handedOut(item, atMs);
  else subject.finished(item, atMs);
}

const item = fc.constantFrom("a", "b", "c");
/** Mostly the clock's time; now and then a little earlier, which both must reject alike. */
const earlierMs = fc.oneof({ weight: 9, arbitrary: fc.constant(0) }, { weight: 1, arbitrary: fc.constant(1) });
const moveStep = fc.record({
  op: fc.constant("move"),
  kind: fc.constantFrom<Move>("queued", "handedOut", "finished"),
  item,
  earlierMs,
});
/** The transition that fits each state: what a queue would report next for the item. */
const next = { absent: "queued", queued: "handedOut", "in flight": "finished" } as const;
const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({ op: fc.constant("count"), kind: fc.constantFrom("added", "retried") }),
  fc.record({ op: fc.constant("read") }),
  moveStep,
  { weight: 4, arbitrary: fc.record({ op: fc.constant("next"), item }) },
  fc.record({
    op: fc.constant("advance"),
    ms: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 40 }), fc.double({ min: 0, max: 40, noNaN: true })),
  }),
) as fc.Arbitrary<Step>;

/** What a call did: its error's class and message, or nothing. */
function outcome(call: () => unknown): string {
  try {
    call();
    return "ok";
  } catch (error) {
    return `${(error as Error).name}: ${(error as Error).message}`;
  }
}

describe("the metrics recorder (§19)", () => {
  test("reads as the model does after every transition, bit for bit, and throws the same errors", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: -1000, max: 1000 }),
        fc.array(step, { maxLength: 80, size: "medium" }),
        (start, steps) => {
          const clock = new VirtualClock(start);
          const { sink, calls } = recordingSink();
          const recorder = new MetricsRecorder<string>({ sink, clock });
          const model = new MetricsModel<string>();
          for (const s of steps) {
            if (s.op === "advance") clock.advance(s.ms);
            else if (s.op === "read") expect(recorder.read(clock.now())).toEqual(model.read(clock.now()));
            else if (s.op === "count") {
              recorder[s.kind]();
              model[s.kind]();
            } else if (s.op === "next") {
              const kind = next[model.stateOf(s.item)];
              move(model, kind, s.item, clock.now());
              move(recorder, kind, s.item, clock.now());
            } else {
              const at = clock.now() - s.earlierMs;
              const expected = outcome(() => move(model, s.kind, s.item, at));
              expect(outcome(() => move(recorder, s.kind, s.item, at))).toBe(expected);
            }
            expect(sink.read?.()).toEqual(model.read(clock.now()));
          }
          // §19.10: one call per count and per observation, in the order of the events.
          expect(calls.filter((c) => c === "add").length).toBe(model.read(clock.now()).adds);
          expect(calls.filter((c) => c === "retry").length).toBe(model.read(clock.now()).retries);
          expect(calls.filter((c) => c.startsWith("queue ")).map((c) => Number(c.slice(6)))).toEqual(
            model.queueDurations(),
          );
          expect(calls.filter((c) => c.startsWith("work ")).map((c) => Number(c.slice(5)))).toEqual(
            model.workDurations(),
          );
        },
      ),
      params(300),
    );
  });

  test("counts an add and a requeue while in flight as the worked example of §19.2–§19.6 says", () => {
    const run = (subject: MetricsRecorder<string> | MetricsModel<string>) => {
      const readings = [];
      subject.added(); // add("a"): queued at 0
      subject.queued("a", 0);
      subject.handedOut("a", 4); // get() → "a": 4 ms queued
      subject.added(); // add("a") at 6: only marks it dirty, queues nothing
      readings.push(subject.read(6));
      subject.retried(); // retry("a") at 7 answers true; "a" is already dirty, so it adds nothing
      subject.finished("a", 10); // done("a"): 6 ms of work, and the dirty mark requeues it at 10
      subject.queued("a", 10);
      subject.added(); // add("b") at 11
      subject.queued("b", 11);
      subject.handedOut("a", 12); // 2 ms queued (§19.3: from the requeue, not from the add at 6)
      subject.handedOut("b", 15);
      readings.push(subject.read(20));
      return readings;
    };
    const expected = [
      {
        depth: 0, // §19.1: "a" is dirty in flight, and nothing is queued
        adds: 2,
        retries: 0,
        queueDuration: { count: 1, sumMs: 4 },
        workDuration: { count: 0, sumMs: 0 },
        unfinishedWorkMs: 2,
        longestRunningMs: 2,
      },
      {
        depth: 0,
        adds: 3,
        retries: 1,
        queueDuration: { count: 3, sumMs: 4 + 2 + 4 },
        workDuration: { count: 1, sumMs: 6 },
        unfinishedWorkMs: 8 + 5,
        longestRunningMs: 8, // "a", handed out at 12
      },
    ];
    expect(run(new MetricsRecorder())).toEqual(expected);
    expect(run(new MetricsModel())).toEqual(expected);
  });

  test("reads nothing at first, and 0 for the gauges once nothing is in flight", () => {
    const empty = noMetrics;
    expect(new MetricsRecorder().read(0)).toEqual(empty);
    const recorder = new MetricsRecorder<number>();
    recorder.queued(1, 0);
    recorder.handedOut(1, 0);
    recorder.finished(1, 3);
    expect(recorder.read(9)).toEqual({
      ...empty,
      queueDuration: { count: 1, sumMs: 0 },
      workDuration: { count: 1, sumMs: 3 },
    });
  });

  test("keeps working without a sink, and with a sink that does not connect", () => {
    const calls: number[] = [];
    const sink: MetricsSink = {
      add() {},
      retry() {},
      observeQueueDuration: (ms) => calls.push(ms),
      observeWorkDuration() {},
    };
    for (const recorder of [new MetricsRecorder<string>(), new MetricsRecorder<string>({ sink })]) {
      recorder.added();
      recorder.retried();
      recorder.queued("a", 1);
      recorder.handedOut("a", 3);
      recorder.finished("a", 4);
      expect(recorder.read(4)).toMatchObject({ adds: 1, retries: 1, workDuration: { count: 1, sumMs: 1 } });
    }
    expect(calls).toEqual([2]);
  });

  test("reads through the sink at the clock's time, the real clock when none is given", () => {
    const { sink } = recordingSink();
    const recorder = new MetricsRecorder<string>({ sink });
    recorder.queued("a", 0);
    recorder.handedOut("a", 0);
    const before = performance.now();
    const reading = sink.read?.() as WorkQueueMetrics;
    expect(reading.longestRunningMs).toBeGreaterThanOrEqual(before);
    expect(reading.longestRunningMs).toBeLessThanOrEqual(performance.now());
  });

  test("rejects a time that is not finite or goes backwards, naming it, and a transition that does not fit", () => {
    for (const subject of [new MetricsRecorder<string>(), new MetricsModel<string>()]) {
      expect(() => subject.queued("a", Number.NaN)).toThrow(
        new RangeError("Expected `nowMs` to be a finite number, got `NaN` (number)"),
      );
      expect(() => subject.read(Number.POSITIVE_INFINITY)).toThrow(RangeError);
      expect(() => subject.read(null as never)).toThrow("got `null` (null)");
      subject.queued("a", 5);
      expect(() => subject.handedOut("a", 4)).toThrow(
        new RangeError(
          "Expected `nowMs` to be a finite number no earlier than 5, the last time given, got `4` (number)",
        ),
      );
      expect(() => subject.queued("a", 6)).toThrow(new Error('Cannot record queued("a"): it is already queued'));
      expect(() => subject.finished("a", 6)).toThrow(new Error('Cannot record finished("a"): it is not in flight'));
      expect(() => subject.handedOut("b", 6)).toThrow(new Error('Cannot record handedOut("b"): it is not queued'));
      subject.handedOut("a", 5); // a rejected call moved no time: 5 is still allowed
      expect(() => subject.queued("a", 7)).toThrow(new Error('Cannot record queued("a"): it is in flight'));
      expect(() => subject.read(4)).toThrow("no earlier than 5");
      expect(subject.read(5)).toMatchObject({ queueDuration: { count: 1, sumMs: 0 }, longestRunningMs: 0 });
    }
  });
});
