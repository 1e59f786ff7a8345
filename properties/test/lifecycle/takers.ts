/**
 * The queue's lifecycle under random interleavings (docs/spec.md §12–§14): producers add keys, consumers take,
 * finish and `done` items, and a shutdown, drains and aborts come at moments fast-check's scheduler chooses. Every
 * call is made on the queue and on the model of waiting at the same moment; after every step the two must agree.
 */
import * as fc from "fast-check";
import { WaitingModel } from "../../../model/index.js";
import { WorkQueue } from "../../../src/index.js";
import { maxRetries } from "../../engine/arbitraries.js";
import { showValue } from "../../engine/render.js";
import { flush, type Tracked, track } from "../turns.js";
import { lifecycle } from "./invariants.js";
import { Run } from "./run.js";
import { compareTake, type TakeRecord } from "./takes.js";

/** The queue's verbs that a lifecycle run calls. */
export type LifecycleQueue = Pick<
  WorkQueue<string>,
  "add" | "done" | "retry" | "forget" | "take" | "shutDown" | "shutDownWithDrain" | "size" | "inFlight" | "shuttingDown"
>;

/** A consumer: how many takes it makes, what it does with each item, how often its current take is aborted. */
export interface Consumer {
  /** The most takes it makes; it stops earlier when a take answers `undefined`. */
  readonly takes: number;
  /** For each item in turn (cycling): `forget` it or `retry` it, then `done` it. */
  readonly outcomes: readonly ("forget" | "retry")[];
  /**
   * How many aborts, each at a moment of the scheduler's choosing, hit its signal. It keeps one signal until a take
   * rejects, so an abort that lands while it finishes an item makes its next take start already aborted.
   */
  readonly aborts: number;
}

/** One run's input. */
export interface TakersScenario {
  /** The queue's `maxRetries`. */
  readonly maxRetries: number;
  /** The producers, each adding its keys one after the other. */
  readonly producers: readonly (readonly string[])[];
  /** The consumers. */
  readonly consumers: readonly Consumer[];
  /** How the queue is shut down (at a moment of the scheduler's choosing), if at all before the end. */
  readonly shutDown: "at the end" | "shutDown" | "shutDownWithDrain";
  /** More drains, each `true` when its signal aborts at some moment. */
  readonly drains: readonly boolean[];
}

const key = fc.constantFrom("a", "b", "c");

/** Few keys, few actors: every key meets every state, and takes wait side by side. */
export const takersScenario: fc.Arbitrary<TakersScenario> = fc.record({
  maxRetries,
  producers: fc.array(fc.array(key, { maxLength: 5 }), { minLength: 1, maxLength: 3 }),
  consumers: fc.array(
    fc.record({
      takes: fc.integer({ min: 1, max: 4 }),
      outcomes: fc.array(fc.constantFrom("forget" as const, "retry" as const), { minLength: 1, maxLength: 3 }),
      aborts: fc.integer({ min: 0, max: 2 }),
    }),
    { minLength: 1, maxLength: 3 },
  ),
  shutDown: fc.constantFrom("at the end" as const, "shutDown" as const, "shutDownWithDrain" as const),
  drains: fc.array(fc.boolean(), { maxLength: 2 }),
});

/** A drain made during the run. */
interface DrainRecord {
  readonly name: string;
  readonly tracked: Tracked<void>;
  readonly controller: AbortController;
}

/** One run: the queue and the model side by side, and the actors that call them. */
class TakersRun {
  readonly queue: LifecycleQueue;
  readonly model: WaitingModel<string>;
  readonly #takes: TakeRecord[] = [];
  readonly #drains: DrainRecord[] = [];
  readonly #controllers: AbortController[];
  readonly #current: TakeRecord[] = [];

