/**
 * The gate is sharp: it rejects every deliberately wrong queue in properties/test/wrong/all.mjs, each with a
 * short counterexample naming the broken invariant, and accepts correct ones. In process; over the protocol, see
 * protocol.test.ts.
 */
import { describe, expect, test } from "vitest";
import { WorkQueue } from "../../../src/index.js";
import { ProtocolBreach } from "../../core/breach.js";
import type { Profile } from "../../core/commands.js";
import { OptionError } from "../../core/errors.js";
import { type InvariantId, invariant } from "../../core/invariants.js";
import type { SubjectFactory } from "../../core/subject.js";
import { stringItems } from "../../core/universes.js";
import { conformanceTests } from "../../report/conformance-tests.js";
import { lifecycleTests } from "../../report/lifecycle-tests.js";
import { formatReport } from "../../report/text.js";
import { checkConformance } from "../../sequential/check-conformance.js";
import { runs, seed, shape } from "../settings.js";
import { verbsOf } from "../subjects.js";
import * as wrongQueues from "../wrong/all.mjs";

/** The wrong queues by name. */
const wrong: Record<keyof typeof wrongQueues, SubjectFactory<unknown>> = {
  ...wrongQueues,
};

/** The sentence of the invariant with id `id`, as a report names it. */
const named = (id: InvariantId) => invariant(id).name;

/**
 * Each wrong queue, the profile that finds it, the invariant it breaks, the most steps its counterexample takes, and
 * what the counterexample's detail says (its first sentence; items vary with the seed).
 */
const cases: [keyof typeof wrongQueues, Profile, string, number, RegExp][] = [
  [
    "retryPushesToFifo",
    "contract",
    named("no-duplicate"),
    3,
    /^size is 1 after retry\((.+)\), but the model has 0 items queued, each once: the queue held \1, which is in flight /,
  ],
  [
    "lostDirtyMark",
    "contract",
    named("add-while-in-flight"),
    7,
    /^done\((.+)\) did not requeue \1, which was marked dirty while in flight$/,
  ],
  [
    "offByOneGiveUp",
    "contract",
    named("gives-up-at-max-retries"),
    3,
    /^retry\(.+\) answered true at failure count (\d+) against maxRetries \1$/,
  ],
  ["forgetDoesNothing", "robust", named("failure-count"), 3, /^failures\(.+\) is [1-9]\d*, expected 0$/],
  ["lifo", "contract", named("fifo"), 3, /^get\(\) handed out .+, but .+ was queued before it$/],
  [
    "ringBufferBreaksOnGrow",
    "contract",
    named("nothing-lost"),
    16,
    /^get\(\) answered undefined, but .+ was queued and the oldest$/,
  ],
  [
    "emptyStringIsNothing",
    "contract",
    named("nothing-lost"),
    1,
    /^after add\((.+)\): expected size 1, got 0: the queue no longer held \1, which was queued /,
  ],
  ["sharedFailureCount", "robust", named("failure-count"), 3, /^failures\(.+\) is \d+, expected \d+$/],
  [
    "doneDuplicatesQueued",
    "robust",
    named("no-duplicate"),
    2,
    /^size is 2 after done\((.+)\), but the model has 1 item queued, each once: the queue held \1 twice /,
  ],
  [
    "addWhileInFlightQueues",
    "contract",
    named("no-duplicate"),
    3,
    /^size is 1 after (add|retry)\((.+)\), but the model has 0 items queued, each once: the queue held \2, which is in flight /,
  ],
  ["failuresResetOnDone", "robust", named("failure-count"), 3, /^failures\(.+\) is 0, expected 1$/],
  [
    "plainObjectStates",
    "contract",
    named("nothing-lost"),
    2,
    /^after add\((.+)\): expected size \d+, got \d+: the queue no longer held \1, which was queued /,
  ],
  [
    "doneAlwaysRequeues",
    "contract",
    named("add-while-in-flight"),
    3,
    /^done\((.+)\) requeued \1, which nothing had marked dirty$/,
  ],
  [
    "dirtyMarkNeverCleared",
    "contract",
    named("add-while-in-flight"),
    10,
    /^done\((.+)\) requeued \1, which nothing had marked dirty$/,
  ],
  // What a wrong size means, told apart by draining a fresh queue given the same calls:
  [
    "sizeCountsInFlight",
    "contract",
    named("answers"),
    2,
    /^size is 1 after get\(\), but the model has 0 items queued, each once; the queue holds exactly the items the model has queued, /,
  ],
  [
    "getLeavesItemQueued",
    "contract",
    named("no-duplicate"),
    2,
    /^size is 1 after get\(\), but the model has 0 items queued, each once: the queue held (.+), which is in flight /,
  ],
  [
    "dropsPastThree",
    "contract",
    named("nothing-lost"),
    4,
    /^after add\((.+)\): expected size 4, got 3: the queue no longer held \1, which was queued /,
  ],
  [
    "getMissesTheLastItem",
    "contract",
    named("nothing-lost"),
    2,
    /^get\(\) answered undefined, but .+ was queued and the oldest$/,
  ],
];

