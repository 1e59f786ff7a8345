/**
 * Delayed adds and backoff on the reference queue and the model, case by case (docs/spec.md §17, §7.3, §3.3):
 * one timer whatever the number of waiting items, the limiter's answers, and what shutdown, takes and drains do
 * while items wait. The random sequences of time-reference.test.ts check the same rules against each other; these
 * pin each one down by name.
 */
import * as fc from "fast-check";
import { describe, expect, test } from "vitest";
import { backoffModel, ClockModel, WaitingModel, WorkQueueModel } from "../../../model/index.js";
import { type RateLimiter, VirtualClock, WorkQueue } from "../../../src/index.js";
import { scenario } from "../../core/arbitraries.js";
import { perform } from "../../core/subject.js";
import { stringItems } from "../../core/universes.js";
import { modelOf } from "../../core/verify.js";
import { planOf } from "../../sequential/plan.js";
import { params } from "../settings.js";
import { flush, track } from "../turns.js";

const timed = (options: { maxRetries?: number; rateLimiter?: RateLimiter<string> } = {}) => {
  const clock = new VirtualClock();
  const queue = new WorkQueue<string>({ maxRetries: options.maxRetries ?? 5, clock, rateLimiter: options.rateLimiter });
  return { clock, queue };
};

describe("the reference queue's timer", () => {
  test("an addAfter due at the same time as the item's wait keeps its place among ties (§17.3: only an earlier one re-ranks)", () => {
    const model = new WorkQueueModel<string>({ maxRetries: 5 });
    const { clock, queue } = timed();
    for (const subject of [queue, model]) {
      subject.addAfter("x", 5);
      subject.addAfter("a", 5);
      subject.addAfter("b", 5);
      subject.addAfter("a", 5); // the same due time: "a" stays ahead of "b"
    }
    clock.advance(5);
    model.advance(5);
    expect([queue.get(), queue.get(), queue.get()]).toEqual(["x", "a", "b"]);
    expect([model.get(), model.get(), model.get()]).toEqual(["x", "a", "b"]);
  });

  test("arms one timer on its clock whatever the number of waiting items, and none once nothing waits", () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.nat(50), fc.integer({ min: 1, max: 30 })), { maxLength: 200 }), (asks) => {
        const { clock, queue } = timed();
        for (const [key, delay] of asks) {
          queue.addAfter(`k${key}`, delay);
          expect(clock.pending).toBe(1);
        }
        expect(queue.waiting).toBe(new Set(asks.map(([key]) => key)).size);
        if (asks.length > 0) queue.add(`k${asks[0]?.[0]}`); // ends one wait
        clock.advance(15);
        expect(clock.pending).toBe(queue.waiting > 0 ? 1 : 0);
        clock.advance(15);
        expect([clock.pending, queue.waiting]).toEqual([0, 0]);
      }),
      params(100),
    );
  });

  test("hands out items that fall due together in the order their due times were set, and after earlier ones", () => {
    const { clock, queue } = timed();
    queue.addAfter("late", 10);
    queue.addAfter("b", 5);
    queue.addAfter("a", 7);
    queue.addAfter("a", 5); // earlier: due at 5 now, ranked after "b"
    queue.addAfter("b", 9); // later: keeps 5
    queue.addAfter("c", 4);
    clock.advance(5);
    expect([queue.get(), queue.get(), queue.get(), queue.get()]).toEqual(["c", "b", "a", undefined]);
    clock.advance(5);
    expect(queue.get()).toBe("late");
  });

  test("a waiting item in flight falls due as a dirty mark, and its done requeues it", () => {
    const { clock, queue } = timed();
    queue.add("a");
    queue.get();
    queue.addAfter("a", 3);
    clock.advance(3);
    expect([queue.size, queue.inFlight, queue.waiting]).toEqual([0, 1, 0]);
    queue.done("a");
    expect(queue.get()).toBe("a");
  });
});

