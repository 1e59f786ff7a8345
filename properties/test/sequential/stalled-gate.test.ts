/**
 * Timeouts blame only a silent implementation (issue 27): a stall of the gate's own event loop longer than the
 * timeout, while the implementation answers at once, never ends in a `timed out` breach (exit 3) — in process,
 * and over the protocol pipelined and in lock step. A silent implementation still times out, and not before.
 */
import { join } from "node:path";
import { afterEach, describe, expect, test } from "vitest";
import { main } from "../../cli/gate.js";
import { checkConformance } from "../../sequential/check-conformance.js";
import { verbsOf } from "../subjects.js";

const root = new URL("../../../", import.meta.url).pathname;
const reference = [
  "node",
  join(root, "dist/properties/protocol/serve-module.js"),
  join(root, "properties/test/fixtures/reference.mjs"),
];

/** Keeps the event loop busy for `ms` milliseconds: what a gate does while it plans or checks a long run. */
function stall(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end) {
    // busy: no timer, no I/O, no promise runs meanwhile
  }
}

/**
 * Stalls the event loop `times` times for `ms` each, `gapMs` apart; `stop` ends it. Each stall runs after the poll
 * for I/O (in an immediate), as the gate's own checking does: the next turn of the loop runs the timers that fell
 * due meanwhile before it reads the replies waiting in the pipe.
 */
function stallRepeatedly(times: number, ms: number, gapMs: number): { stop: () => void; stalls: () => number } {
  let done = 0;
  let timer: NodeJS.Timeout | undefined;
  const next = () => {
    timer = setTimeout(
      () =>
        setImmediate(() => {
          stall(ms);
          done++;
          if (done < times) next();
        }),
      gapMs,
    );
  };
  next();
  return { stop: () => clearTimeout(timer), stalls: () => done };
}

let stalling: ReturnType<typeof stallRepeatedly> | undefined;
afterEach(() => stalling?.stop());

/** Runs the gate with `argv` and captures its exit code and output. */
async function gate(...argv: string[]) {
  const out: string[] = [];
  const code = await main(argv, { out: (t) => out.push(t), err: (t) => out.push(t), progress: false });
  return { code, out: out.join("") };
}

describe("a stall of the gate's event loop longer than the timeout is not a timeout", () => {
  test("in process: a call answered one turn later, after a stall of 4 timeouts, settles", async () => {
    let stalls = 3;
    // `add` answers in the next turn of the event loop, but the turn before it stalls: the gate's deadline was
    // armed when the call returned, and its timer is due long before the answer is read.
    const factory = verbsOf((queue) => ({
      add: (item: unknown) =>
        new Promise<void>((resolve) => {
          if (stalls-- <= 0) return resolve(queue.add(item));
          setImmediate(() => {
            stall(1200);
            setImmediate(() => resolve(queue.add(item)));
          });
        }),
    }));
    const report = await checkConformance(factory, {
      profile: "contract",
      seed: 27,
      runs: 10,
      timeoutMs: 300,
      overlapping: false,
    });
    expect(stalls).toBeLessThan(0);
    expect(report.verdict).toBe("conforms");
  });

  test.each([
    ["pipelined", []],
    ["in lock step", ["--lockstep"]],
  ])(
    "over the protocol, %s: the gate stalls 3 times for 3 timeouts and exits 0",
    async (_, mode) => {
      // A timeout of 1 s: a child process starved of the CPU that long on a loaded machine is slow, and may be blamed.
      stalling = stallRepeatedly(3, 3000, 150);
      const { code, out } = await gate(
        ...mode,
        "--timeout",
        "1000",
        "--runs",
        "40",
        "--seed",
        "27",
        "--",
        ...reference,
      );
      expect(stalling.stalls()).toBeGreaterThan(0);
      expect(out).not.toContain("timed out");
      expect(code).toBe(0);
    },
    120_000,
  ); // 9 s of stalls and 40 runs, several times longer on a loaded machine
});

test("a silent implementation still times out, exits 3, and not before the timeout", async () => {
  const hang = ["node", join(root, "properties/test/fixtures/broken.mjs"), "hang"];
  const start = performance.now();
  const { code, out } = await gate("--timeout", "1000", "--runs", "5", "--", ...hang);
  const took = performance.now() - start;
  expect(out).toContain('broke the protocol (timed out): no reply to {"op":"new","maxRetries":');
  expect(code).toBe(3);
  expect(took).toBeGreaterThanOrEqual(1000);
  // About the timeout: the start of a node process and the handshake come on top, on a loaded machine seconds.
  expect(took).toBeLessThan(30_000);
});
