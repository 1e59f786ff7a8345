/**
 * The reference queue against the model: random command sequences in both profiles, every invariant checked after
 * every step (coverage.test.ts shows that the sequences reach every reachable transition).
 */
import { expect, test } from "vitest";
import { WorkQueue } from "../../../src/index.js";
import type { Profile } from "../../core/commands.js";
import { anyItems } from "../../core/universes.js";
import { checkConformance } from "../../sequential/check-conformance.js";
import { expectConforms, replay, runs, seed, shape } from "../settings.js";
import { verbsOf } from "../subjects.js";

const reference = (options: { maxRetries: number }) => new WorkQueue<unknown>(options);

for (const profile of ["contract", "robust"] satisfies Profile[]) {
  const options = { profile, seed, replay, shape, items: anyItems, compareMessages: true, shutDown: true };

  test(`${profile} profile: the reference queue answers as the model does after every call, with few items`, async (ctx) => {
    const report = await checkConformance(reference, { ...options, shape: "few", runs: runs(600) });
    expectConforms(report, ctx.task.name);
  });

  test(`${profile} profile: the reference queue answers as the model does after every call, in a deep queue`, async (ctx) => {
    const report = await checkConformance(reference, { ...options, shape: "many", runs: runs(200) });
    expectConforms(report, ctx.task.name);
  });
}

test("asking to check shutDown on a queue that does not offer it throws instead of passing", async () => {
  const withoutShutDown = verbsOf();
  await expect(checkConformance(withoutShutDown, { runs: 5, shutDown: true })).rejects.toThrow(
    new TypeError("Expected the factory's queues to offer `shutDown()`, as `options.shutDown` is true"),
  );
  expect((await checkConformance(withoutShutDown, { runs: 5 })).verdict).toBe("conforms");
});