describe("the reference queue on a clock of its own", () => {
  /** A clock whose timers run when the test says, counting how often the queue arms one. */
  const manual = () => {
    let now = 0;
    const armed: { atMs: number; run: () => void; live: boolean }[] = [];
    const clock = {
      now: () => now,
      schedule(atMs: number, run: () => void) {
        const timer = { atMs, run, live: true };
        armed.push(timer);
        return () => {
          timer.live = false;
        };
      },
    };
    const fire = (at: number) => {
      now = at;
      for (const timer of armed.filter((t) => t.live)) {
        timer.live = false;
        timer.run();
      }
    };
    return { clock, armed, fire };
  };

  test("re-arms only when the earliest due time changes", () => {
    const { clock, armed } = manual();
    const queue = new WorkQueue<string>({ maxRetries: 1, clock });
    queue.addAfter("a", 10);
    queue.addAfter("b", 20); // later: the timer stays
    queue.addAfter("a", 30); // not earlier: nothing changes
    expect(armed.map((t) => t.atMs)).toEqual([10]);
    queue.addAfter("c", 5); // earlier: re-armed
    queue.add("b"); // not the earliest: the timer stays
    expect(armed.map((t) => [t.atMs, t.live])).toEqual([
      [10, false],
      [5, true],
    ]);
  });

  test("a timer that runs early adds nothing before its due time, and arms again for it", () => {
    const { clock, armed, fire } = manual();
    const queue = new WorkQueue<string>({ maxRetries: 1, clock });
    queue.addAfter("a", 10);
    fire(9); // a real timer may run a little early
    expect([queue.size, queue.waiting]).toEqual([0, 1]);
    expect(armed.filter((t) => t.live).map((t) => t.atMs)).toEqual([10]);
    fire(12); // or late: everything due by now is added
    expect([queue.size, queue.waiting, armed.filter((t) => t.live).length]).toEqual([1, 0, 0]);
  });
});

describe("backoff on retry", () => {
  test("asks the limiter with the count and the clock's time, only for a requeue, and forgets through it", () => {
    const calls: unknown[][] = [];
    const forgotten: string[] = [];
    const rateLimiter: RateLimiter<string> = {
      when: (...args) => {
        calls.push(args);
        return 4;
      },
      forget: (item) => forgotten.push(item),
    };
    const { clock, queue } = timed({ maxRetries: 2, rateLimiter });
    clock.advance(7);
    expect(queue.retry("a")).toBe(true);
    expect([queue.waiting, queue.size]).toEqual([1, 0]);
    expect(queue.retry("a")).toBe(false); // gives up: the limiter is not asked
    queue.shutDown();
    expect(queue.retry("b")).toBe(false); // shutting down: not asked either
    expect(calls).toEqual([["a", 1, 7]]);
    queue.forget("a");
    expect([forgotten, queue.failures("a")]).toEqual([["a"], 0]);
    clock.advance(4);
    expect(queue.get()).toBe("a");
  });

  test("a limiter's answer that is not a finite number throws a RangeError naming it, and nothing changes", () => {
    for (const answer of [Number.NaN, Number.POSITIVE_INFINITY, "5"]) {
      const { queue } = timed({ rateLimiter: { when: () => answer as number } });
      const model = new WorkQueueModel<string>({ maxRetries: 5, rateLimiter: { when: () => answer as number } });
      for (const subject of [queue, model]) {
        expect(() => subject.retry("a")).toThrow(
          new RangeError(
            `Expected \`rateLimiter.when(item, failures, nowMs)\` to be a finite number, got \`${typeof answer === "string" ? `"${answer}"` : answer}\` (${typeof answer})`,
          ),
        );
        expect([subject.failures("a"), subject.waiting, subject.size]).toEqual([0, 0, 0]);
      }
    }
  });

  test("a limiter that answers 0 or less requeues at once, as an add, ending a wait", () => {
    const { clock, queue } = timed({ rateLimiter: { when: (_, failures) => 2 - failures } });
    queue.addAfter("a", 10);
    expect(queue.retry("a")).toBe(true); // 1 ms: keeps the wait, now due at 1
    expect([queue.waiting, queue.size]).toEqual([1, 0]);
    expect(queue.retry("a")).toBe(true); // 0 ms: an add, which ends the wait
    expect([queue.waiting, queue.size, clock.pending]).toEqual([0, 1, 0]);
  });
});

