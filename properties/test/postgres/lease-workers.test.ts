/**
 * The controller loop on PostgreSQL (docs/spec.md §20.12–§20.16), on the machine's server: `runLeaseWorkers` handles every
 * key with its lease, never one key in two handlers, keeps a long handler's lease alive with heartbeats, aborts the
 * handler whose lease was lost and stops its calls at the refused one, waits out a database it cannot reach, and stops
 * on a setup mistake with its error (a worker process killed mid-handler: lease-workers-killed.test.ts). Every worker's
 * calls after its handler are compared with the model's `leaseWorkerCalls`; `for await` takes leases until shutdown.
 */
import { getEventListeners } from "node:events";
import pg from "pg";
import { afterEach, expect, test } from "vitest";
import { type LeaseFault, leaseWorkerCalls, type WorkerCall } from "../../../model/index.js";
import {
  DatabaseUnavailableError,
  type LeasedQueue,
  type LeaseWorkerOptions,
  PostgresWorkQueue,
  runLeaseWorkers,
  SchemaNotMigratedError,
  StaleLeaseError,
} from "../../../src/postgres/index.js";
import { freshName, freshSchema } from "./database.js";

const { pool, schema } = freshSchema("leaseworkers");

/** The queues a test opened, closed after it, so that a failed test leaves the pool's connections to the next. */
const opened: PostgresWorkQueue[] = [];
afterEach(async () => {
  for (const queue of opened.splice(0)) await queue.close();
});

/** A queue of the suite's schema, closed after the test. */
function open(name: string, leaseMs = 30_000, maxRetries = 3): PostgresWorkQueue {
  const queue = new PostgresWorkQueue({ pool, schema, name, maxRetries, leaseMs, pollMs: 100 });
  opened.push(queue);
  return queue;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The calls each lease's worker made after its handler, as the model names them, recorded by wrapping the queue's
 * verbs and the callbacks; `faults` keeps how a verb failed, for the model.
 */
class Recorder {
  readonly calls = new Map<number, WorkerCall[]>();
  readonly faults = new Map<number, Partial<Record<"forget" | "retry" | "done", LeaseFault>>>();
  readonly outcomes = new Map<number, { succeeded: boolean; requeued: boolean }>();
  readonly errors: [string | undefined, unknown][] = [];
  /** How many `finish` calls the loop made. */
  finishes = 0;
  #last = new Map<string, number>();

  constructor(readonly queue: LeasedQueue) {}

  /**
   * The queue, with `forget`, `retry` and `done` recorded; with `finish`, its `finish` too, recorded as the model
   * names it: its `forget` and its `done` — a refusal naming `done` follows an accepted forget — and a `finish` that
   * failed otherwise as a `forget` that failed so.
   */
  wrapped(finish = false): LeasedQueue {
    const q = this.queue;
    const record = async <V>(verb: "forget" | "retry" | "done", token: number, call: () => Promise<V>) => {
      this.#push(token, verb);
      try {
        return await call();
      } catch (error) {
        const fault: LeaseFault = error instanceof StaleLeaseError ? "refused" : "unavailable";
        this.faults.set(token, { ...this.faults.get(token), [verb]: fault });
        throw error;
      }
    };
    return {
      leaseMs: q.leaseMs,
      take: (options) => q.take(options),
      extend: (lease) => q.extend(lease),
      forget: (lease) => record("forget", lease.token, () => q.forget(lease)),
      retry: (lease) =>
        record("retry", lease.token, async () => {
          const requeued = await q.retry(lease);
          this.outcomes.set(lease.token, { succeeded: false, requeued });
          return requeued;
        }),
      done: (lease) => record("done", lease.token, () => q.done(lease)),
      ...(finish && {
        finish: async (lease) => {
          this.finishes += 1;
          const made = q.finish;
          if (made === undefined) throw new Error("the queue has no finish");
          try {
            await made.call(q, lease);
          } catch (error) {
            const doneRefused = error instanceof StaleLeaseError && error.message.startsWith("done(");
            this.#push(lease.token, "forget");
            if (doneRefused) this.#push(lease.token, "done");
            const fault: LeaseFault = error instanceof StaleLeaseError ? "refused" : "unavailable";
            this.faults.set(lease.token, { ...this.faults.get(lease.token), [doneRefused ? "done" : "forget"]: fault });
            throw error;
          }
          this.#push(lease.token, "forget");
          this.#push(lease.token, "done");
        },
      }),
    };
  }

  /** The callbacks, recorded against the latest lease of their item. */
  options(extra: LeaseWorkerOptions = {}): LeaseWorkerOptions {
    return {
      ...extra,
      onError: (item, error) => {
        this.errors.push([item, error]);
        if (item !== undefined) this.#push(this.#last.get(item) ?? -1, "onError");
      },
      onGiveUp: (item) => this.#push(this.#last.get(item) ?? -1, "onGiveUp"),
    };
  }

  /** Notes that `token` is the latest lease of `item` handed to a handler. */
  started(item: string, token: number, succeeds: boolean): void {
    this.#last.set(item, token);
    this.outcomes.set(token, { succeeded: succeeds, requeued: false });
  }

  /** Every lease's calls beside what the model says they are. */
  compared(): { readonly made: WorkerCall[][]; readonly model: WorkerCall[][] } {
    const tokens = [...this.calls.keys()];
    return {
      made: tokens.map((t) => this.calls.get(t) ?? []),
      model: tokens.map((t) => {
        const { succeeded, requeued } = this.outcomes.get(t) ?? { succeeded: true, requeued: false };
        return [...leaseWorkerCalls(succeeded, requeued, this.faults.get(t))];
      }),
    };
  }

  #push(token: number, call: WorkerCall): void {
    this.calls.set(token, [...(this.calls.get(token) ?? []), call]);
  }
}

