/**
 * The controller loop under random interleavings (docs/spec.md §15): producers, workers whose handlers resolve,
 * reject or throw at moments fast-check's scheduler chooses, and shutdown, drains and aborts at random points.
 */
import * as fc from "fast-check";
import { test } from "vitest";
import { runWorkersScenario, workersScenario } from "../lifecycle/workers.js";
import { expectHolds, scheduledParams } from "../settings.js";

test("workers never share a key, lose nothing, and stop cleanly, under every interleaving", async (ctx) => {
  const property = fc.asyncProperty(fc.scheduler(), workersScenario, (s, scenario) => runWorkersScenario(s, scenario));
  expectHolds(await fc.check(property, scheduledParams(300)), ctx.task.name);
});