describe("bad options and delays", () => {
  test("a clock or a rate limiter of the wrong shape throws a TypeError naming it, in the queue and the model", () => {
    const clock = new VirtualClock();
    expect(() => new WorkQueue({ maxRetries: 1, clock: {} as VirtualClock })).toThrow(
      new TypeError("Expected `clock` to be undefined or a Clock such as realClock, got `[object Object]` (object)"),
    );
    expect(() => new WorkQueue({ maxRetries: 1, clock: { now: () => 0 } as unknown as VirtualClock })).toThrow(
      TypeError,
    );
    expect(() => new WorkQueue({ maxRetries: 1, clock: null as unknown as VirtualClock })).toThrow(TypeError);
    for (const rateLimiter of [5, null, {}, { when: 1 }, { when: () => 0, forget: 1 }]) {
      expect(() => new WorkQueue({ maxRetries: 1, clock, rateLimiter: rateLimiter as RateLimiter })).toThrow(
        /^Expected `rateLimiter` to be undefined or a RateLimiter such as exponentialBackoff\(5, 1000\), got /,
      );
      expect(() => new WorkQueueModel({ maxRetries: 1, rateLimiter: rateLimiter as RateLimiter })).toThrow(
        /^Expected `rateLimiter` to be undefined or an object with a `when` method, got /,
      );
    }
    expect(
      new WorkQueue({ maxRetries: 1, rateLimiter: { when: () => 0, forget: undefined } as unknown as RateLimiter })
        .waiting,
    ).toBe(0);
    expect(
      new WorkQueueModel({ maxRetries: 1, rateLimiter: { when: () => 0, forget: undefined } as unknown as RateLimiter })
        .waiting,
    ).toBe(0);
  });

  test("addAfter checks the item, then the delay, before anything changes, shutting down or not", () => {
    const { queue } = timed();
    const model = new WorkQueueModel<string>({ maxRetries: 1 });
    for (const subject of [queue, model]) {
      expect(() => subject.addAfter(undefined as unknown as string, Number.NaN)).toThrow(
        "Expected `item` to be a value other than undefined or null, got `undefined` (undefined)",
      );
      expect(() => subject.addAfter("a", "5" as unknown as number)).toThrow(
        new TypeError('Expected `delayMs` to be a number, got `"5"` (string)'),
      );
      for (const delay of [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY]) {
        expect(() => subject.addAfter("a", delay)).toThrow(
          new RangeError(`Expected \`delayMs\` to be a finite number, got \`${delay}\` (number)`),
        );
      }
      subject.shutDown();
      expect(() => subject.addAfter("a", Number.NaN)).toThrow(RangeError);
      expect([subject.waiting, subject.size]).toEqual([0, 0]);
    }
  });
});

describe("shutdown with items waiting (§17.7)", () => {
  test("a take waits for an item that waits, and gets it when it falls due; a second take keeps waiting for the next", async () => {
    const { clock, queue } = timed();
    queue.addAfter("a", 5);
    queue.addAfter("b", 8);
    queue.shutDown();
    const first = track(queue.take());
    const second = track(queue.take());
    queue.addAfter("c", 1); // while shutting down: changes nothing
    await flush();
    expect([first.state, second.state, queue.waiting]).toEqual(["pending", "pending", 2]);
    clock.advance(5);
    await flush();
    expect([first.state, first.value, second.state]).toEqual(["resolved", "a", "pending"]);
    clock.advance(3);
    await flush();
    expect([second.state, second.value]).toEqual(["resolved", "b"]);
    const last = track(queue.take());
    await flush();
    expect([last.state, last.value]).toEqual(["resolved", undefined]);
  });

  test("before a shutdown, an item falling due goes to the oldest take, and the others keep waiting", async () => {
    const { clock, queue } = timed();
    const first = track(queue.take());
    const second = track(queue.take());
    queue.addAfter("a", 2);
    clock.advance(2);
    await flush();
    expect([first.state, first.value, second.state]).toEqual(["resolved", "a", "pending"]);
    queue.shutDown();
    await flush();
    expect([second.state, second.value]).toEqual(["resolved", undefined]);
  });

  test("takes resolve with nothing once the last waiting item falls due as a dirty mark", async () => {
    const { clock, queue } = timed();
    queue.add("a");
    queue.get();
    queue.addAfter("a", 5);
    queue.addAfter("b", 2);
    queue.shutDown();
    const first = track(queue.take());
    const second = track(queue.take());
    clock.advance(2);
    await flush();
    expect([first.state, first.value, second.state]).toEqual(["resolved", "b", "pending"]);
    clock.advance(3);
    await flush();
    expect([second.state, second.value]).toEqual(["resolved", undefined]);
    queue.done("a"); // the dirty mark requeues it
    expect(queue.get()).toBe("a");
  });

  test("a drain waits for waiting items, also past the done of the last item in flight, and resolves in the done after they fell due", async () => {
    const { clock, queue } = timed();
    queue.add("b");
    queue.get();
    queue.addAfter("a", 5);
    const drain = track(queue.shutDownWithDrain());
    queue.done("b"); // nothing queued or in flight, but "a" waits
    await flush();
    expect(drain.state).toBe("pending");
    clock.advance(5);
    await flush();
    expect(drain.state).toBe("pending");
    expect(queue.get()).toBe("a");
    queue.done("a");
    await flush();
    expect(drain.state).toBe("resolved");
  });

  test("a drain asked for while nothing is queued or in flight waits for the waiting items", async () => {
    const { clock, queue } = timed();
    queue.addAfter("a", 1);
    const drain = track(queue.shutDownWithDrain());
    await flush();
    expect(drain.state).toBe("pending");
    clock.advance(1);
    queue.done(queue.get() as string);
    await flush();
    expect(drain.state).toBe("resolved");
  });
});