test.each([
  [0, "apart"],
  [4, "apart"],
  [0, "as one finish"],
  [4, "as one finish"],
] as const)(
  "two instances of one queue, three workers each, finishAhead %i, forget and done %s: every key is handled, never in two handlers at once, an add during its handler handles it again, and each lease's calls are the model's",
  async (finishAhead, finishing) => {
    const name = freshName();
    const [a, b] = [open(name), open(name)];
    const recorders = [new Recorder(a), new Recorder(b)];
    const active = new Set<string>();
    const handled: string[] = [];
    let overlaps = 0;
    const keys = Array.from({ length: 30 }, (_, i) => `ns/pod-${i}`);
    const workers = recorders.map((recorder) =>
      runLeaseWorkers(
        recorder.wrapped(finishing === "as one finish"),
        async (key, { token }) => {
          recorder.started(key, token, true);
          if (active.has(key)) overlaps += 1;
          active.add(key);
          if (key === "ns/pod-0" && !handled.includes(key)) await a.add(key); // added while in flight: once more after
          await sleep(5);
          active.delete(key);
          handled.push(key);
        },
        recorder.options({ concurrency: 3, finishAhead }),
      ),
    );
    for (const key of keys) await a.add(key);
    await b.shutDownWithDrain();
    await Promise.all(workers);
    expect(overlaps).toBe(0);
    expect([...handled].sort()).toEqual(["ns/pod-0", ...keys].sort());
    for (const recorder of recorders) {
      const { made, model } = recorder.compared();
      expect(made).toEqual(model);
      expect(recorder.errors).toEqual([]);
    }
    expect(recorders.reduce((sum, r) => sum + r.calls.size, 0)).toBe(handled.length);
    const finishes = recorders.reduce((sum, r) => sum + r.finishes, 0);
    expect(finishes).toBe(finishing === "as one finish" ? handled.length : 0);
  },
  60_000,
);