test.each(cases)(
  "the gate rejects %s (%s profile) with a short counterexample",
  async (name, profile, invariant, most, detail) => {
    // A budget no machine runs out of: the length asserted must not depend on how busy the machine is.
    const report = await checkConformance(wrong[name], {
      profile,
      seed,
      shape,
      runs: runs(400),
      shrinkTimeMs: 600_000,
    });
    expect(report.verdict).toBe("does not conform");
    expect(report.counterexample?.invariant.name).toBe(invariant);
    expect(report.counterexample?.steps.length).toBeLessThanOrEqual(most);
    expect(report.counterexample?.detail).toMatch(detail);
  },
);

test.each([
  ["doneAlwaysRequeues", 21],
  ["lifo", 59],
] as const)(
  "shrinks %s to 3 calls where a get, the retry of what it got and its done only go together (seed %i)",
  async (name, fixed) => {
    // Both seeds once ended at 6 calls: add, get, retry, done, …; removing one of the three left a done of an item
    // not held, and chunks at fixed starts never removed the three at once.
    const report = await checkConformance(wrong[name], {
      profile: "contract",
      seed: fixed,
      runs: 400,
      shrinkTimeMs: 600_000,
    });
    expect(report.counterexample?.steps.length).toBe(3);
    expect(report.counterexample?.minimal).toBe(true);
  },
);

test.each([
  ["failuresSharedByQueues", "contract", 1],
  ["failuresSharedByQueues", "robust", 1],
  ["processingSharedByQueues", "contract", 2],
] as const)(
  "the gate reports that %s's queues share state (%s profile), not a bug of its calls",
  async (name, profile, length) => {
    const report = await checkConformance(wrong[name], {
      profile,
      seed,
      shape,
      runs: runs(100),
    });
    expect(report.verdict).toBe("does not conform");
    expect(report.counterexample?.invariant.name).toBe(
      "each queue the factory makes starts empty and is independent of the others",
    );
    expect(report.counterexample?.invariant.rule).toBe("§3.5");
    expect(report.counterexample?.detail).toMatch(
      /^two fresh queues were given the same calls, and answered call \d+, .+, differently: the first /,
    );
    expect(report.counterexample?.steps.length).toBe(length);
    expect(report.counterexample?.minimal).toBe(false);
  },
);

test("replaying the token of a shared-state counterexample runs the probe again, before anything else", async () => {
  // The shared counts only grow, so two fresh queues differ again; state that stops changing would not show.
  const report = await checkConformance(wrong.failuresSharedByQueues, {
    seed,
    shape,
    runs: 1,
  });
  const again = await checkConformance(wrong.failuresSharedByQueues, {
    shape,
    replay: report.counterexample?.replay,
  });
  expect(again.counterexample?.invariant.rule).toBe("§3.5");
  expect(again.runs).toBe(2);
});

test("queues that keep to themselves pass the independence probe: the reference and the naive queue", async () => {
  for (const factory of [wrong.naive, (options: { maxRetries: number }) => new WorkQueue(options)]) {
    const report = await checkConformance(factory, {
      seed,
      shape,
      runs: runs(20),
    });
    expect(report.verdict).toBe("conforms");
  }
});

