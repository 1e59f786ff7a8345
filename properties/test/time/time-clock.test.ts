/**
 * The clocks (docs/spec.md §18.8, §18.9): the virtual clock runs every timer that falls due, earliest first, each
 * at its own due time, and nothing else moves its time; the real clock reads `performance.now()`.
 */
import * as fc from "fast-check";
import { describe, expect, test, vi } from "vitest";
import { ClockModel } from "../../../model/index.js";
import { realClock, VirtualClock } from "../../../src/index.js";

const seed = process.env.WORKQUEUE_SEED === undefined ? undefined : Number(process.env.WORKQUEUE_SEED);
const params = (count: number) => ({
  numRuns: Math.max(1, Math.round(count * Number(process.env.WORKQUEUE_RUNS_SCALE ?? 1))),
  ...(seed === undefined ? {} : { seed }),
});

describe("the virtual clock", () => {
  test("starts at 0, or where it is told, and moves only when advanced", () => {
    expect(new VirtualClock().now()).toBe(0);
    const clock = new VirtualClock(-5);
    expect(clock.now()).toBe(-5);
    clock.advance(7);
    expect(clock.now()).toBe(2);
    clock.advance(0);
    expect(clock.now()).toBe(2);
  });

  test("rejects a start or an advance that is not a finite number, naming the value, and time does not move", () => {
    expect(() => new VirtualClock(Number.NaN)).toThrow(
      new RangeError("Expected `startMs` to be a finite number, got `NaN` (number)"),
    );
    expect(() => new VirtualClock(Number.POSITIVE_INFINITY)).toThrow(RangeError);
    const clock = new VirtualClock(1);
    for (const bad of [-1, Number.NaN, Number.POSITIVE_INFINITY, "1"]) {
      expect(() => clock.advance(bad as number)).toThrow(RangeError);
    }
    expect(() => clock.advance(-1)).toThrow("Expected `ms` to be a non-negative finite number, got `-1` (number)");
    expect(clock.now()).toBe(1);
  });

  test("runs each timer at its own due time, earliest first, ties in the order they were armed", () => {
    const clock = new VirtualClock();
    const ran: [string, number][] = [];
    const at = (name: string, ms: number) => clock.schedule(ms, () => ran.push([name, clock.now()]));
    at("c", 30);
    at("a", 10);
    at("b1", 20);
    at("b2", 20);
    at("late", 100);
    expect(clock.pending).toBe(5);
    clock.advance(30);
    expect(ran).toEqual([
      ["a", 10],
      ["b1", 20],
      ["b2", 20],
      ["c", 30],
    ]);
    expect(clock.pending).toBe(1);
    expect(clock.now()).toBe(30);
  });

  test("runs a timer armed by a callback when it falls due within the same advance, and never before", () => {
    const clock = new VirtualClock();
    const ran: number[] = [];
    clock.schedule(10, () => {
      clock.schedule(15, () => ran.push(clock.now()));
      clock.schedule(50, () => ran.push(clock.now()));
    });
    clock.advance(20);
    expect(ran).toEqual([15]);
    expect(clock.pending).toBe(1);
    clock.advance(29);
    expect(ran).toEqual([15]);
    clock.advance(1);
    expect(ran).toEqual([15, 50]);
  });

  test("runs a timer armed in the past at the next advance, at the current time: time never goes backwards", () => {
    const clock = new VirtualClock(100);
    const ran: number[] = [];
    clock.schedule(40, () => ran.push(clock.now()));
    expect(ran).toEqual([]);
    clock.advance(0);
    expect(ran).toEqual([100]);
  });

  test("a cancelled timer never runs, and cancelling it again, or after it ran, changes nothing", () => {
    const clock = new VirtualClock();
    const ran: string[] = [];
    const cancelA = clock.schedule(10, () => ran.push("a"));
    const cancelB = clock.schedule(10, () => ran.push("b"));
    cancelA();
    cancelA();
    expect(clock.pending).toBe(1);
    clock.advance(10);
    cancelB();
    expect(ran).toEqual(["b"]);
    expect(clock.pending).toBe(0);
  });

  test("advancing by a then by b runs the same timers at the same times as advancing by a + b", () => {
    const ms = fc.integer({ min: 0, max: 50 });
    fc.assert(
      fc.property(fc.array(ms, { maxLength: 8 }), ms, ms, (dues, a, b) => {
        const run = (steps: number[]) => {
          const clock = new VirtualClock();
          const ran: [number, number][] = [];
          for (const [i, due] of dues.entries()) clock.schedule(due, () => ran.push([i, clock.now()]));
          for (const step of steps) clock.advance(step);
          return { ran, now: clock.now(), pending: clock.pending };
        };
        expect(run([a, b])).toEqual(run([a + b]));
      }),
      params(200),
    );
  });
});