test("a handler that runs longer than its lease keeps it by heartbeats: no other taker gets the item meanwhile, and its forget and done are accepted", async () => {
  const name = freshName();
  const leaseMs = 2_000;
  const queue = open(name, leaseMs);
  const other = open(name, leaseMs);
  const recorder = new Recorder(queue);
  await queue.add("slow");
  let handling = true;
  const taken: string[] = [];
  // Started once the worker holds the lease: another taker that looks every 100 ms while the handler runs.
  const watch = async () => {
    while (handling) {
      const lease = await other.get();
      if (lease !== undefined) taken.push(lease.item);
      await sleep(100);
    }
  };
  let watcher: Promise<void> = Promise.resolve();
  let extended = 0;
  const counting: LeasedQueue = {
    ...recorder.wrapped(),
    extend: (lease) => {
      extended += 1;
      return queue.extend(lease);
    },
  };
  const controller = new AbortController();
  const workers = runLeaseWorkers(
    counting,
    async (key, { token }) => {
      recorder.started(key, token, true);
      watcher = watch();
      await sleep(3 * leaseMs);
      handling = false;
      controller.abort();
    },
    recorder.options({ heartbeatMs: 250, signal: controller.signal }),
  );
  await workers;
  await watcher;
  expect(taken).toEqual([]);
  expect(extended).toBeGreaterThanOrEqual(3);
  expect(recorder.compared().made).toEqual([["forget", "done"]]);
  expect(recorder.errors).toEqual([]);
  expect([await queue.size(), await queue.inFlight()]).toEqual([0, 0]);
}, 60_000);

test("a lease lost while its handler runs aborts the handler's signal with the StaleLeaseError, and the worker's calls stop at the refused retry, as the model says", async () => {
  const name = freshName();
  const leaseMs = 500;
  const queue = open(name, leaseMs);
  const thief = open(name, leaseMs);
  const recorder = new Recorder(queue);
  await queue.add("lost");
  // The first heartbeat's extend reaches the database only after the lease expired and another taker holds the item:
  // a network that stalls longer than the lease, made to happen rather than hoped for. The thief looks only once the
  // worker holds the lease.
  let begin = () => {};
  const begun = new Promise<void>((resolve) => {
    begin = resolve;
  });
  const stolen = begun.then(async () => {
    for (;;) {
      const lease = await thief.get();
      if (lease !== undefined) return lease;
      await sleep(50);
    }
  });
  let extends_ = 0;
  const slow: LeasedQueue = {
    ...recorder.wrapped(),
    extend: async (lease) => {
      extends_ += 1;
      await stolen;
      return queue.extend(lease);
    },
  };
  let reason: unknown;
  const failure = new Error("stopped: lease lost");
  const controller = new AbortController();
  await runLeaseWorkers(
    slow,
    async (key, { token, signal }) => {
      recorder.started(key, token, false);
      begin();
      await new Promise((resolve) => signal.addEventListener("abort", resolve, { once: true }));
      reason = signal.reason;
      controller.abort(); // the worker stops after this lease
      await sleep(400); // four beats' time: a lost lease is not extended again
      throw failure;
    },
    recorder.options({ heartbeatMs: 100, signal: controller.signal }),
  );
  expect(reason).toBeInstanceOf(StaleLeaseError);
  expect(extends_).toBe(1);
  const { made, model } = recorder.compared();
  expect(made).toEqual([["retry", "onError", "onError"]]);
  expect(made).toEqual(model);
  expect(recorder.errors.map(([item, error]) => [item, (error as Error).name])).toEqual([
    ["lost", "StaleLeaseError"],
    ["lost", "Error"],
  ]);
  expect(await queue.failures("lost")).toBe(0); // the refused retry counted nothing
  expect((await stolen).token).toBeGreaterThan(Math.max(...recorder.calls.keys())); // the item is the thief's now
}, 60_000);

test.each([0, 2])(
  "a failing handler, finishAhead %i: retry, onError and done; at maxRetries retry gives up and onGiveUp follows, as the model says",
  async (finishAhead) => {
    const name = freshName();
    const queue = open(name, 30_000, 2);
    const recorder = new Recorder(queue);
    await queue.add("failing");
    let runs = 0;
    const boom = new Error("boom");
    const workers = runLeaseWorkers(
      recorder.wrapped(),
      (key, { token }) => {
        recorder.started(key, token, false);
        runs += 1;
        if (runs === 2) queue.shutDown();
        throw boom;
      },
      recorder.options({ finishAhead }),
    );
    await workers;
    const { made, model } = recorder.compared();
    expect(made).toEqual([
      ["retry", "onError", "done"],
      ["retry", "onError", "onGiveUp", "done"],
    ]);
    expect(made).toEqual(model);
    expect(recorder.errors).toEqual([
      ["failing", boom],
      ["failing", boom],
    ]);
    expect(await queue.failures("failing")).toBe(2);
  },
);

