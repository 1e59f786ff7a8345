/**
 * The controller loop on PostgreSQL (docs/spec.md §20.12–§20.16) without a database: `runLeaseWorkers` over a fake
 * `LeasedQueue` whose `take` answers from a script, on fake timers. Each worker takes until `take` answers
 * `undefined`; `concurrency` handlers run at once; a handler's lease is extended every `heartbeatMs` while it runs
 * and not after; a refused `extend` aborts the handler; `forget`, `retry`, `onError`, `onGiveUp` and `done` follow
 * §15.1 with the lease; a `take` that cannot reach the database is reported and made again after `pauseMs`; the
 * workers' signal stops them in `take`, in a pause and after a handler. The same loop on the server:
 * lease-workers.test.ts. Here a mutant that breaks the loop fails fast instead of waiting on the database.
 */
import { getEventListeners } from "node:events";
import { afterEach, beforeEach, expect, test, vi } from "vitest";
import {
  DatabaseUnavailableError,
  type Lease,
  type LeasedQueue,
  type LeaseHandlerContext,
  type LeaseWorkerOptions,
  runLeaseWorkers,
  StaleLeaseError,
} from "../../../src/postgres/index.js";

beforeEach(() => {
  vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
});
afterEach(() => {
  vi.useRealTimers();
});

/** Lets every promise that can settle without time passing settle (setImmediate stays real). */
const settle = async () => {
  for (let i = 0; i < 5; i += 1) await new Promise((resolve) => setImmediate(resolve));
};

/** Moves the fake clock on by `ms`, firing the timers due, then settles. */
const advance = async (ms: number) => {
  await vi.advanceTimersByTimeAsync(ms);
  await settle();
};

/** What one `take` answers: a lease of that item, `undefined`, a rejection, or a wait until the signal aborts. */
type Answer = string | undefined | Error | "wait";

type Verb = "extend" | "forget" | "retry" | "done";

/** A readable name of an error for the log: a plain `Error`'s message, else its class. */
const label = (error: unknown) =>
  error instanceof Error ? (error.name === "Error" ? error.message : error.name) : String(error);

/**
 * A `LeasedQueue` whose `take` rejects once its signal aborted and otherwise answers `answers` in turn (then `undefined`), whose other verbs answer at once (`retry`
 * with `true`) unless `verbs` says otherwise, and which logs every call, as do the callbacks of {@link run}.
 */
class FakeQueue implements LeasedQueue {
  readonly log: string[] = [];
  readonly verbs: Partial<Record<Verb, (lease: Lease) => Promise<unknown>>> = {};
  #token = 0;

  constructor(
    readonly answers: Answer[],
    readonly leaseMs = 3_000,
  ) {}

  async take(options?: { readonly signal?: AbortSignal | undefined }): Promise<Lease | undefined> {
    this.log.push("take");
    options?.signal?.throwIfAborted(); // as PostgresWorkQueue's take does
    const answer = this.answers.shift();
    if (answer === "wait") {
      const signal = options?.signal;
      if (signal === undefined) throw new Error("a take that waits needs a signal in this suite");
      return new Promise((_, reject) => {
        if (signal.aborted) reject(signal.reason);
        signal.addEventListener("abort", () => reject(signal.reason), { once: true });
      });
    }
    if (answer instanceof Error) throw answer;
    if (answer === undefined) return undefined;
    this.#token += 1;
    return { item: answer, token: this.#token, expiresAt: 0 };
  }

  extend(lease: Lease): Promise<Lease> {
    return this.#call("extend", lease, lease) as Promise<Lease>;
  }
  forget(lease: Lease): Promise<void> {
    return this.#call("forget", lease, undefined) as Promise<void>;
  }
  retry(lease: Lease): Promise<boolean> {
    return this.#call("retry", lease, true) as Promise<boolean>;
  }
  done(lease: Lease): Promise<void> {
    return this.#call("done", lease, undefined) as Promise<void>;
  }

  async #call(verb: Verb, lease: Lease, answer: unknown): Promise<unknown> {
    this.log.push(`${verb} ${lease.item}#${lease.token}`);
    const call = this.verbs[verb];
    return call === undefined ? answer : call(lease);
  }
}