  constructor(
    readonly run: Run,
    readonly scenario: TakersScenario,
    make: (options: { maxRetries: number }) => LifecycleQueue,
  ) {
    this.queue = make({ maxRetries: scenario.maxRetries });
    this.model = new WaitingModel<string>({ maxRetries: scenario.maxRetries });
    this.#controllers = scenario.consumers.map((_, c) => run.controller(`consumer ${c + 1}'s signal`));
    run.check = () => {
      this.views("the previous step");
      for (const record of this.#takes) this.compare(record);
      for (const drain of this.#drains) this.checkDrain(drain);
    };
  }

  /** Compares the views of the queue and of the model. */
  views(after: string): void {
    for (const view of ["size", "inFlight", "shuttingDown"] as const) {
      const [actual, expected] = [this.queue[view], this.model.queue[view]];
      if (actual !== expected)
        this.run.fail(lifecycle.answers, `after ${after}, ${view} is ${actual}, not ${expected}`);
    }
  }

  /** Compares a take of the queue with the model's. */
  compare(record: TakeRecord): void {
    const broken = compareTake(record);
    if (broken !== undefined) this.run.fail(...broken);
  }

  /** Checks a drain against the model: resolved exactly when drained, rejected only by its own signal. */
  checkDrain(drain: DrainRecord): void {
    const { name, tracked, controller } = drain;
    const { signal } = controller;
    const wait = `while ${this.model.queue.size} queued and ${this.model.queue.inFlight} in flight`;
    if (tracked.state === "resolved" && !this.model.drained)
      this.run.fail(lifecycle.drainExact, `${name} resolved ${wait}`);
    if (tracked.state === "rejected" && tracked.reason !== signal.reason) {
      this.run.fail(
        lifecycle.drainAbort,
        `${name} rejected with ${showValue(tracked.reason)}, not its signal's reason`,
      );
    }
    if (tracked.state === "pending" && signal.aborted) {
      this.run.fail(lifecycle.drainAbort, `${name} still waits, though its signal aborted`);
    }
    if (tracked.state === "pending" && this.model.drained) {
      this.run.fail(lifecycle.drainAll, `${name} still waits, though nothing is queued or in flight`);
    }
  }

  /** A producer: adds its keys one after the other, each when the scheduler says. */
  produce(keys: readonly string[], p: number): void {
    const add = (k: string) => () => {
      this.queue.add(k);
      this.model.add(k);
      this.views(`add(${showValue(k)})`);
    };
    this.run.sequence(keys.map((k) => [`producer ${p + 1}: add(${showValue(k)})`, add(k)]));
  }

  /** A consumer: takes, and finishes each item it gets when the scheduler says; stops at `undefined`. */
  async consume(consumer: Consumer, c: number): Promise<void> {
    const who = `consumer ${c + 1}`;
    for (let n = 0, handled = 0; n < consumer.takes; n++) {
      const { signal } = this.#controllers[c] as AbortController;
      const take = this.model.take(signal.aborted);
      const promise = this.queue.take({ signal });
      const record = { take, who, signal, tracked: track(promise) };
      this.#current[c] = record;
      this.#takes.push(record);
      this.run.note(`  ${who}: take() #${take.id}${signal.aborted ? ", its signal already aborted" : ""}`);
      this.views(`${who}'s take()`);
      const item = await promise.catch(() => null);
      this.run.note(`  ${who}'s take #${take.id} ${item === null ? "rejected" : `resolved with ${showValue(item)}`}`);
      this.compare(record);
      if (item === null) this.#controllers[c] = this.run.controller(`${who}'s signal`);
      else if (item === undefined) return;
      else await this.finish(who, item, consumer.outcomes[handled++ % consumer.outcomes.length] ?? "forget");
    }
  }

  /** Finishes an item: `forget` or `retry` it, then `done` it, on both sides. */
  finish(who: string, item: string, outcome: "forget" | "retry"): Promise<void> {
    return this.run.at(`${who}: ${outcome}(${showValue(item)}), done(${showValue(item)})`, () => {
      if (outcome === "forget") {
        this.queue.forget(item);
        this.model.queue.forget(item);
      } else {
        const [actual, expected] = [this.queue.retry(item), this.model.retry(item)];
        if (actual !== expected)
          this.run.fail(lifecycle.answers, `retry(${showValue(item)}) answered ${actual}, not ${expected}`);
      }
      this.queue.done(item);
      this.model.done(item);
      this.views(`done(${showValue(item)})`);
    });
  }

  /** An abort of consumer `c`'s signal, when the scheduler says. */
  abort(c: number, a: number): void {
    this.run.at(`abort consumer ${c + 1}'s signal`, () => {
      this.#controllers[c]?.abort(new Error(`abort ${a + 1} of consumer ${c + 1}`));
      const current = this.#current[c];
      if (current !== undefined) this.model.abort(current.take);
    });
  }

  /** A shutdown, when the scheduler says. */
  shutDown(label: string): void {
    this.queue.shutDown();
    this.model.shutDown();
    this.views(label);
  }

  /** A drain, when the scheduler says, and the abort of its signal if it `aborts`. */
  drain(d: number, aborts: boolean): void {
    const name = `shutDownWithDrain() #${d + 1}`;
    const controller = this.run.controller(name);
    this.run.at(name, () => {
      const promise = this.queue.shutDownWithDrain({ signal: controller.signal });
      const record: DrainRecord = { name, controller, tracked: track(promise, () => this.checkDrain(record)) };
      this.model.shutDown();
      this.#drains.push(record);
      this.views(name);
    });
    if (aborts) this.run.at(`abort drain #${d + 1}`, () => controller.abort(new Error(`abort drain #${d + 1}`)));
  }

  /**
   * Withdraws the drains that still wait once everything else settled: consumers that stopped may rightly have left
   * items queued. Each must then let go of its signal.
   */
  withdrawDrains(): void {
    for (const d of this.#drains) if (d.tracked.state === "pending") d.controller.abort(new Error("end of the run"));
  }
}

/**
 * Runs `scenario` under the scheduler `s` on a queue that `make` builds, checking it against the model of waiting
 * after every step. Throws a `LifecycleViolation` naming the first broken invariant.
 */
export async function runTakers(
  s: fc.Scheduler,
  scenario: TakersScenario,
  make: (options: { maxRetries: number }) => LifecycleQueue = (options) => new WorkQueue<string>(options),
): Promise<void> {
  const run = new Run(s);
  try {
    const it = new TakersRun(run, scenario, make);
    for (const [p, keys] of scenario.producers.entries()) it.produce(keys, p);
    scenario.consumers.forEach((consumer, c) => {
      void it.consume(consumer, c);
      for (let a = 0; a < consumer.aborts; a++) it.abort(c, a);
    });
    if (scenario.shutDown === "shutDown") run.at("shutDown()", () => it.shutDown("shutDown()"));
    const drains = scenario.shutDown === "shutDownWithDrain" ? [false, ...scenario.drains] : scenario.drains;
    for (const [d, aborts] of drains.entries()) it.drain(d, aborts);
    await s.waitIdle();
    if (!it.queue.shuttingDown) {
      run.note("▸ (end of the run) shutDown()");
      it.shutDown("the last shutDown()");
      await s.waitIdle();
    }
    await flush();
    run.check();
    it.withdrawDrains();
    await run.finish();
  } finally {
    run.close();
  }
}