test("a take that cannot reach the database is reported with item undefined and made again after pauseMs, until the signal stops the workers", async () => {
  const unreachable = new pg.Pool({ connectionString: "postgres://postgres@127.0.0.1:1/test", max: 1 });
  const queue = new PostgresWorkQueue({ pool: unreachable, schema, name: freshName(), maxRetries: 3 });
  opened.push(queue);
  const controller = new AbortController();
  const reported: [string | undefined, unknown][] = [];
  const workers = runLeaseWorkers(queue, () => undefined, {
    pauseMs: 20,
    signal: controller.signal,
    onError: (item, error) => {
      reported.push([item, error]);
      if (reported.length === 3) controller.abort();
    },
  });
  await workers;
  expect(reported).toHaveLength(3);
  for (const [item, error] of reported) {
    expect(item).toBeUndefined();
    expect(error).toBeInstanceOf(DatabaseUnavailableError);
  }
  await queue.close();
  await unreachable.end();
});

test("a take that fails for a reason taking again cannot cure (a schema not migrated) stops every worker, and the promise rejects with it", async () => {
  const queue = new PostgresWorkQueue({ pool, schema: `${schema}_absent`, name: freshName(), maxRetries: 3 });
  opened.push(queue);
  const reported: unknown[] = [];
  const outcome = await runLeaseWorkers(queue, () => undefined, {
    concurrency: 2,
    onError: (_, error) => reported.push(error),
  }).then(
    () => "resolved",
    (error: unknown) => error,
  );
  expect(outcome).toBeInstanceOf(SchemaNotMigratedError);
  expect(reported).toEqual([]);
});

test("the workers' signal stops a waiting worker at once and aborts a running handler's signal, whose item is finished with forget and done", async () => {
  const name = freshName();
  const queue = open(name);
  const recorder = new Recorder(queue);
  await queue.add("running");
  const controller = new AbortController();
  let aborted = false;
  const workers = runLeaseWorkers(
    recorder.wrapped(),
    async (key, { token, signal }) => {
      recorder.started(key, token, true);
      controller.abort(new Error("stop"));
      aborted = signal.aborted;
    },
    recorder.options({ concurrency: 2, signal: controller.signal }),
  );
  await workers;
  expect(aborted).toBe(true);
  expect(recorder.compared().made).toEqual([["forget", "done"]]);
  expect([await queue.size(), await queue.inFlight(), await queue.shuttingDown()]).toEqual([0, 0, false]);
});

test("for await over the queue takes leases until the queue shut down and nothing is left", async () => {
  const queue = open(freshName());
  for (const key of ["a", "b", "a", "c"]) await queue.add(key);
  await queue.shutDown();
  const items: string[] = [];
  for await (const lease of queue) {
    items.push(lease.item);
    await queue.done(lease);
  }
  expect(items).toEqual(["a", "b", "c"]);
});

test("no extend overlaps the calls that end the lease, and none is made after them: stopping the beats waits for the extend in flight", async () => {
  const queue = open(freshName(), 2_000);
  await queue.add("a");
  const events: string[] = [];
  const controller = new AbortController();
  const recorded: LeasedQueue = {
    leaseMs: queue.leaseMs,
    take: (options) => queue.take(options),
    extend: async (lease) => {
      events.push("extend>");
      await sleep(150); // still in flight when the handler ends
      const extended = await queue.extend(lease);
      events.push("extend<");
      return extended;
    },
    forget: async (lease) => {
      events.push("forget");
      return queue.forget(lease);
    },
    retry: (lease) => queue.retry(lease),
    done: async (lease) => {
      events.push("done");
      return queue.done(lease);
    },
  };
  const errors: unknown[] = [];
  await runLeaseWorkers(
    recorded,
    async () => {
      await sleep(180); // the first beat's extend started at 100 ms and answers after 250 ms
      controller.abort();
    },
    { heartbeatMs: 100, signal: controller.signal, onError: (_, error) => errors.push(error) },
  );
  await sleep(400); // a beat left running would extend again meanwhile
  expect(events.slice(-2)).toEqual(["forget", "done"]);
  expect(events.filter((e) => e === "extend>")).toHaveLength(events.filter((e) => e === "extend<").length);
  expect(errors).toEqual([]);
}, 60_000);