/** Runs the workers with `onError` and `onGiveUp` logged into the queue's log; `settled` tells whether they stopped. */
function run(
  queue: FakeQueue,
  handler: (item: string, context: LeaseHandlerContext) => unknown,
  options: LeaseWorkerOptions = {},
) {
  const state: { settled: boolean; outcome: unknown } = { settled: false, outcome: "pending" };
  const workers = runLeaseWorkers(queue, handler, {
    onError: (item, error) => {
      queue.log.push(`onError ${item} ${label(error)}`);
    },
    onGiveUp: (item, error) => {
      queue.log.push(`onGiveUp ${item} ${label(error)}`);
    },
    ...options,
  }).then(
    () => {
      state.outcome = "resolved";
    },
    (error: unknown) => {
      state.outcome = error;
    },
  );
  void workers.finally(() => {
    state.settled = true;
  });
  return state;
}

/** A handler that waits until its item is released, recording which items run now. */
function gated() {
  const running = new Set<string>();
  const releases = new Map<string, () => void>();
  const handler = (item: string) =>
    new Promise<void>((resolve) => {
      running.add(item);
      releases.set(item, () => {
        running.delete(item);
        resolve();
      });
    });
  const release = async (item: string) => {
    releases.get(item)?.();
    await settle();
  };
  return { running, handler, release };
}

test("bad arguments throw before any worker starts, naming the value", () => {
  const queue = new FakeQueue(["a"], 3_000);
  const handler = () => undefined;
  const start =
    (options?: unknown, on: unknown = queue, by: unknown = handler) =>
    () =>
      runLeaseWorkers(on as LeasedQueue, by as () => void, options as LeaseWorkerOptions);
  const heartbeat = (got: string) =>
    new RangeError(`Expected \`heartbeatMs\` to be a positive number below the queue's leaseMs (3000), got ${got}`);
  expect(start({ heartbeatMs: 3_000 })).toThrow(heartbeat("`3000` (number)"));
  expect(start({ heartbeatMs: 0 })).toThrow(heartbeat("`0` (number)"));
  expect(start({ heartbeatMs: -1 })).toThrow(heartbeat("`-1` (number)"));
  expect(start({ heartbeatMs: Number.NaN })).toThrow(heartbeat("`NaN` (number)"));
  expect(start({ heartbeatMs: "5" })).toThrow(heartbeat('`"5"` (string)'));
  const pause = (got: string) =>
    new RangeError(`Expected \`pauseMs\` to be a non-negative finite number of milliseconds, got ${got}`);
  expect(start({ pauseMs: -1 })).toThrow(pause("`-1` (number)"));
  expect(start({ pauseMs: Number.NaN })).toThrow(pause("`NaN` (number)"));
  expect(start({ pauseMs: Number.POSITIVE_INFINITY })).toThrow(pause("`Infinity` (number)"));
  expect(start({ concurrency: 0 })).toThrow(
    new RangeError("Expected `concurrency` to be a positive integer, got `0` (number)"),
  );
  expect(start(undefined, { ...queue, leaseMs: 1 })).toThrow(
    new TypeError(
      "Expected `queue` to be a PostgresWorkQueue, with take, extend, forget, retry and done, got `[object Object]` (object)",
    ),
  );
  const withFinish = Object.assign(new FakeQueue(["a"], 3_000), { finish: 1 });
  expect(start(undefined, withFinish as unknown as FakeQueue)).toThrow(
    new TypeError(
      "Expected `queue` to be a PostgresWorkQueue, with take, extend, forget, retry and done, got `[object Object]` (object)",
    ),
  );
  expect(start(undefined, queue, 1)).toThrow(new TypeError("Expected `handler` to be a function, got `1` (number)"));
  expect(start({ onError: 1 })).toThrow(
    new TypeError("Expected `onError` to be undefined or a function, got `1` (number)"),
  );
  expect(start({ onGiveUp: 1 })).toThrow(
    new TypeError("Expected `onGiveUp` to be undefined or a function, got `1` (number)"),
  );
  expect(start({ signal: 1 })).toThrow(
    new TypeError("Expected `signal` to be undefined or an AbortSignal, got `1` (number)"),
  );
  expect(start(1)).toThrow(
    new TypeError("Expected `options` to be undefined or an object such as { concurrency: 4 }, got `1` (number)"),
  );
  expect(queue.log).toEqual([]); // no worker started
});

