/**
 * Verifying from the model's answers recorded while planning (properties/core/expectation.ts) finds exactly what
 * verifying every step on the model finds: the same violation, at the same step, with the same trace; and a step
 * meets its expectation only when it equals the model's answer and every view it shows.
 */
import * as fc from "fast-check";
import { describe, expect, test } from "vitest";
import { WorkQueue } from "../../../src/index.js";
import { scenario } from "../../core/arbitraries.js";
import { inProcess, type Observation } from "../../core/driver.js";
import { type Expectation, meets } from "../../core/expectation.js";
import { perform } from "../../core/subject.js";
import { anyItems } from "../../core/universes.js";
import { modelOf, verifyStarted } from "../../core/verify.js";
import { planOf } from "../../sequential/plan.js";
import { params } from "../settings.js";
import * as wrong from "../wrong/all.mjs";

const subjects = {
  reference: (options: { maxRetries: number }) => new WorkQueue<unknown>(options),
  lostDirtyMark: wrong.lostDirtyMark,
  offByOneGiveUp: wrong.offByOneGiveUp,
  forgetDoesNothing: wrong.forgetDoesNothing,
  lifo: wrong.lifo,
  doneDuplicatesQueued: wrong.doneDuplicatesQueued,
  failuresResetOnDone: wrong.failuresResetOnDone,
  sizeCountsInFlight: wrong.sizeCountsInFlight,
  coercesToString: wrong.coercesToString,
  shutDownOnlySetsAFlag: wrong.shutDownOnlySetsAFlag,
  doneThrowsWhenNotInFlight: wrong.doneThrowsWhenNotInFlight,
};

/** Whether the queues of `name` offer `shutDown`, so that runs may call it. */
function offersShutDown(name: keyof typeof subjects): boolean {
  return typeof (subjects[name]({ maxRetries: 1 }) as { shutDown?: unknown }).shutDown === "function";
}

describe("verifying from the model's recorded answers", () => {
  const runs = fc.tuple(
    fc.constantFrom(...(Object.keys(subjects) as (keyof typeof subjects)[])),
    fc.constantFrom("few" as const, "many" as const),
    fc.boolean(),
  );

  test("finds the same violation, at the same step, with the same trace, as verifying every step on the model", async () => {
    await fc.assert(
      fc.asyncProperty(
        runs.chain(([name, shape, compareMessages]) =>
          scenario({ profile: "robust", shape, items: anyItems, shutDown: offersShutDown(name) }).map((input) => ({
            name,
            compareMessages,
            input,
          })),
        ),
        async ({ name, compareMessages, input }) => {
          const driver = inProcess(subjects[name], { shutDown: offersShutDown(name) });
          const { plan, expected } = planOf(input);
          const verified = (recorded?: readonly Expectation[]) =>
            verifyStarted(
              driver.start(input.maxRetries, plan),
              { maxRetries: input.maxRetries, plan, expected: recorded },
              { compareMessages },
            );
          const fast = await verified(expected);
          const stepwise = await verified(undefined);
          expect(fast?.invariant.name).toBe(stepwise?.invariant.name);
          expect(fast?.detail).toBe(stepwise?.detail);
          expect(fast?.steps).toEqual(stepwise?.steps);
        },
      ),
      params(150),
    );
  });

  test("records one expectation per planned call: the model's answer and views right after it", () => {
    fc.assert(
      fc.property(scenario({ profile: "robust", shape: "few", items: anyItems, shutDown: true }), (input) => {
        const { plan, expected } = planOf(input);
        expect(expected).toHaveLength(plan.length);
        const model = modelOf(input.maxRetries, undefined);
        for (const [index, operation] of plan.entries()) {
          const answer = perform(model, operation);
          const item = "item" in operation ? operation.item : undefined;
          const failures = item === undefined || item === null ? undefined : model.failures(item);
          const { size, inFlight, shuttingDown, waiting } = model;
          expect(expected[index]).toEqual({ answer, size, inFlight, failures, shuttingDown, waiting });
        }
      }),
      params(50),
    );
  });
});

describe("a step meets its expectation", () => {
  const expected: Expectation = {
    answer: { kind: "value", value: "a" },
    size: 2,
    inFlight: 1,
    failures: 3,
    shuttingDown: false,
    waiting: 0,
  };
  const equal: Observation = {
    answer: { kind: "value", value: "a" },
    views: { size: 2, inFlight: 1, failures: 3, shuttingDown: false, waiting: 0 },
  };

  test("when it answers the same and shows the same views, or none", () => {
    expect(meets(expected, equal, true)).toBe(true);
    expect(meets(expected, { ...equal, views: {} }, true)).toBe(true);
    expect(meets({ ...expected, failures: undefined }, equal, true)).toBe(true);
  });

  test("not when its answer or any view it shows differs, nor when it shows metrics, which are not recorded", () => {
    const off: Observation[] = [
      { ...equal, answer: { kind: "value", value: "b" } },
      { ...equal, answer: { kind: "error", name: "TypeError", message: "no" } },
      ...(["size", "inFlight", "failures", "waiting"] as const).map((view) => ({
        ...equal,
        views: { ...equal.views, [view]: 9 },
      })),
      { ...equal, views: { ...equal.views, shuttingDown: true } },
      { ...equal, views: { ...equal.views, metrics: {} as never } },
    ];
    for (const observation of off) expect(meets(expected, observation, false)).toBe(false);
  });

  test("an error of the same name meets one with another message only when messages are not compared", () => {
    const error = (message: string) => ({ kind: "error", name: "TypeError", message }) as const;
    const thrown: Observation = { ...equal, answer: error("b") };
    expect(meets({ ...expected, answer: error("a") }, thrown, false)).toBe(true);
    expect(meets({ ...expected, answer: error("a") }, thrown, true)).toBe(false);
  });
});
