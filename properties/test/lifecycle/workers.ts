/**
 * The controller loop under random interleavings (docs/spec.md §15): producers add keys, workers run handlers that
 * resolve, reject or throw at moments fast-check's scheduler chooses, and shutdown, drains and aborts come at random
 * points. Checked after every step and at the end: exclusive handlers, nothing lost, exact drains, no unhandled
 * rejection, nothing left pending.
 */
import * as fc from "fast-check";
import { LifecycleModel } from "../../../model/index.js";
import { runWorkers, WorkQueue } from "../../../src/index.js";
import { maxRetries } from "../../core/arbitraries.js";
import { showValue } from "../../core/render.js";
import { compareDrain, compareTake, type DrainRecord } from "../../lifecycle/compare.js";
import { Run } from "../../lifecycle/run.js";
import { flush, type Tracked, track } from "../turns.js";
import { lifecycle } from "./invariants.js";
import { Ledger } from "./ledger.js";
import { ModelLoop } from "./loop.js";

/** How a call of the handler ends: a promise that resolves or rejects when the scheduler says, or at once. */
export type Outcome = "resolves" | "rejects" | "throws" | "returns";

/** What stops the run, at a moment of the scheduler's choosing. */
export type Stop = "shutDown" | "shutDownWithDrain" | "aborted drain" | "abort the workers";

/** One run's input. */
export interface WorkersScenario {
  /** The queue's `maxRetries`. */
  readonly maxRetries: number;
  /** How many workers. */
  readonly concurrency: number;
  /** The producers, each adding its keys one after the other. */
  readonly producers: readonly (readonly string[])[];
  /** How the handler's calls end, in turn; after the last, they resolve. */
  readonly outcomes: readonly Outcome[];
  /** What stops the run: at least one. */
  readonly stops: readonly Stop[];
  /** How `onError` and `onGiveUp` answer: at once, with a promise the scheduler settles, or by throwing. */
  readonly callbacks: "return" | "await" | "throw";
}

const key = fc.constantFrom("a", "b", "c", "d");

/** Few keys, a few workers: keys are re-added while their handlers run, and stops land everywhere. */
export const workersScenario: fc.Arbitrary<WorkersScenario> = fc.record({
  maxRetries,
  concurrency: fc.integer({ min: 1, max: 3 }),
  producers: fc.array(fc.array(key, { maxLength: 5 }), { minLength: 1, maxLength: 3 }),
  outcomes: fc.array(fc.constantFrom<Outcome>("resolves", "rejects", "throws", "returns"), { maxLength: 8 }),
  stops: fc.array(fc.constantFrom<Stop>("shutDown", "shutDownWithDrain", "aborted drain", "abort the workers"), {
    minLength: 1,
    maxLength: 3,
  }),
  callbacks: fc.constantFrom("return" as const, "await" as const, "throw" as const),
});

/** A drain made during a run, on the queue and on the model, and the controller of its signal. */
interface Drain extends DrainRecord {
  readonly controller: AbortController;
}

/** The error a failing handler throws or rejects with. */
class HandlerError extends Error {}

/** The queue a workers run needs. */
export type WorkersQueue = Pick<
  WorkQueue<string>,
  | "add"
  | "done"
  | "retry"
  | "forget"
  | "take"
  | "shutDown"
  | "shutDownWithDrain"
  | "size"
  | "inFlight"
  | "shuttingDown"
  | "failures"
  | "get"
>;

/** One run: the queue, the books, and the handler and callbacks the workers call. */
class WorkersRun {
  readonly queue: WorkersQueue;
  readonly ledger: Ledger;
  /** The workers' signal. */
  readonly stop: AbortController;
  readonly drains: Drain[] = [];
  /** The model of the lifecycle, called as the queue is: by the producers, the stops, and the workers' loop. */
  readonly model: LifecycleModel<string>;
  /** The queue as the workers' loop sees it, mirrored on the model. */
  readonly mirror: ModelLoop;
  #calls = 0;
  #thrown = 0;

  constructor(
    readonly run: Run,
    readonly scenario: WorkersScenario,
    make: (options: { maxRetries: number }) => WorkersQueue,
  ) {
    this.queue = make({ maxRetries: scenario.maxRetries });
    this.model = new LifecycleModel<string>({ maxRetries: scenario.maxRetries });
    this.ledger = new Ledger(() => run.log.length);
    this.stop = run.controller("the workers' signal");
    this.mirror = new ModelLoop(run, this.queue, this.model);
    run.check = () => {
      for (const drain of this.drains) this.checkDrain(drain);
      for (const take of this.mirror.takes) this.#fail(compareTake(take));
    };
  }