test("the least and the greatest allowed values start the workers", async () => {
  const queue = new FakeQueue([], 3_000);
  expect(run(queue, () => undefined, { pauseMs: 0, heartbeatMs: 2_999.5, concurrency: 1 }).outcome).toBe("pending");
  await settle();
  expect(queue.log).toEqual(["take"]);
});

test("each worker takes until take answers undefined and then stops; every item is forgotten and done with its lease", async () => {
  const queue = new FakeQueue(["a", "b", "c"]);
  const handled: [string, number][] = [];
  const state = run(queue, (item, { token }) => {
    handled.push([item, token]);
  });
  await settle();
  expect(state.outcome).toBe("resolved");
  expect(handled).toEqual([
    ["a", 1],
    ["b", 2],
    ["c", 3],
  ]);
  expect(queue.log).toEqual([
    ...["take", "forget a#1", "done a#1"],
    ...["take", "forget b#2", "done b#2"],
    ...["take", "forget c#3", "done c#3"],
    "take",
  ]);
});

test("concurrency workers each take once more after the last item, and the promise resolves only once all stopped", async () => {
  const queue = new FakeQueue(["a", "b"]);
  const { running, handler, release } = gated();
  const state = run(queue, handler, { concurrency: 3 });
  await settle();
  expect([...running]).toEqual(["a", "b"]);
  expect(queue.log).toEqual(["take", "take", "take"]); // the third worker took nothing and stopped
  await release("a");
  expect(state.settled).toBe(false); // b's worker still runs
  await release("b");
  expect(state.outcome).toBe("resolved");
  expect(queue.log.filter((call) => call === "take")).toHaveLength(5);
});

test("concurrency handlers run at once and never one more: the next item starts when one ends", async () => {
  const queue = new FakeQueue(["a", "b", "c", "d", "e"]);
  const { running, handler, release } = gated();
  const state = run(queue, handler, { concurrency: 3 });
  await settle();
  expect([...running]).toEqual(["a", "b", "c"]);
  await release("b");
  expect([...running]).toEqual(["a", "c", "d"]);
  for (const item of ["a", "c", "d", "e"]) await release(item);
  expect(running.size).toBe(0);
  expect(state.outcome).toBe("resolved");
});

test("by default one handler runs at a time", async () => {
  const queue = new FakeQueue(["a", "b"]);
  const { running, handler, release } = gated();
  const state = run(queue, handler);
  await settle();
  expect([...running]).toEqual(["a"]);
  await release("a");
  expect([...running]).toEqual(["b"]);
  await release("b");
  expect(state.outcome).toBe("resolved");
});

test("a failing handler: retry, onError with the handler's error, then done; no onGiveUp while retry queues the item again", async () => {
  const queue = new FakeQueue(["a"]);
  const state = run(queue, () => {
    throw new Error("boom");
  });
  await settle();
  expect(state.outcome).toBe("resolved");
  expect(queue.log).toEqual(["take", "retry a#1", "onError a boom", "done a#1", "take"]);
});

test("a retry that gives up: onGiveUp with the item and the handler's error, after onError and before done", async () => {
  const queue = new FakeQueue(["a"]);
  queue.verbs.retry = async () => false;
  const state = run(queue, async () => {
    throw new Error("boom");
  });
  await settle();
  expect(state.outcome).toBe("resolved");
  expect(queue.log).toEqual(["take", "retry a#1", "onError a boom", "onGiveUp a boom", "done a#1", "take"]);
});

test("without onGiveUp a retry that gives up drops the item silently, and done follows", async () => {
  const queue = new FakeQueue(["a"]);
  queue.verbs.retry = async () => false;
  const errors: unknown[] = [];
  const workers = runLeaseWorkers(
    queue,
    () => {
      throw new Error("boom");
    },
    { onError: (_, error) => errors.push(label(error)) },
  );
  await settle();
  await workers;
  expect(errors).toEqual(["boom"]);
  expect(queue.log).toEqual(["take", "retry a#1", "done a#1", "take"]);
});

test("an onGiveUp that throws, or an onError that throws or rejects: reported or discarded, and the loop goes on", async () => {
  const queue = new FakeQueue(["a", "b"]);
  queue.verbs.retry = async () => false;
  const reported: string[] = [];
  const workers = runLeaseWorkers(
    queue,
    (item) => {
      throw new Error(`boom ${item}`);
    },
    {
      onError: (item, error) => {
        reported.push(`${item} ${label(error)}`);
        if (item === "a") throw new Error("onError broke");
        return Promise.reject(new Error("onError rejected"));
      },
      onGiveUp: (item) => {
        throw new Error(`onGiveUp broke on ${item}`);
      },
    },
  );
  await settle();
  await workers;
  expect(reported).toEqual(["a boom a", "a onGiveUp broke on a", "b boom b", "b onGiveUp broke on b"]);
  expect(queue.log).toEqual(["take", "retry a#1", "done a#1", "take", "retry b#2", "done b#2", "take"]);
});