test("a counterexample that does not fail when run again is reported with a note saying so", async () => {
  // From the 100th get made on any of its queues on, the first get that has an item to hand out answers nothing:
  // the survey finds it, and no later run fails again.
  let gets = 0;
  let fired = false;
  const once: SubjectFactory<unknown> = (options) => {
    const queue = wrong.naive(options) as unknown as {
      get(): unknown;
      size: number;
    };
    const get = queue.get.bind(queue);
    queue.get = () => {
      if (++gets < 100 || fired || queue.size === 0) return get();
      fired = true;
      return undefined;
    };
    return queue as never;
  };
  // A budget no machine runs out of: fast-check's second run of the failing sequence must end, not be cut short.
  const report = await checkConformance(once, {
    profile: "contract",
    seed,
    shape,
    runs: runs(400),
    shrinkTimeMs: 600_000,
  });
  expect(report.verdict).toBe("does not conform");
  expect(report.counterexample?.detail).toMatch(
    /\(but these calls kept every invariant when made once more on another fresh queue: the queue's answers depend on more than the calls shown/,
  );
});

test.each([
  ["sizeCountsInFlight", /only the size it shows is wrong \(§9\.1\)/],
  ["getLeavesItemQueued", /: the queue held .+, which is in flight \(after these calls, get\(\) on a fresh queue/],
  ["doneDuplicatesQueued", /: the queue held .+ twice \(/],
  ["dropsPastThree", /: the queue no longer held .+, which was queued \(/],
] as const)("the diagnosis of %s says what the queue held against what the model holds", async (name, said) => {
  const report = await checkConformance(wrong[name], {
    profile: "robust",
    seed,
    shape,
    runs: runs(400),
    items: stringItems,
  });
  expect(report.counterexample?.detail).toMatch(said);
  expect(report.counterexample?.detail).toMatch(/the model has .+ queued\)?$/);
});

test("a queue whose shutDown only sets a flag is rejected when checked with shutDown", async () => {
  const report = await checkConformance(wrong.shutDownOnlySetsAFlag, {
    shutDown: true,
    seed,
    shape,
    runs: runs(400),
  });
  expect(report.counterexample?.invariant.name).toBe(named("shutting-down-requests-nothing"));
  expect(report.counterexample?.steps.length).toBeLessThanOrEqual(3);
});

test("checking with shutDown a queue that does not offer it is a TypeError, not a finding", async () => {
  await expect(checkConformance(wrong.naive, { shutDown: true, runs: 1 })).rejects.toThrow(
    new TypeError("Expected the factory's queues to offer `shutDown()`, as `options.shutDown` is true"),
  );
});

test("the contract profile does not flag client-go's Done of a queued item, which only misuse reaches", async () => {
  const report = await checkConformance(wrong.doneDuplicatesQueued, {
    profile: "contract",
    seed,
    shape,
    runs: runs(200),
  });
  expect(report.verdict).toBe("conforms");
});

test.each<Profile>(["contract", "robust"])("the gate accepts a plain correct queue (%s profile)", async (profile) => {
  const report = await checkConformance(wrong.naive, {
    profile,
    seed,
    shape,
    runs: runs(200),
  });
  expect(report.verdict).toBe("conforms");
});

test("a replay token from a failed report reproduces exactly its counterexample", async () => {
  const first = await checkConformance(wrong.lostDirtyMark, {
    profile: "contract",
    seed,
    shape,
    runs: runs(200),
  });
  const again = await checkConformance(wrong.lostDirtyMark, {
    profile: "contract",
    shape,
    replay: first.counterexample?.replay,
  });
  expect(again.counterexample?.steps).toEqual(first.counterexample?.steps);
  expect(again.runs).toBe(1);
});

test("a replay token that is not one is an OptionError (a RangeError) that names it", async () => {
  const checked = checkConformance(wrong.naive, { replay: "nonsense" });
  await expect(checked).rejects.toBeInstanceOf(RangeError);
  await expect(checked).rejects.toThrow(
    new OptionError(
      'Expected `replay` to be a token that a failed report printed (wq3.…), got `"nonsense"`: it is not a replay token',
    ),
  );
});

test("an asynchronous queue is checked like a synchronous one", async () => {
  const asynchronous = (options: { maxRetries: number }) => {
    const queue = new WorkQueue<string>(options);
    const later = <V>(value: () => V) => new Promise<V>((resolve) => setImmediate(() => resolve(value())));
    return {
      add: (item: string) => later(() => queue.add(item)),
      get: () => later(() => queue.get()),
      done: (item: string) => later(() => queue.done(item)),
      retry: (item: string) => later(() => queue.retry(item)),
      forget: (item: string) => later(() => queue.forget(item)),
      size: () => later(() => queue.size),
      failures: (item: string) => later(() => queue.failures(item)),
    };
  };
  const report = await checkConformance(asynchronous, {
    profile: "contract",
    seed,
    shape,
    runs: runs(50),
  });
  expect(report.verdict).toBe("conforms");
  expect(report.commands).toBeGreaterThan(0);
});

conformanceTests(test, (options) => new WorkQueue<unknown>(options), {
  seed,
  shape,
  runs: runs(100),
});

test("an in-process call that never settles stops the check with a timed-out breach naming the call", async () => {
  const hangs = verbsOf(() => ({
    get: () => new Promise<undefined>(() => {}),
  }));
  const checked = checkConformance(hangs, {
    profile: "contract",
    seed: 1,
    runs: 5,
    timeoutMs: 50,
  });
  await expect(checked).rejects.toThrow(new ProtocolBreach("timed out", "get() did not settle within 50 ms", ""));
  await expect(checked).rejects.toBeInstanceOf(ProtocolBreach);
});

describe("replay tokens", () => {
  const failing = () =>
    checkConformance(wrong.lostDirtyMark, {
      profile: "contract",
      seed,
      shape,
      runs: runs(200),
    });

  test("a token is one paste-safe word: no leading dash, nothing a shell would read", async () => {
    const token = (await failing()).counterexample?.replay ?? "";
    expect(token).toMatch(/^wq3\.[A-Za-z0-9_-]+$/);
  });

  test("a token carries the profile and shutDown: replayed without them it is refused, naming the option", async () => {
    const token = (await failing()).counterexample?.replay;
    await expect(checkConformance(wrong.lostDirtyMark, { replay: token, shape })).rejects.toThrow(
      new OptionError(
        'The replay token was made with `profile` "contract", but this check has "robust": replay it with the options that made it',
      ),
    );
    const shut = await checkConformance(wrong.shutDownOnlySetsAFlag, {
      shutDown: true,
      seed,
      shape,
      runs: runs(400),
    });
    await expect(
      checkConformance(wrong.shutDownOnlySetsAFlag, {
        replay: shut.counterexample?.replay,
        shape,
      }),
    ).rejects.toThrow(/made with `shutDown` true, but this check has false/);
  });

  test("a token carries maxCommands: a replay of a short run is exact, not a crash", async () => {
    const first = await checkConformance(wrong.lostDirtyMark, {
      profile: "contract",
      maxCommands: 10,
      seed,
      runs: runs(400),
    });
    const again = await checkConformance(wrong.lostDirtyMark, {
      profile: "contract",
      maxCommands: 10,
      replay: first.counterexample?.replay,
    });
    expect(again.counterexample?.steps).toEqual(first.counterexample?.steps);
    await expect(
      checkConformance(wrong.lostDirtyMark, {
        profile: "contract",
        shape,
        replay: first.counterexample?.replay,
      }),
    ).rejects.toThrow(/made with `maxCommands` 10, but this check has null/);
  });

  test("conformanceTests replays the token in WORKQUEUE_REPLAY, as the command it prints sets it; checkConformance reads only its options", async () => {
    const first = await failing();
    const tests: (() => Promise<void>)[] = [];
    conformanceTests((_name, fn) => void tests.push(fn), wrong.lostDirtyMark, { shape });
    const contract = tests[0] as () => Promise<void>;
    process.env.WORKQUEUE_REPLAY = first.counterexample?.replay;
    try {
      const message = await contract().then(
        () => "",
        (error: Error) => error.message,
      );
      expect(message).toContain(formatReport(first, () => "").split("\n  found after")[0]);
      expect(message).toMatch(/^ {2}found after 1 run, /m);
      // Called directly, the check ignores the variable: it runs its own seed and runs, not the token's one run.
      const direct = await checkConformance((options) => new WorkQueue<unknown>(options), {
        profile: "contract",
        shape,
        seed: 5,
        runs: 3,
      });
      expect([direct.runs, direct.seed]).toEqual([3, 5]);
    } finally {
      delete process.env.WORKQUEUE_REPLAY;
    }
  });

  test("a shrinking budget of calls that runs out still reports a counterexample, says so, and replays it", async () => {
    const first = await checkConformance(wrong.ringBufferBreaksOnGrow, {
      profile: "contract",
      seed: 7,
      runs: 400,
      shrinkCalls: 300,
    });
    const example = first.counterexample;
    expect([first.verdict, example?.minimal, example?.stoppedBy]).toEqual(["does not conform", false, "calls"]);
    // The first run of a shrink always runs; after that, no attempt starts once the budget is spent.
    expect(example?.shrinkCalls).toBe(300);
    expect(formatReport(first, (t) => t)).toContain(
      "the shrinking budget of 300 calls ran out (--shrink-calls), so a shorter one may exist",
    );
    const again = await checkConformance(wrong.ringBufferBreaksOnGrow, {
      profile: "contract",
      replay: example?.replay,
    });
    expect([again.counterexample?.steps, again.counterexample?.minimal]).toEqual([example?.steps, false]);
    // The budget counts work, not time: the same seed and budget give the same counterexample and token.
    const twice = await checkConformance(wrong.ringBufferBreaksOnGrow, {
      profile: "contract",
      seed: 7,
      runs: 400,
      shrinkCalls: 300,
    });
    expect(twice.counterexample?.replay).toBe(example?.replay);
  });

  test("when the safety net of time stops shrinking, the report says so, and the token replays it", async () => {
    const first = await checkConformance(wrong.ringBufferBreaksOnGrow, {
      profile: "contract",
      seed: 7,
      runs: 400,
      shrinkTimeMs: 0,
    });
    expect([first.verdict, first.counterexample?.minimal]).toEqual(["does not conform", false]);
    expect(first.counterexample?.stoppedBy).toBe("time");
    expect(formatReport(first, (t) => t)).toContain(
      "shrinking stopped at its safety net of 0.0 s (--shrink-time-ms), not at its budget of calls, so a shorter one may exist",
    );
    const again = await checkConformance(wrong.ringBufferBreaksOnGrow, {
      profile: "contract",
      replay: first.counterexample?.replay,
    });
    expect([again.counterexample?.steps, again.counterexample?.minimal]).toEqual([first.counterexample?.steps, false]);
  });

  test("the report names the item universe it drew from: any values in process unless told strings", async () => {
    const report = await checkConformance(wrong.naive, { seed, runs: 5 });
    expect([report.items, formatReport(report, (t) => t)]).toEqual([
      "any values",
      expect.stringContaining("items: any values"),
    ]);
    expect(
      (
        await checkConformance(wrong.naive, {
          seed,
          runs: 5,
          items: stringItems,
        })
      ).items,
    ).toBe("strings");
  });
});

describe("what is not a finding about the queue", () => {
  test("a factory that throws stops the check with a `threw` breach naming the factory", async () => {
    const throwing = () => {
      throw new Error("no database");
    };
    await expect(checkConformance(throwing, { runs: 1 })).rejects.toThrow(
      new ProtocolBreach("threw", "the factory threw Error: no database", ""),
    );
  });

  test("a view that throws stops the check with a `threw` breach naming the view", async () => {
    // Defined on the made queue, not spread into it: a spread would call the getter inside the factory.
    const factory = (options: { maxRetries: number }) =>
      Object.defineProperty(verbsOf(() => ({}))(options), "inFlight", {
        get() {
          throw new RangeError("not counted");
        },
      });
    await expect(checkConformance(factory, { seed: 1, runs: 1 })).rejects.toThrow(
      /^inFlight after [a-z]+\(.*\) threw RangeError: not counted$/,
    );
  });

  test("a queue without a verb is a `missing verb` breach naming it, before any call", async () => {
    const factory = verbsOf(() => ({ retry: undefined }));
    await expect(checkConformance(factory, { runs: 1 })).rejects.toThrow(
      new ProtocolBreach("missing verb", "the factory made a queue without a `retry` method", ""),
    );
  });

  test("a queue without size is reported as checked without size, with the checks it skipped", async () => {
    const factory = verbsOf(() => ({ size: undefined }));
    const report = await checkConformance(factory, {
      seed,
      shape,
      runs: runs(20),
    });
    expect([report.verdict, report.unchecked]).toEqual(["conforms", ["size", "inFlight", "failures"]]);
    expect(formatReport(report, (t) => t)).toContain("checked without size: skipped the size after every call (§9.1)");
    const full = await checkConformance((options) => new WorkQueue<unknown>(options), { seed, shape, runs: runs(20) });
    expect(full.unchecked).toEqual([]);
  });
});

test("conformanceTests registers one test per profile, each asking for a 120-second timeout, named by the call's file and line", () => {
  const registered: [string, number | undefined][] = [];
  const line = Number(new Error().stack?.split("\n")[1]?.match(/:(\d+):\d+\)?$/)?.[1]) + 1;
  conformanceTests((name, _fn, timeout) => void registered.push([name, timeout]), wrong.naive);
  expect(registered).toEqual([
    [`the queue conforms to workqueue-spec (contract profile) [gate.test.ts:${line}]`, 120_000],
    [`the queue conforms to workqueue-spec (robust profile) [gate.test.ts:${line}]`, 120_000],
  ]);
});

test("a label given to conformanceTests or lifecycleTests ends their tests' names in place of the file and line", () => {
  const registered: string[] = [];
  conformanceTests((name) => void registered.push(name), wrong.naive, { label: "naive" });
  lifecycleTests(
    (name) => void registered.push(name),
    (options) => new WorkQueue<string>(options),
    {
      label: "reference",
      time: true,
    },
  );
  expect(registered).toEqual([
    "the queue conforms to workqueue-spec (contract profile) [naive]",
    "the queue conforms to workqueue-spec (robust profile) [naive]",
    "the queue keeps the lifecycle rules of workqueue-spec (with time) [reference]",
  ]);
});