test("an extend that cannot reach the database is made again at the next beat and does not abort the handler", async () => {
  const queue = open(freshName(), 2_000);
  const recorder = new Recorder(queue);
  await queue.add("a");
  let attempts = 0;
  const flaky: LeasedQueue = {
    ...recorder.wrapped(),
    extend: (lease) => {
      attempts += 1;
      if (attempts === 1) return Promise.reject(new DatabaseUnavailableError("extend", new Error("cut")));
      return queue.extend(lease);
    },
  };
  const controller = new AbortController();
  let aborted: unknown = "not aborted";
  await runLeaseWorkers(
    flaky,
    async (key, { token, signal }) => {
      recorder.started(key, token, true);
      while (attempts < 3) await sleep(20);
      aborted = signal.aborted ? signal.reason : "not aborted";
      controller.abort();
    },
    recorder.options({ heartbeatMs: 50, signal: controller.signal }),
  );
  expect(aborted).toBe("not aborted");
  expect(recorder.compared().made).toEqual([["forget", "done"]]);
  expect(recorder.errors).toEqual([]);
}, 60_000);

/**
 * A queue whose `verb` fails once with `error`, as the database or the lease would make it fail; with `finish` it
 * has `finish`, which the loop makes for a success's forget and done.
 */
function failing(queue: PostgresWorkQueue, verb: "forget" | "done" | "finish", error: Error): LeasedQueue {
  let failed = false;
  const fail = <V>(call: () => Promise<V>) => {
    if (failed) return call();
    failed = true;
    return Promise.reject(error);
  };
  return {
    leaseMs: queue.leaseMs,
    take: (options) => queue.take(options),
    extend: (lease) => queue.extend(lease),
    retry: (lease) => queue.retry(lease),
    forget: (lease) => (verb === "forget" ? fail(() => queue.forget(lease)) : queue.forget(lease)),
    done: (lease) => (verb === "done" ? fail(() => queue.done(lease)) : queue.done(lease)),
    ...(verb === "finish" && { finish: (lease) => fail(() => queue.finish(lease)) }),
  };
}

test.each([
  ["forget", "refused", ["forget", "onError"], 0],
  ["forget", "unavailable", ["forget", "onError", "done"], 0],
  ["done", "unavailable", ["forget", "done", "onError"], 0],
  ["forget", "refused", ["forget", "onError"], 1],
  ["done", "refused", ["forget", "done", "onError"], 1],
  ["done", "unavailable", ["forget", "done", "onError"], 1],
  ["finish", "refused", ["forget", "onError"], 0],
  ["finish", "unavailable", ["forget", "onError", "done"], 0],
  ["finish", "refused", ["forget", "onError"], 1],
  ["finish", "unavailable", ["forget", "onError", "done"], 1],
] as const)(
  "a %s %s: reported, and the calls go on as the model says (%j), finishAhead %i",
  async (verb, fault, calls, finishAhead) => {
    const queue = open(freshName(), 30_000);
    await queue.add("a");
    const error =
      fault === "refused"
        ? new StaleLeaseError(verb === "finish" ? "forget" : verb, "a", 1)
        : new DatabaseUnavailableError(verb, new Error("cut"));
    const recorder = new Recorder(failing(queue, verb, error));

    const controller = new AbortController();
    await runLeaseWorkers(
      recorder.wrapped(verb === "finish"),
      (key, { token }) => {
        recorder.started(key, token, true);
        controller.abort();
      },
      recorder.options({ signal: controller.signal, finishAhead }),
    );
    const { made, model } = recorder.compared();
    expect(made).toEqual([calls]);
    expect(made).toEqual(model);
    expect(recorder.errors).toEqual([["a", error]]);
  },
);