test.each([
  ["forget", "refused", true, ["forget a#1", "onError a StaleLeaseError"]],
  ["forget", "unavailable", true, ["forget a#1", "onError a DatabaseUnavailableError", "done a#1"]],
  ["done", "refused", true, ["forget a#1", "done a#1", "onError a StaleLeaseError"]],
  ["done", "unavailable", true, ["forget a#1", "done a#1", "onError a DatabaseUnavailableError"]],
  ["retry", "refused", false, ["retry a#1", "onError a StaleLeaseError", "onError a boom"]],
  ["retry", "unavailable", false, ["retry a#1", "onError a DatabaseUnavailableError", "onError a boom", "done a#1"]],
] as const)(
  "a %s %s (handler succeeds: %s): reported, and the calls for that lease go on only when it was not refused",
  async (verb, fault, succeeds, calls) => {
    const queue = new FakeQueue(["a"]);
    const error =
      fault === "refused" ? new StaleLeaseError(verb, "a", 1) : new DatabaseUnavailableError(verb, new Error("cut"));
    queue.verbs[verb] = () => Promise.reject(error);
    const state = run(queue, () => {
      if (!succeeds) throw new Error("boom");
    });
    await settle();
    expect(state.outcome).toBe("resolved");
    expect(queue.log).toEqual(["take", ...calls, "take"]);
  },
);

/** A {@link FakeQueue} with `finish` (a success's forget and done as one call), logged as its other verbs. */
class FinishingQueue extends FakeQueue {
  finishing: (lease: Lease) => Promise<void> = () => Promise.resolve();

  finish(lease: Lease): Promise<void> {
    this.log.push(`finish ${lease.item}#${lease.token}`);
    return this.finishing(lease);
  }
}

test("a queue with finish: a success's forget and done are that one call; one refused is reported and ends the calls for the lease, one that cannot reach the database is reported and done follows alone; a failure still retries", async () => {
  const queue = new FinishingQueue(["a", "b", "c", "d"]);
  queue.finishing = (lease) =>
    lease.item === "b"
      ? Promise.reject(new StaleLeaseError("finish", lease.item, lease.token))
      : lease.item === "c"
        ? Promise.reject(new DatabaseUnavailableError("finish", new Error("cut")))
        : Promise.resolve();
  const state = run(queue, (item) => {
    if (item === "d") throw new Error("boom");
  });
  await settle();
  expect(state.outcome).toBe("resolved");
  expect(queue.log).toEqual([
    ...["take", "finish a#1"],
    ...["take", "finish b#2", "onError b StaleLeaseError"],
    ...["take", "finish c#3", "onError c DatabaseUnavailableError", "done c#3"],
    ...["take", "retry d#4", "onError d boom", "done d#4"],
    "take",
  ]);
});

test("a take that cannot reach the database is reported with item undefined, and the worker takes again after pauseMs, not before", async () => {
  const unavailable = new DatabaseUnavailableError("take", new Error("cut"));
  const queue = new FakeQueue([unavailable, unavailable, "a"]);
  const state = run(queue, () => undefined, { pauseMs: 500 });
  await settle();
  expect(queue.log).toEqual(["take", "onError undefined DatabaseUnavailableError"]);
  await advance(499);
  expect(queue.log).toHaveLength(2);
  await advance(1);
  expect(queue.log).toHaveLength(4); // the second take, and its report
  await advance(500);
  expect(state.outcome).toBe("resolved");
  expect(queue.log.slice(4)).toEqual(["take", "forget a#1", "done a#1", "take"]);
});

