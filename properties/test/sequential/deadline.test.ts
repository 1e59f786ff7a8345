/**
 * The deadline of a reply or a call (properties/core/deadline.ts) counts only time in which the event loop was
 * free to read an answer: a stall is never charged, a silent wait is, and progress starts the count again.
 */
import { afterEach, expect, test, vi } from "vitest";
import { Deadline, tickMs } from "../../core/deadline.js";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const stall = (ms: number) => {
  const end = performance.now() + ms;
  while (performance.now() < end) {
    // busy
  }
};

let armed: Deadline | undefined;
afterEach(() => armed?.disarm());

/** A deadline of `timeoutMs` that is awaiting while `awaiting.value`, with the number of times it expired. */
function deadline(timeoutMs: number) {
  const state = { awaiting: true, expired: 0 };
  armed = new Deadline(
    timeoutMs,
    () => state.awaiting,
    () => state.expired++,
  );
  return { state, deadline: armed };
}

test("a silent wait expires once the timeout has passed, and not before", async () => {
  const { state, deadline: d } = deadline(400);
  const start = performance.now();
  d.arm();
  await sleep(200);
  expect(state.expired).toBe(0);
  while (state.expired === 0 && performance.now() - start < 10_000) await sleep(20);
  expect(state.expired).toBe(1);
  expect(performance.now() - start).toBeGreaterThanOrEqual(400);
  await sleep(3 * tickMs);
  expect(state.expired).toBe(1); // at most once per arming
});

test("a stall of the event loop longer than the timeout is not charged", async () => {
  const { state, deadline: d } = deadline(300);
  d.arm();
  stall(1000);
  await sleep(150); // the late tick adds nothing; what is counted since is at most 150 ms
  expect(state.expired).toBe(0);
});

test("progress starts the count again from zero", async () => {
  const { state, deadline: d } = deadline(500);
  d.arm();
  await sleep(350);
  d.progress();
  await sleep(350);
  expect(state.expired).toBe(0);
});

test("a disarmed deadline, or one whose caller awaits nothing, never expires", async () => {
  const first = deadline(100);
  first.deadline.arm();
  first.deadline.disarm();
  await sleep(400);
  expect(first.state.expired).toBe(0);
  const second = deadline(100);
  second.deadline.arm();
  second.state.awaiting = false;
  await sleep(400);
  expect(second.state.expired).toBe(0);
});

test("arming again while armed keeps the count; arming after disarm starts it from zero", async () => {
  const { state, deadline: d } = deadline(500);
  d.arm();
  await sleep(300);
  d.arm(); // already armed: the 300 ms stay counted
  while (state.expired === 0) await sleep(20);
  expect(state.expired).toBe(1);
  state.expired = 0;
  d.disarm();
  d.arm();
  await sleep(250);
  expect(state.expired).toBe(0);
});

test("a timeout shorter than a tick is checked in ticks of its own length", () => {
  // On fake timers: the tick, and the turn it yields before it expires, are the deadline's only timers.
  vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "setImmediate", "clearImmediate", "performance"] });
  try {
    const { state, deadline: d } = deadline(10);
    d.arm();
    vi.advanceTimersByTime(9);
    expect(state.expired).toBe(0);
    vi.advanceTimersByTime(2); // the tick at 10 ms, then the turn it yields: not a whole tick of 100 ms
    expect(state.expired).toBe(1);
    expect(d.timeoutMs).toBe(10);
  } finally {
    vi.useRealTimers();
  }
});