test("an onGiveUp that throws is reported to onError, after the handler's error, and done follows", async () => {
  const queue = open(freshName(), 30_000, 0);
  await queue.add("a");
  const [boom, broken] = [new Error("boom"), new Error("onGiveUp broke")];
  const errors: unknown[] = [];
  const calls: string[] = [];
  const controller = new AbortController();
  const watched: LeasedQueue = {
    ...queue,
    leaseMs: queue.leaseMs,
    take: (options) => queue.take(options),
    extend: (lease) => queue.extend(lease),
    forget: (lease) => queue.forget(lease),
    retry: (lease) => queue.retry(lease),
    done: async (lease) => {
      calls.push("done");
      return queue.done(lease);
    },
  };
  await runLeaseWorkers(
    watched,
    () => {
      controller.abort();
      throw boom;
    },
    {
      signal: controller.signal,
      onError: (_, error) => {
        errors.push(error);
      },
      onGiveUp: () => {
        throw broken;
      },
    },
  );
  expect(errors).toEqual([boom, broken]);
  expect(calls).toEqual(["done"]);
});

test("a worker waits a second by default after a take that could not reach the database", async () => {
  const unreachable = new pg.Pool({ connectionString: "postgres://postgres@127.0.0.1:1/test", max: 1 });
  const queue = new PostgresWorkQueue({ pool: unreachable, schema, name: freshName(), maxRetries: 3 });
  opened.push(queue);
  const controller = new AbortController();
  let reports = 0;
  const workers = runLeaseWorkers(queue, () => undefined, {
    signal: controller.signal,
    onError: () => {
      reports += 1;
    },
  });
  while (reports === 0) await sleep(10);
  await sleep(300);
  controller.abort();
  await workers;
  expect(reports).toBe(1);
  await queue.close();
  await unreachable.end();
});

test("a worker that waits out a lost database stops at once when the signal aborts, before or during its pause, and leaves no listener on the signal", async () => {
  const unreachable = new pg.Pool({ connectionString: "postgres://postgres@127.0.0.1:1/test", max: 1 });
  const queue = new PostgresWorkQueue({ pool: unreachable, schema, name: freshName(), maxRetries: 3 });
  opened.push(queue);
  for (const [pauseMs, abortAt] of [
    [5, "the tenth report"],
    [60_000, "the report"],
    [60_000, "the pause"],
  ] as const) {
    const controller = new AbortController();
    let reports = 0;
    let left = 0;
    const started = Date.now();
    await runLeaseWorkers(queue, () => undefined, {
      pauseMs,
      signal: controller.signal,
      onError: () => {
        reports += 1;
        if (abortAt === "the tenth report" && reports === 10) {
          left = getEventListeners(controller.signal, "abort").length; // nine pauses and takes ended: none of theirs
          controller.abort();
        }
        if (abortAt === "the report") controller.abort(); // before the pause starts
        if (abortAt === "the pause") setTimeout(() => controller.abort(), 50);
      },
    });
    expect([abortAt, Date.now() - started < 30_000]).toEqual([abortAt, true]); // not the minute-long pause
    expect([left, getEventListeners(controller.signal, "abort").length]).toEqual([0, 0]);
  }
  await queue.close();
  await unreachable.end();
}, 120_000);

test("workers without a signal wait out a lost database between takes, and stop, rejecting, when the queue is closed", async () => {
  const unreachable = new pg.Pool({ connectionString: "postgres://postgres@127.0.0.1:1/test", max: 1 });
  const queue = new PostgresWorkQueue({ pool: unreachable, schema, name: freshName(), maxRetries: 3 });
  opened.push(queue);
  let reports = 0;
  const outcome = await runLeaseWorkers(queue, () => undefined, {
    pauseMs: 5,
    onError: () => {
      reports += 1;
      if (reports === 3) void queue.close(); // the next take is refused: the queue was closed
    },
  }).then(
    () => "resolved",
    (error: unknown) => error,
  );
  expect(reports).toBe(3);
  expect(outcome).toEqual(new Error(`take refused: the queue "${queue.name}" was closed`));
  await unreachable.end();
});