test("by default a worker pauses a second after a take that could not reach the database; a pause of 0 is allowed", async () => {
  const unavailable = new DatabaseUnavailableError("take", new Error("cut"));
  const queue = new FakeQueue([unavailable]);
  const state = run(queue, () => undefined);
  await settle();
  await advance(999);
  expect(queue.log).toEqual(["take", "onError undefined DatabaseUnavailableError"]);
  await advance(1);
  expect(state.outcome).toBe("resolved");
  expect(queue.log).toEqual(["take", "onError undefined DatabaseUnavailableError", "take"]);
  const again = new FakeQueue([unavailable, unavailable]);
  const quick = run(again, () => undefined, { pauseMs: 0 });
  await settle();
  await vi.runAllTimersAsync(); // the pauses' timers, due at once
  await settle();
  expect(quick.outcome).toBe("resolved");
  expect(again.log.filter((call) => call === "take")).toHaveLength(3);
});

test("a take that fails for a reason taking again cannot cure stops its worker unreported; the others go on, and the promise then rejects with the first such error", async () => {
  const [first, second] = [new Error("schema missing"), new Error("queue closed")];
  const queue = new FakeQueue([first, "a", second]);
  const { running, handler, release } = gated();
  const state = run(queue, handler, { concurrency: 3 });
  await settle();
  expect([...running]).toEqual(["a"]);
  expect(state.settled).toBe(false);
  await release("a");
  expect(state.outcome).toBe(first);
  expect(queue.log).toEqual(["take", "take", "take", "forget a#1", "done a#1", "take"]);
});

test("the workers' signal stops a worker waiting in take at once, and the promise resolves: the abort is no failure", async () => {
  const queue = new FakeQueue(["wait"]);
  const controller = new AbortController();
  const state = run(queue, () => undefined, { signal: controller.signal });
  await settle();
  expect(state.settled).toBe(false);
  controller.abort(new Error("stop"));
  await settle();
  expect(state.outcome).toBe("resolved");
  expect(queue.log).toEqual(["take"]);
});

test("a take that rejects after the signal aborted stops its worker, whatever it rejects with", async () => {
  const controller = new AbortController();
  const queue = new FakeQueue([]);
  queue.take = async () => {
    queue.log.push("take");
    controller.abort();
    throw new DatabaseUnavailableError("take", new Error("cut"));
  };
  const state = run(queue, () => undefined, { signal: controller.signal, pauseMs: 0 });
  await settle();
  expect(state.outcome).toBe("resolved");
  expect(queue.log).toEqual(["take"]);
});

test("the workers' signal aborts a running handler's signal with its reason; the item is finished with forget and done, and no take follows", async () => {
  const queue = new FakeQueue(["a", "b"]);
  const controller = new AbortController();
  const reason = new Error("stop");
  let seen: unknown = "not aborted";
  const state = run(
    queue,
    async (_, { signal }) => {
      controller.abort(reason);
      seen = signal.aborted ? signal.reason : "not aborted";
    },
    { signal: controller.signal },
  );
  await settle();
  expect(seen).toBe(reason);
  expect(state.outcome).toBe("resolved");
  expect(queue.log).toEqual(["take", "forget a#1", "done a#1", "take"]);
});

test("a worker pausing after a lost database stops at once when the signal aborts, during onError or during the pause, and leaves no listener", async () => {
  for (const when of ["onError", "pause"] as const) {
    const queue = new FakeQueue([new DatabaseUnavailableError("take", new Error("cut"))]);
    const controller = new AbortController();
    const state = run(queue, () => undefined, {
      pauseMs: 60_000,
      signal: controller.signal,
      onError: () => {
        if (when === "onError") controller.abort();
      },
    });
    await settle();
    if (when === "pause") {
      expect([state.settled, getEventListeners(controller.signal, "abort").length]).toEqual([false, 1]);
      controller.abort();
      await settle();
    }
    expect([when, state.outcome, queue.log]).toEqual([when, "resolved", ["take"]]);
    expect(getEventListeners(controller.signal, "abort")).toHaveLength(0);
    expect(vi.getTimerCount()).toBe(0); // the pause's timer was cleared, or never set
  }
});

test("a pause that runs to its end removes its listener from the signal", async () => {
  const unavailable = new DatabaseUnavailableError("take", new Error("cut"));
  const queue = new FakeQueue([unavailable, "wait"]);
  const controller = new AbortController();
  const state = run(queue, () => undefined, { pauseMs: 100, signal: controller.signal });
  await settle();
  await advance(100);
  expect(queue.log.filter((call) => call === "take")).toHaveLength(2);
  // the take that waits added its own listener; the pause's is gone
  expect(getEventListeners(controller.signal, "abort")).toHaveLength(2 - 1);
  controller.abort();
  await settle();
  expect(state.outcome).toBe("resolved");
});

