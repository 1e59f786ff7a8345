/**
 * Protocol v1's `concurrent` feature, end to end: the gate (`main`, in this process) makes runs of concurrent rounds
 * on the Python example, whose threads share one lock, and on its racy twin (no lock, and a check-then-act gap in
 * `get` widened by a sleep), which must be rejected under §10.8 with a short counterexample that its token replays;
 * and how often the race is found, over 100 seeds, with `checkOverlapping` on the driver's concurrent queues (the
 * part of `checkDriver` that makes them).
 */
import { join } from "node:path";
import { expect, test } from "vitest";
import { main } from "../../cli/gate.js";
import { checkOverlapping } from "../../overlap/check-overlapping.js";
import { connect } from "../../protocol/driver.js";

const root = new URL("../../../", import.meta.url).pathname;
const python = ["python3", join(root, "examples/python/workqueue.py")];
const racy = ["python3", join(root, "properties/test/fixtures/python-racy.py")];

/** Runs the gate with `argv` and captures its exit code and output. */
async function gate(...argv: string[]) {
  const out: string[] = [];
  const code = await main(argv, { out: (t) => out.push(t), err: (t) => out.push(t), progress: false });
  return { code, out: out.join("") };
}

test("the Python example announces concurrent, and conforms in its concurrent rounds too", async () => {
  const { code, out } = await gate("--runs", "100", "--", ...python);
  expect(out).toContain("features len, shutdown, time, metrics, concurrent");
  expect(out).toMatch(/and 1\d\d runs of overlapping calls/);
  expect(code).toBe(0);
});

test("the racy twin is rejected under §10.8 with at most 4 calls, the orders tried, and a token that replays it", async () => {
  const { code, out } = await gate("--json", "--runs", "100", "--seed", "1", "--", ...racy);
  const outcome = JSON.parse(out);
  expect(code).toBe(1);
  const found = outcome.counterexample;
  expect(found.invariant.rule).toBe("§10.8");
  expect(found.protocolLines).toBeUndefined();
  expect(found.overlapping.length).toBeLessThanOrEqual(4);
  expect(found.detail).toMatch(/get\(\) → "a" {2}‖ {2}get\(\) → "a"/);
  expect(found.detail).toContain("tried");
  expect(found.detail).toContain("but the model answers undefined");
  const again = await gate("--json", `--replay=${found.replay}`, "--", ...racy);
  const replayed = JSON.parse(again.out);
  expect(again.code).toBe(1);
  expect(replayed.counterexample.invariant.rule).toBe("§10.8");
  expect(replayed.counterexample.overlapping.length).toBe(found.overlapping.length);
  expect(replayed.counterexample.detail).toMatch(/failed at replay \d+ of up to 10/);
});

test.each([
  ["carries an id no request has", "wrong-id", "a reply must carry the id of a request awaiting one"],
  ["is not JSON", "not-json", "a reply to a request with an id is not JSON"],
  ["never comes", "silent", 'no reply to {"op":'],
])("a concurrent reply that %s is a breach, exit code 3", async (_, mode, said) => {
  const { code, out } = await gate("--runs", "5", "--timeout", "500", "--", ...racy, mode as string);
  expect(out).toContain(said);
  expect(code).toBe(3);
});

test("the race is found with a counterexample of at most 4 calls in at least 90 of 100 seeds", async () => {
  const driver = await connect(racy[0] as string, racy.slice(1));
  const sizes: number[] = [];
  try {
    const concurrent = driver.concurrent;
    if (concurrent === undefined) throw new Error("the racy twin does not announce concurrent");
    for (let seed = 1; seed <= 100; seed++) {
      // As checkDriver makes them: 100 runs, the first three string items, finite maxRetries.
      const options = { seed, runs: 100, items: ["a", "b", ""], finiteMaxRetries: true, timeoutMs: 10_000 };
      const report = await checkOverlapping(concurrent, options);
      sizes.push(report.counterexample?.calls.length ?? 0);
    }
  } finally {
    await driver.close();
  }
  const short = sizes.filter((size) => size > 0 && size <= 4).length;
  console.log(`the race found with at most 4 calls in ${short} of 100 seeds; calls per seed: ${sizes.join(" ")}`);
  expect(short).toBeGreaterThanOrEqual(90);
});