describe("the model's time, case by case", () => {
  test("advance checks its argument, naming it, and time does not move", () => {
    const model = new WorkQueueModel<string>({ maxRetries: 1 });
    for (const bad of [-1, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => model.advance(bad)).toThrow(
        new RangeError(`Expected \`ms\` to be a non-negative finite number, got \`${bad}\` (number)`),
      );
    }
    expect(model.now).toBe(0);
    const clock = new ClockModel();
    expect(() => clock.advance(-1)).toThrow(
      new RangeError("Expected `ms` to be a non-negative finite number, got `-1`"),
    );
  });

  test("dueOf and the snapshot show each waiting item's due time, in the order the due times were set", () => {
    const model = new WorkQueueModel<string>({ maxRetries: 1 });
    model.advance(10);
    model.addAfter("a", 5);
    model.addAfter("b", 3);
    model.addAfter("a", 1); // earlier: set again, now last
    model.addAfter("b", 9); // later: kept
    expect([model.dueOf("a"), model.dueOf("b"), model.dueOf("c")]).toEqual([11, 13, undefined]);
    expect(model.snapshot().waiting).toEqual([
      ["b", 13],
      ["a", 11],
    ]);
  });

  test("forget calls the limiter's forget, and a limiter must be an object with a when method", () => {
    const forgotten: string[] = [];
    const model = new WorkQueueModel<string>({
      maxRetries: 3,
      rateLimiter: { when: () => 1, forget: (item) => forgotten.push(item) },
    });
    model.forget("a");
    expect(forgotten).toEqual(["a"]);
    const when = Object.assign(() => 0, { when: () => 0 });
    expect(() => new WorkQueueModel({ maxRetries: 1, rateLimiter: when })).toThrow(TypeError);
    const clock = Object.assign(() => 0, { now: () => 0, schedule: () => () => {} });
    expect(() => new WorkQueue({ maxRetries: 1, clock })).toThrow(TypeError);
    expect(() => new WorkQueue({ maxRetries: 1, rateLimiter: when })).toThrow(TypeError);
  });

  test("the waiting model moves time in steps: what is due by the end falls due, the rest waits, from any start", () => {
    const model = new WaitingModel<string>({ maxRetries: 1 });
    model.advance(10);
    model.addAfter("a", 2);
    model.addAfter("b", 5);
    const take = model.take();
    model.advance(3);
    expect([take.state, take.item, model.queue.now, model.queue.waiting]).toEqual(["resolved", "a", 13, 1]);
    const next = model.take();
    model.advance(1);
    expect([next.state, model.queue.now]).toEqual(["waiting", 14]);
    model.advance(1);
    expect([next.state, next.item]).toEqual(["resolved", "b"]);
  });

  test("the waiting model: a take keeps waiting when what falls due is in flight, and due times are taken in order", () => {
    const model = new WaitingModel<string>({ maxRetries: 1 });
    model.add("x");
    model.take(); // "x" is in flight
    model.addAfter("x", 4);
    model.addAfter("y", 9);
    model.addAfter("z", 2);
    const take = model.take();
    model.advance(2); // "z" at 2 goes to the take
    expect([take.state, take.item]).toEqual(["resolved", "z"]);
    const next = model.take();
    model.advance(2); // "x" at 4 falls due as a dirty mark: nothing for the take
    expect([next.state, model.queue.stateOf("x")]).toEqual(["waiting", "in flight + dirty"]);
    model.advance(5);
    expect([next.state, next.item]).toEqual(["resolved", "y"]);
    const two = new WaitingModel<string>({ maxRetries: 1 });
    two.addAfter("p", 3);
    two.addAfter("q", 1);
    const [first, second] = [two.take(), two.take()];
    two.advance(5); // two due times in one advance, taken earliest first
    expect([first.item, second.item, two.queue.now]).toEqual(["q", "p", 5]);
  });

  test("the clock model runs timers armed for the same time in the order they were armed, each once", () => {
    const clock = new ClockModel();
    const ran: string[] = [];
    const once = (name: string) => {
      let runs = 0;
      return () => {
        if (++runs > 1) throw new Error(`${name} ran twice`);
        ran.push(name);
      };
    };
    clock.schedule(2, once("first"));
    clock.schedule(2, once("second"));
    clock.schedule(1, once("earliest"));
    clock.advance(3);
    expect(ran).toEqual(["earliest", "first", "second"]);
  });
});