test("a running handler's lease is extended every heartbeatMs while it runs, and never once it ended", async () => {
  const queue = new FakeQueue(["a"]);
  const { handler, release } = gated();
  const state = run(queue, handler, { heartbeatMs: 100 });
  await settle();
  await advance(99);
  expect(queue.log).toEqual(["take"]);
  await advance(1);
  expect(queue.log).toEqual(["take", "extend a#1"]);
  await advance(200);
  expect(queue.log).toEqual(["take", "extend a#1", "extend a#1", "extend a#1"]);
  await release("a");
  await advance(1_000);
  expect(state.outcome).toBe("resolved");
  expect(queue.log).toEqual(["take", "extend a#1", "extend a#1", "extend a#1", "forget a#1", "done a#1", "take"]);
  expect(vi.getTimerCount()).toBe(0);
});

test("by default the lease is extended every third of the queue's leaseMs", async () => {
  const queue = new FakeQueue(["a"], 3_000);
  const { handler, release } = gated();
  const state = run(queue, handler);
  await settle();
  await advance(999);
  expect(queue.log).toEqual(["take"]);
  await advance(1);
  expect(queue.log).toEqual(["take", "extend a#1"]);
  await release("a");
  expect(state.outcome).toBe("resolved");
});

test("a refused extend aborts the handler's signal with the StaleLeaseError and ends the beats; the handler's error goes to retry, whose refusal ends the calls", async () => {
  const queue = new FakeQueue(["a"]);
  const stale = new StaleLeaseError("extend", "a", 1);
  queue.verbs.extend = () => Promise.reject(stale);
  queue.verbs.retry = (lease) => Promise.reject(new StaleLeaseError("retry", lease.item, lease.token));
  let reason: unknown = "not aborted";
  const state = run(
    queue,
    (_, { signal }) =>
      new Promise((_, reject) => {
        signal.addEventListener("abort", () => {
          reason = signal.reason;
          reject(new Error("boom"));
        });
      }),
    { heartbeatMs: 100 },
  );
  await settle();
  await advance(100);
  expect(reason).toBe(stale);
  await advance(1_000);
  expect(state.outcome).toBe("resolved");
  expect(queue.log).toEqual(["take", "extend a#1", "retry a#1", "onError a StaleLeaseError", "onError a boom", "take"]);
});

test("an extend that cannot reach the database is made again at the next beat, unreported, and does not abort the handler", async () => {
  const queue = new FakeQueue(["a"]);
  queue.verbs.extend = () => Promise.reject(new DatabaseUnavailableError("extend", new Error("cut")));
  let signal: AbortSignal | undefined;
  const { handler, release } = gated();
  const state = run(
    queue,
    (item, context) => {
      signal = context.signal;
      return handler(item);
    },
    { heartbeatMs: 100 },
  );
  await settle();
  await advance(300);
  expect(queue.log).toEqual(["take", "extend a#1", "extend a#1", "extend a#1"]);
  expect(signal?.aborted).toBe(false);
  await release("a");
  expect(state.outcome).toBe("resolved");
  expect(queue.log.slice(4)).toEqual(["forget a#1", "done a#1", "take"]);
});

test("the calls that end a lease wait for the extend in flight, and no beat follows it", async () => {
  const queue = new FakeQueue(["a"]);
  let answer: (() => void) | undefined;
  queue.verbs.extend = (lease) =>
    new Promise((resolve) => {
      answer = () => {
        queue.log.push("extended");
        resolve(lease);
      };
    });
  const { handler, release } = gated();
  const state = run(queue, handler, { heartbeatMs: 100 });
  await settle();
  await advance(100);
  await release("a"); // while the extend is in flight
  expect(queue.log).toEqual(["take", "extend a#1"]);
  answer?.();
  await settle();
  await advance(1_000);
  expect(state.outcome).toBe("resolved");
  expect(queue.log).toEqual(["take", "extend a#1", "extended", "forget a#1", "done a#1", "take"]);
});

/** A verb of the fake queue that answers only once released, in the order called; `calls` counts them. */
function held() {
  const waiting: (() => void)[] = [];
  const verb = () => new Promise<undefined>((resolve) => waiting.push(() => resolve(undefined)));
  const release = async () => {
    waiting.shift()?.();
    await settle();
  };
  return { verb, release, waiting };
}