  #fail(broken: ReturnType<typeof compareDrain>): void {
    if (broken !== undefined) this.run.fail(...broken);
  }

  /** The queue's counts, for a message. */
  get state(): string {
    return `${this.queue.size} queued, ${this.queue.inFlight} in flight`;
  }

  /** Checks a drain against the model's (§13.1–§13.3). */
  checkDrain(drain: Drain): void {
    this.#fail(compareDrain(drain));
  }

  /** The handler: books its start, checks who else runs, and ends as the scenario says. */
  readonly handler = (k: string): unknown => {
    const outcome = this.scenario.outcomes[this.#calls++] ?? "resolves";
    const { ledger, run } = this;
    run.note(`  handler(${showValue(k)}) starts; it ${outcome}`);
    if (ledger.running.has(k)) run.fail(lifecycle.exclusive, `handler(${showValue(k)}) started while one of it runs`);
    if (ledger.running.size >= this.scenario.concurrency) {
      run.fail(lifecycle.concurrency, `handler(${showValue(k)}) started while ${ledger.running.size} handlers run`);
    }
    const earlier = ledger.runs.filter((r) => r.key === k).reverse();
    const sinceSuccess = earlier.findIndex((r) => r.outcome === "succeeded");
    const count = sinceSuccess < 0 ? earlier.length : sinceSuccess;
    if (this.queue.failures(k) !== count) {
      run.fail(
        lifecycle.protocol,
        `failures(${showValue(k)}) is ${this.queue.failures(k)} as its handler starts, not ${count}`,
      );
    }
    const record = ledger.started(k);
    const end = (ok: boolean) => {
      const givesUp = !ok && (this.queue.shuttingDown || count + 1 >= this.scenario.maxRetries);
      ledger.ended(record, ok ? "succeeded" : "failed", givesUp);
      this.mirror.ended(k, ok);
      if (!ok) throw new HandlerError(`handler(${showValue(k)}) ${outcome}`);
    };
    if (outcome === "throws" || outcome === "returns") return end(outcome === "returns");
    return run.at(`handler(${showValue(k)}) ${outcome}`, () => end(outcome === "resolves"));
  };

  /** How a callback answers: at once, with a promise the scheduler settles, or by throwing or rejecting. */
  #answer(label: string): unknown {
    if (this.scenario.callbacks === "await") return this.run.at(`${label} settles`, () => {});
    if (this.scenario.callbacks === "return") return undefined;
    const error = new Error(`${label} fails`);
    if (this.#thrown++ % 2 === 0) throw error;
    return Promise.reject(error);
  }

  /** `onError`: books that the failure was reported. */
  readonly onError = (k: string, error: unknown): unknown => {
    this.run.note(`  onError(${showValue(k)}, ${showValue(error)})`);
    const last = this.ledger.last(k);
    if (error instanceof HandlerError && last !== undefined) last.reported = true;
    if (error instanceof HandlerError) this.mirror.called(k, "onError");
    return this.#answer(`onError(${showValue(k)}, …)`);
  };

  /** `onGiveUp`: books that the key was given up, after a failure. */
  readonly onGiveUp = (k: string, error: unknown): unknown => {
    this.run.note(`  onGiveUp(${showValue(k)}, ${showValue(error)})`);
    const last = this.ledger.last(k);
    if (last?.outcome !== "failed") {
      this.run.fail(lifecycle.giveUp, `onGiveUp(${showValue(k)}) was called, but its last handler did not fail`);
    } else last.givenUp = true;
    this.mirror.called(k, "onGiveUp");
    return this.#answer(`onGiveUp(${showValue(k)})`);
  };

  /** Checks how the workers ended: resolved, with nothing running or in flight, shut down and empty or aborted. */
  ended(tracked: Tracked<void>): void {
    const { run, ledger, queue } = this;
    run.note(`  the workers ${tracked.state}`);
    if (tracked.state === "rejected") {
      run.fail(lifecycle.workersEnd, `the workers rejected with ${showValue(tracked.reason)}`);
    } else if (ledger.running.size > 0 || queue.inFlight > 0) {
      const left = `${ledger.running.size} handlers running, ${this.state}`;
      run.fail(lifecycle.workersEnd, `the workers stopped with ${left}: every item they take must be done`);
    } else if (!this.stop.signal.aborted && !(queue.shuttingDown && queue.size === 0)) {
      run.fail(lifecycle.workersEnd, `the workers stopped with ${this.state}, neither shut down nor aborted`);
    }
  }

  /** A producer: adds its keys one after the other, each when the scheduler says; books the accepted ones. */
  produce(keys: readonly string[], p: number): void {
    const add = (k: string) => () => {
      const accepted = !this.queue.shuttingDown;
      this.queue.add(k);
      this.model.add(k);
      if (accepted) this.ledger.added(k);
    };
    this.run.sequence(keys.map((k) => [`producer ${p + 1}: add(${showValue(k)})`, add(k)]));
  }

  /** A stop, when the scheduler says. */
  stopWith(kind: Stop, i: number): void {
    const { run, queue } = this;
    if (kind === "shutDown")
      run.at("shutDown()", () => {
        queue.shutDown();
        this.model.shutDown();
      });
    if (kind === "abort the workers") run.at("abort the workers", () => this.#abortWorkers());
    if (kind !== "shutDownWithDrain" && kind !== "aborted drain") return;
    const name = `shutDownWithDrain() #${i + 1}`;
    const controller = run.controller(name);
    run.at(name, () => {
      const promise = queue.shutDownWithDrain({ signal: controller.signal });
      const model = this.model.shutDownWithDrain(controller.signal.aborted);
      const { signal } = controller;
      const drain: Drain = {
        name,
        controller,
        signal,
        drain: model,
        tracked: track(promise, () => this.checkDrain(drain)),
      };
      this.drains.push(drain);
    });
    if (kind === "aborted drain") run.at(`abort drain #${i + 1}`, () => this.#abortDrain(i, "stop waiting"));
  }

  /** Aborts the workers' signal, which withdraws their waiting takes (§14.5, §15.3). */
  #abortWorkers(): void {
    this.stop.abort(new Error("stop the workers"));
    for (const record of this.mirror.takes) this.model.abort(record.take);
  }

  /** Aborts drain `i`, if it was made, on both sides. */
  #abortDrain(i: number, reason: string): void {
    const drain = this.drains.find((d) => d.name === `shutDownWithDrain() #${i + 1}`);
    drain?.controller.abort(new Error(reason));
    if (drain !== undefined) this.model.abortDrain(drain.drain);
  }

  /**
   * Ends the run once every task has run: withdraws the drains that rightly still wait (the workers were aborted
   * with items queued), lists what is still queued, and checks the books against it.
   */
  end(workers: Tracked<void>): void {
    this.run.check();
    if (workers.state === "pending") this.run.fail(lifecycle.pending, `the workers never stopped, with ${this.state}`);
    for (const drain of this.drains) {
      if (drain.tracked.state !== "pending") continue;
      drain.controller.abort(new Error("end"));
      this.model.abortDrain(drain.drain);
    }
    const queued: string[] = [];
    for (let i = 0, k = this.queue.get(); i < 5 && k !== undefined; i++, k = this.queue.get()) queued.push(k);
    for (const [invariant, detail] of this.ledger.broken(queued)) this.run.fail(invariant, detail);
  }
}

/**
 * Runs `scenario` under the scheduler `s`: `workers` (by default `runWorkers`) on a queue that `make` builds.
 * Throws a `LifecycleViolation` naming the first broken invariant.
 */
export async function runWorkersScenario(
  s: fc.Scheduler,
  scenario: WorkersScenario,
  make: (options: { maxRetries: number }) => WorkersQueue = (options) => new WorkQueue<string>(options),
  workers: typeof runWorkers = runWorkers,
): Promise<void> {
  const run = new Run(s);
  try {
    const it = new WorkersRun(run, scenario, make);
    const { concurrency } = scenario;
    const options = { concurrency, signal: it.stop.signal, onError: it.onError, onGiveUp: it.onGiveUp };
    const ended = track(workers(it.mirror.loop, it.handler, options), (tracked) => it.ended(tracked));
    for (const [p, keys] of scenario.producers.entries()) it.produce(keys, p);
    for (const [i, kind] of scenario.stops.entries()) it.stopWith(kind, i);
    await s.waitIdle();
    await flush();
    it.end(ended);
    await run.finish();
  } finally {
    run.close();
  }
}