describe("the model's time", () => {
  const reached = scenario({ profile: "robust", shape: "few", items: stringItems, shutDown: true, time: "any" });

  test("advancing by a and then b leaves the same state as advancing by a + b", () => {
    fc.assert(
      fc.property(reached, fc.nat(20), fc.nat(20), (input, a, b) => {
        const { plan } = planOf(input);
        const replay = () => {
          const model = modelOf(input.maxRetries, input.backoff);
          for (const operation of plan) perform(model, operation);
          return model;
        };
        const stepwise = replay();
        stepwise.advance(a);
        stepwise.advance(b);
        const once = replay();
        once.advance(a + b);
        expect(stepwise.snapshot()).toEqual(once.snapshot());
      }),
      params(300),
    );
  });

  test("an item is never queued before its due time, and is queued at it", () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.constantFrom("a", "b", "c"), fc.integer({ min: 1, max: 9 })), { minLength: 1 }),
        (asks) => {
          const model = new WorkQueueModel<string>({ maxRetries: 1 });
          for (const [item, delay] of asks) model.addAfter(item, delay);
          const dues = new Map(model.snapshot().waiting);
          for (let t = 1; t <= 10; t++) {
            model.advance(1);
            for (const [item, due] of dues) expect(model.stateOf(item)).toBe(due <= t ? "queued" : "absent");
          }
        },
      ),
      params(200),
    );
  });

  test("the waiting model's takes wait for waiting items after a shutdown, and end when none is left", () => {
    const model = new WaitingModel<string>({ maxRetries: 1 });
    model.addAfter("a", 2);
    model.shutDown();
    const take = model.take();
    expect(take.state).toBe("waiting");
    expect(model.drained).toBe(false);
    model.advance(2);
    expect([take.state, take.item]).toEqual(["resolved", "a"]);
    const after = model.take();
    expect([after.state, after.item]).toEqual(["resolved", undefined]);
    model.queue.done("a");
    expect(model.drained).toBe(true);
    const dirty = new WaitingModel<string>({ maxRetries: 1 });
    dirty.add("x");
    dirty.take();
    dirty.addAfter("x", 3);
    dirty.shutDown();
    const stuck = dirty.take();
    dirty.advance(3);
    expect([stuck.state, stuck.item]).toEqual(["resolved", undefined]);
    expect(() => dirty.advance(Number.NaN)).toThrow(RangeError);
  });

  test("the clock model runs timers at their times, ties in the order armed, and refuses a bad advance", () => {
    const clock = new ClockModel();
    const ran: [string, number][] = [];
    clock.schedule(5, () => ran.push(["b", clock.now()]));
    const cancel = clock.schedule(3, () => ran.push(["x", clock.now()]));
    clock.schedule(3, () => {
      ran.push(["a", clock.now()]);
      clock.schedule(4, () => ran.push(["c", clock.now()]));
    });
    clock.schedule(1, () => ran.push(["first", clock.now()]));
    cancel();
    expect(clock.pending).toBe(3);
    clock.advance(4);
    expect(ran).toEqual([
      ["first", 1],
      ["a", 3],
      ["c", 4],
    ]);
    expect([clock.now(), clock.pending]).toEqual([4, 1]);
    clock.schedule(2, () => ran.push(["past", clock.now()]));
    clock.advance(1);
    expect(ran.slice(3)).toEqual([
      ["past", 4],
      ["b", 5],
    ]);
    for (const bad of [-1, Number.NaN, Number.POSITIVE_INFINITY]) expect(() => clock.advance(bad)).toThrow(RangeError);
    expect(clock.now()).toBe(5);
  });

  test("the backoff model doubles from the base up to the cap, and a base of 0 answers 0", () => {
    const limiter = backoffModel(5, 100);
    expect([1, 2, 3, 5, 6, 1000].map((n) => limiter.when("a", n, 0))).toEqual([5, 10, 20, 80, 100, 100]);
    expect(backoffModel(0, 100).when("a", 2000, 0)).toBe(0);
    expect(backoffModel(50, 10).when("a", 1, 0)).toBe(10);
    expect(backoffModel(5e-324, 8.881784197001254e-16).when("a", 1025, 0)).toBe(2 ** -50);
    expect(backoffModel(5e-324, Number.MAX_VALUE).when("a", 2048, 0)).toBe(2 ** 973);
    expect(backoffModel(5e-324, 1).when("a", 1e15, 0)).toBe(1);
  });
});