test("finishAhead must be a non-negative integer, named in the error; 0 is allowed", () => {
  const queue = new FakeQueue([]);
  const start = (finishAhead: unknown) => () =>
    runLeaseWorkers(queue, () => undefined, { finishAhead } as LeaseWorkerOptions);
  const error = (got: string) => new RangeError(`Expected \`finishAhead\` to be a non-negative integer, got ${got}`);
  expect(start(-1)).toThrow(error("`-1` (number)"));
  expect(start(1.5)).toThrow(error("`1.5` (number)"));
  expect(start(Number.NaN)).toThrow(error("`NaN` (number)"));
  expect(start("2")).toThrow(error('`"2"` (string)'));
  expect(queue.log).toEqual([]);
  expect(start(0)).not.toThrow();
});

test("with finishAhead a worker takes its next lease while the last one's calls are in flight; each lease's calls keep their order, and the promise resolves only once every done answered", async () => {
  const queue = new FakeQueue(["a", "b"]);
  const dones = held();
  queue.verbs.done = dones.verb;
  const handled: string[] = [];
  const state = run(queue, (item) => void handled.push(item), { finishAhead: 5 });
  await settle();
  expect(handled).toEqual(["a", "b"]); // b handled while a's done is in flight
  expect(queue.log.filter((call) => call === "take")).toHaveLength(3);
  expect(queue.log.filter((call) => call.includes(" a"))).toEqual(["forget a#1", "done a#1"]);
  expect(queue.log.filter((call) => call.includes(" b"))).toEqual(["forget b#2", "done b#2"]);
  expect(queue.log.indexOf("take", 1)).toBeLessThan(queue.log.indexOf("done a#1")); // b taken before a's done was made
  expect(state.settled).toBe(false); // both dones are in flight
  await dones.release();
  expect(state.settled).toBe(false);
  await dones.release();
  expect(state.outcome).toBe("resolved");
});

test("by default (finishAhead 0) a worker takes again only once its done answered", async () => {
  const queue = new FakeQueue(["a", "b"]);
  const dones = held();
  queue.verbs.done = dones.verb;
  const state = run(queue, () => undefined);
  await settle();
  expect(queue.log).toEqual(["take", "forget a#1", "done a#1"]);
  await dones.release();
  expect(queue.log.slice(3)).toEqual(["take", "forget b#2", "done b#2"]);
  await dones.release();
  expect(state.outcome).toBe("resolved");
});

test("at most finishAhead leases finish in the background: a worker whose handler ended then waits for the oldest to finish before it hands its lease on and takes again", async () => {
  const queue = new FakeQueue(["a", "b", "c", "d"]);
  const forgets = held();
  queue.verbs.forget = forgets.verb;
  const handled: string[] = [];
  const state = run(queue, (item) => void handled.push(item), { finishAhead: 2 });
  await settle();
  expect(handled).toEqual(["a", "b", "c"]);
  expect(queue.log).toEqual(["take", "forget a#1", "take", "forget b#2", "take"]); // c handled, not handed on
  await forgets.release(); // a's forget, then its done: a is finished
  expect(queue.log.slice(5)).toEqual(["done a#1", "forget c#3", "take"]);
  expect(handled).toEqual(["a", "b", "c", "d"]); // d handled, waits for b
  expect(forgets.waiting).toHaveLength(2); // b's and c's: never more than 2
  for (let i = 0; i < 3; i++) await forgets.release();
  expect(state.outcome).toBe("resolved");
  expect(queue.log.filter((call) => call.startsWith("done"))).toEqual(["done a#1", "done b#2", "done c#3", "done d#4"]);
});

test("with finishAhead, workers waiting for the oldest lease to finish take turns: each hands on one lease per lease finished", async () => {
  const queue = new FakeQueue(["a", "b", "c", "d"]);
  const forgets = held();
  queue.verbs.forget = forgets.verb;
  const state = run(queue, () => undefined, { finishAhead: 1, concurrency: 3 });
  await settle();
  expect(forgets.waiting).toHaveLength(1); // a's; b and c handled, waiting
  await forgets.release();
  expect(forgets.waiting).toHaveLength(1); // b's or c's, not both
  await forgets.release();
  await forgets.release();
  expect(forgets.waiting).toHaveLength(1); // d's
  await forgets.release();
  expect(state.outcome).toBe("resolved");
});

