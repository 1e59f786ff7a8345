/**
 * The queue's lifecycle under random interleavings (docs/spec.md §12–§14): producers, consumers that take and
 * finish items, shutdown, drains and aborts at moments fast-check's scheduler chooses, checked against the model of
 * waiting after every step.
 */
import * as fc from "fast-check";
import { test } from "vitest";
import { runTakers, takersScenario } from "./lifecycle/takers.js";
import { expectHolds, scheduledParams } from "./settings.js";

test("takes, shutdown and drains answer as the model of waiting does, under every interleaving", async (ctx) => {
  const property = fc.asyncProperty(fc.scheduler(), takersScenario, (s, scenario) => runTakers(s, scenario));
  expectHolds(await fc.check(property, scheduledParams(300)), ctx.task.name);
});