describe("the real clock", () => {
  test("reads performance.now() and runs a timer at its due time, unless cancelled (on vitest's fake timers)", () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "performance"] });
    try {
      vi.advanceTimersByTime(1000);
      expect(realClock.now()).toBe(performance.now());
      const ran: string[] = [];
      const start = realClock.now();
      realClock.schedule(start + 100, () => ran.push("due"));
      realClock.schedule(start + 50, () => ran.push("cancelled"))();
      realClock.schedule(start - 10, () => ran.push("past"));
      vi.advanceTimersByTime(0);
      expect(ran).toEqual(["past"]);
      vi.advanceTimersByTime(99);
      expect(ran).toEqual(["past"]);
      vi.advanceTimersByTime(1);
      expect(ran).toEqual(["past", "due"]);
    } finally {
      vi.useRealTimers();
    }
  });
});

describe("a timer that re-arms itself for a time that has come", () => {
  /** Arms a timer at 5 that re-arms itself for the current time `times` more times. */
  const rearming = (clock: { now(): number; schedule(at: number, run: () => void): () => void }, times: number) => {
    let left = times;
    const run = () => {
      if (left-- > 0) clock.schedule(clock.now(), run);
    };
    clock.schedule(5, run);
  };

  test("on the virtual clock, 10,000 re-arms at one instant run; the next throws, and time stops there", () => {
    const fine = new VirtualClock();
    rearming(fine, 10_000);
    fine.advance(10);
    expect([fine.now(), fine.pending]).toEqual([10, 0]);
    const stuck = new VirtualClock();
    rearming(stuck, 20_000);
    expect(() => stuck.advance(10)).toThrow(
      new Error(
        "Expected the timers armed during advance() to fall due later, but more than 10,000 were armed for 5 ms or earlier at 5 ms: a timer that re-arms itself for a time that has come would keep advance() from ending",
      ),
    );
    expect(stuck.now()).toBe(5);
  });

  test("on the virtual clock, only timers armed during an advance for a time that has come count, at each instant", () => {
    const clock = new VirtualClock();
    for (let i = 0; i < 10_001; i++) clock.schedule(0, () => {}); // before any advance
    clock.schedule(1, () => {
      for (let i = 0; i < 10_001; i++) clock.schedule(2, () => {}); // during one, but for later
    });
    clock.advance(1);
    for (let i = 0; i < 10_001; i++) clock.schedule(1, () => {}); // after it
    expect(clock.pending).toBe(30_003 - 10_001);
    const steps = new VirtualClock();
    let left = 15_000;
    const run = () => {
      if (left-- > 0) steps.schedule(left === 7_000 ? steps.now() + 1 : steps.now(), run);
    };
    steps.schedule(1, run);
    steps.advance(5); // 8,000 at 1 ms, 7,000 at 2 ms: each instant counts on its own
    expect(left).toBe(-1);
    const again = new VirtualClock();
    let rounds = 0;
    const rearm = () => {
      if (rounds++ % 9_000 !== 8_999) again.schedule(again.now(), rearm);
    };
    again.schedule(0, rearm);
    again.advance(0); // 9,000
    again.schedule(0, rearm);
    again.advance(0); // 9,000 more, in another advance: it counts again from 0
    expect(rounds).toBe(18_000);
  });

  test("on the gate's clock model, 100,000 timers run at one instant; the next throws, and time stops there", () => {
    const fine = new ClockModel();
    rearming(fine, 99_999);
    fine.advance(10);
    expect([fine.now(), fine.pending]).toEqual([10, 0]);
    const stuck = new ClockModel();
    rearming(stuck, 100_000);
    expect(() => stuck.advance(10)).toThrow(
      new Error(
        "Expected time to move, but more than 100,000 timers ran at 5 ms in one advance(): a timer that re-arms itself for a time that has come would keep advance() from ending",
      ),
    );
    expect(stuck.now()).toBe(5);
    const steps = new ClockModel();
    let left = 150_000;
    const run = () => {
      if (left-- > 0) steps.schedule(left === 70_000 ? steps.now() + 1 : steps.now(), run);
    };
    steps.schedule(1, run);
    steps.advance(5); // 80,000 at 1 ms, 70,000 at 2 ms
    expect(left).toBe(-1);
  });
});