test("with finishAhead, a refused done in the background is reported to onError with its item, and the workers go on", async () => {
  const queue = new FakeQueue(["a", "b"]);
  queue.verbs.done = (lease) =>
    lease.item === "a" ? Promise.reject(new StaleLeaseError("done", lease.item, lease.token)) : Promise.resolve();
  const state = run(queue, () => undefined, { finishAhead: 3 });
  await settle();
  expect(state.outcome).toBe("resolved");
  expect(queue.log).toContain("onError a StaleLeaseError");
  expect(queue.log.filter((call) => call.startsWith("done"))).toEqual(["done a#1", "done b#2"]);
});

test("with finishAhead, a refused forget in the background ends that lease's calls, as without it", async () => {
  const queue = new FakeQueue(["a", "b"]);
  queue.verbs.forget = (lease) =>
    lease.item === "a" ? Promise.reject(new StaleLeaseError("forget", lease.item, lease.token)) : Promise.resolve();
  const state = run(queue, () => undefined, { finishAhead: 3 });
  await settle();
  expect(state.outcome).toBe("resolved");
  expect(queue.log.filter((call) => call.includes(" a"))).toEqual(["forget a#1", "onError a StaleLeaseError"]);
});

test("with finishAhead, the workers' signal stops them taking, and the promise resolves only once the leases finishing in the background have finished", async () => {
  const queue = new FakeQueue(["a", "wait"]);
  const dones = held();
  queue.verbs.done = dones.verb;
  const controller = new AbortController();
  const state = run(queue, () => undefined, { finishAhead: 4, signal: controller.signal });
  await settle();
  expect(queue.log).toEqual(["take", "forget a#1", "take", "done a#1"]);
  controller.abort();
  await settle();
  expect(state.settled).toBe(false); // a's done is in flight
  await dones.release();
  expect(state.outcome).toBe("resolved");
});

test("with finishAhead, a failing handler's retry, onError, onGiveUp and done run in the background in that order", async () => {
  const queue = new FakeQueue(["a", "b"]);
  queue.verbs.retry = async () => false;
  const state = run(
    queue,
    (item) => {
      throw new Error(`boom ${item}`);
    },
    { finishAhead: 2 },
  );
  await settle();
  expect(state.outcome).toBe("resolved");
  expect(queue.log.filter((call) => call.includes(" a"))).toEqual([
    "retry a#1",
    "onError a boom a",
    "onGiveUp a boom a",
    "done a#1",
  ]);
});

test("the running handlers share one listener on the workers' signal, removed once none runs; its abort reaches a handler still running after another ended", async () => {
  const queue = new FakeQueue(["a", "b", "wait"]);
  const controller = new AbortController();
  const reason = new Error("stop");
  const { handler, release } = gated();
  const signals = new Map<string, AbortSignal>();
  const state = run(
    queue,
    (item, { signal }) => {
      signals.set(item, signal);
      return handler(item);
    },
    { concurrency: 2, signal: controller.signal },
  );
  await settle();
  expect(getEventListeners(controller.signal, "abort")).toHaveLength(1); // two handlers, one listener
  await release("a"); // a's worker now waits in take, with a listener of its own
  expect(getEventListeners(controller.signal, "abort")).toHaveLength(2);
  controller.abort(reason);
  expect(signals.get("b")?.reason).toBe(reason);
  expect(signals.get("a")?.aborted).toBe(false); // ended before the abort
  await release("b");
  expect(state.outcome).toBe("resolved");
  expect(getEventListeners(controller.signal, "abort")).toHaveLength(0);
});

test("a handler whose lease arrived after the workers' signal aborted starts with its signal aborted, with the reason", async () => {
  const queue = new FakeQueue([]);
  const controller = new AbortController();
  const reason = new Error("stop");
  queue.take = async () => {
    queue.log.push("take");
    if (controller.signal.aborted) throw reason;
    controller.abort(reason);
    return { item: "a", token: 1, expiresAt: 0 };
  };
  let seen: unknown = "not aborted";
  const state = run(
    queue,
    (_, { signal }) => {
      seen = signal.aborted ? signal.reason : "not aborted";
    },
    { signal: controller.signal },
  );
  await settle();
  expect(seen).toBe(reason);
  expect(state.outcome).toBe("resolved");
  expect(getEventListeners(controller.signal, "abort")).toHaveLength(0);
});
