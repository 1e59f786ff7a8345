/**
 * One run of the lifecycle check (docs/spec.md §12–§14, §17.7): producers add keys, consumers take (or loop with
 * `for await`), finish and `done` items, and a shutdown, drains, aborts and steps of the clock come at moments
 * fast-check's scheduler chooses. Every call is made on the queue and on the model of the lifecycle at the same
 * moment; before every step the two must agree — views, takes and drains.
 */
import type * as fc from "fast-check";
import { type ClockModel, LifecycleModel } from "../../model/index.js";
import { showValue } from "../core/render.js";
import { flush, promised, type Tracked, track } from "../core/turns.js";
import { compareDrain, compareTake, type DrainRecord, type TakeRecord } from "./compare.js";
import { lifecycleRules as rules } from "./rules.js";
import type { Run } from "./run.js";
import type { Consumer, Features, LifecycleScenario, LifecycleSubject, Production } from "./scenario.js";

/** The views compared after every step, when the queue shows them. */
export const lifecycleViews = ["size", "inFlight", "shuttingDown", "waiting"] as const;

/** How far the clock moves at the end of a run, so that everything waiting falls due (delays are 1 to 3 ms). */
const endOfTime = 10;

/** One run: the queue and the model side by side, and the actors that call them. */
export class LifecycleRun {
  readonly model: LifecycleModel<string>;
  readonly #takes: TakeRecord[] = [];
  readonly #drains: DrainRecord[] = [];
  readonly #controllers: AbortController[];
  readonly #current: (TakeRecord | undefined)[] = [];
  /** The controller of each drain's signal. */
  readonly #drainControllers = new Map<DrainRecord, AbortController>();
  /** How many items the consumers hold: resolved with by their takes, not yet done. */
  #held = 0;
  /** Set at the end of a queue without shutdown: consumers stop at their next rejected take. */
  #ending = false;

  constructor(
    readonly run: Run,
    readonly scenario: LifecycleScenario,
    readonly queue: LifecycleSubject,
    readonly features: Features,
    readonly clock: ClockModel | undefined,
    readonly seen: Set<string>,
  ) {
    this.model = new LifecycleModel<string>({ maxRetries: scenario.maxRetries });
    this.#controllers = scenario.consumers.map((_, c) => run.controller(`consumer ${c + 1}'s signal`));
    // Takes and drains first: a take that answers wrongly also changes the views, and its rule is the sharper one.
    run.check = () => {
      this.#swallowed();
      for (const record of this.#takes) this.#fail(compareTake(record));
      for (const drain of this.#drains) this.#fail(compareDrain(drain));
      this.views("the previous step");
    };
  }

  #fail(broken: ReturnType<typeof compareTake>): void {
    if (broken !== undefined) this.run.fail(...broken);
  }

  /** Makes a call on the queue; what it throws breaks the rule that every answer is the model's. */
  #call<V>(label: string, thunk: () => V): V | undefined {
    try {
      return thunk();
    } catch (error) {
      this.run.fail(rules.answers, `${label} threw ${showValue(error)}`);
      return undefined;
    }
  }

  /**
   * [§14.5]: consumers only take, so every item in flight is held by a consumer whose take resolved with it; one
   * more in flight, after an abort, was handed to a take that its signal withdrew, and is lost.
   */
  #swallowed(): void {
    const shown: unknown = this.queue.inFlight;
    const inFlight = typeof shown === "function" ? this.#call("inFlight", () => shown.call(this.queue)) : shown;
    if (typeof inFlight !== "number" || inFlight <= this.#held) return;
    if (!this.#takes.some((record) => record.take.state === "rejected")) return;
    const held = `the consumers hold ${this.#held}`;
    this.run.fail(rules.abort, `${inFlight} items are in flight, but ${held}: an aborted take swallowed an item`);
  }

  /** Books that a take resolved with an item, which its consumer now holds. */
  readonly #hold = (tracked: Tracked<string | undefined>) => {
    if (tracked.state === "resolved" && tracked.value !== undefined) this.#held++;
  };

  /** Compares the views the queue shows with the model's. */
  views(after: string): void {
    const model = this.model.queue;
    const wrong: string[] = [];
    let swallowed = false;
    for (const view of lifecycleViews) {
      if (view === "waiting" && !this.features.time) continue;
      const shown: unknown = this.queue[view];
      const actual = typeof shown === "function" ? this.#call(view, () => shown.call(this.queue)) : shown;
      if (actual === undefined) continue;
      this.seen.add(view);
      const expected = model[view];
      if (actual === expected) continue;
      wrong.push(`${view} is ${showValue(actual)}, not ${showValue(expected)}`);
      swallowed ||= view === "inFlight" && (actual as number) > model.inFlight;
    }
    if (wrong.length === 0) return;
    // §14.5: consumers only take, so an item in flight that no take resolved with was swallowed by an aborted take.
    const aborted = this.#takes.some((record) => record.take.state === "rejected");
    this.run.fail(swallowed && aborted ? rules.abort : rules.answers, `after ${after}, ${wrong.join(", ")}`);
  }

  /** A producer: makes its calls one after the other, each when the scheduler says. */
  produce(steps: readonly Production[], p: number): void {
    const labelOf = (step: Production) =>
      step[0] === "add" ? `add(${showValue(step[1])})` : `addAfter(${showValue(step[1])}, ${step[2]})`;
    const act = (step: Production) => () => {
      const label = labelOf(step);
      if (step[0] === "add") {
        this.#call(label, () => this.queue.add(step[1]));
        this.model.add(step[1]);
      } else {
        this.#call(label, () => this.queue.addAfter?.(step[1], step[2]));
        this.model.addAfter(step[1], step[2]);
      }
      this.views(label);
    };
    this.run.sequence(steps.map((step) => [`producer ${p + 1}: ${labelOf(step)}`, act(step)]));
  }

  /** Starts a consumer. */
  consume(consumer: Consumer, c: number): void {
    if (consumer.kind === "for await") void this.#iterate(consumer, c);
    else {
      void this.#takeLoop(consumer, c);
      for (let a = 0; a < consumer.aborts; a++) this.abort(c, a);
    }
  }

  /** A `take` loop: takes, and finishes each item it gets when the scheduler says; stops at `undefined`. */
  async #takeLoop(consumer: Consumer, c: number): Promise<void> {
    const who = `consumer ${c + 1}`;
    for (let n = 0, handled = 0; n < consumer.takes; n++) {
      const { signal } = this.#controllers[c] as AbortController;
      const take = this.model.take(signal.aborted);
      const promise = promised(() => this.queue.take({ signal }));
      const record: TakeRecord = { take, who, signal, tracked: track(promise, this.#hold) };
      this.#current[c] = record;
      this.#takes.push(record);
      this.run.note(`  ${who}: take() #${take.id}${signal.aborted ? ", its signal already aborted" : ""}`);
      const item = await promise.catch(() => null);
      this.run.note(`  ${who}'s take #${take.id} ${item === null ? "rejected" : `resolved with ${showValue(item)}`}`);
      this.#fail(compareTake(record));
      this.views(`${who}'s take #${take.id}`);
      if (item === null && this.#ending) return;
      if (item === null) this.#controllers[c] = this.run.controller(`${who}'s signal`);
      else if (item === undefined) return;
      else await this.#finish(who, item, consumer.outcomes[handled++ % consumer.outcomes.length] ?? "forget");
    }
  }

  /** A `for await` loop: each step a take (§14.7); it leaves the loop early after `takes` steps. */
  async #iterate(consumer: Consumer, c: number): Promise<void> {
    const who = `consumer ${c + 1} (for await)`;
    const iterable = this.queue as Required<Pick<LifecycleSubject, typeof Symbol.asyncIterator>>;
    const iterator = this.#call("[Symbol.asyncIterator]()", () => iterable[Symbol.asyncIterator]());
    if (iterator === undefined) return;
    for (let n = 0, handled = 0; n < consumer.takes; n++) {
      const take = this.model.next();
      const promise = promised(() => iterator.next()).then((result) =>
        result.done === true ? undefined : result.value,
      );
      const record: TakeRecord = { take, who, step: true, tracked: track(promise, this.#hold) };
      this.#takes.push(record);
      this.run.note(`  ${who}: next() #${take.id}`);
      const item = await promise.catch(() => null);
      this.run.note(
        `  ${who}'s step #${take.id} ${item === null ? "rejected" : item === undefined ? "ended the loop" : `gave ${showValue(item)}`}`,
      );
      this.#fail(compareTake(record));
      this.views(`${who}'s step #${take.id}`);
      if (item === null || item === undefined) return;
      await this.#finish(who, item, consumer.outcomes[handled++ % consumer.outcomes.length] ?? "forget");
    }
    this.run.note(`  ${who} leaves the loop`);
    await promised(async () => iterator.return?.()).catch(() => {});
    this.views(`${who} left the loop`);
  }

  /** Finishes an item: `forget` or `retry` it, then `done` it, on both sides. */
  #finish(who: string, item: string, outcome: "forget" | "retry"): Promise<void> {
    return this.run.at(`${who}: ${outcome}(${showValue(item)}), done(${showValue(item)})`, () => {
      if (outcome === "forget") {
        this.#call("forget", () => this.queue.forget(item));
        this.model.queue.forget(item);
      } else {
        const [actual, expected] = [this.#call("retry", () => this.queue.retry(item)), this.model.retry(item)];
        if (actual !== expected)
          this.run.fail(rules.answers, `retry(${showValue(item)}) answered ${showValue(actual)}, not ${expected}`);
      }
      this.#call("done", () => this.queue.done(item));
      this.#held--;
      this.model.done(item);
      this.views(`done(${showValue(item)})`);
    });
  }

  /** An abort of consumer `c`'s signal, when the scheduler says. */
  abort(c: number, a: number): void {
    this.run.at(`abort consumer ${c + 1}'s signal`, () =>
      this.#abort(c, new Error(`abort ${a + 1} of consumer ${c + 1}`)),
    );
  }

  #abort(c: number, reason: Error): void {
    this.#controllers[c]?.abort(reason);
    const current = this.#current[c];
    if (current !== undefined) this.model.abort(current.take);
  }

  /** A shutdown: `shutDown` if offered, or else a drain. */
  shutDown(label: string): void {
    if (!this.features.shutDown) {
      this.drain(label, false);
      return;
    }
    this.#call(label, () => this.queue.shutDown?.());
    this.model.shutDown();
    this.views(label);
  }

  /** A drain with a fresh signal, aborted later (when the scheduler says) if `aborts`. */
  drain(name: string, aborts: boolean): void {
    const controller = this.run.controller(name);
    const drain = this.model.shutDownWithDrain(controller.signal.aborted);
    const promise = promised(() =>
      (this.queue.shutDownWithDrain as NonNullable<LifecycleSubject["shutDownWithDrain"]>)({
        signal: controller.signal,
      }),
    );
    const record: DrainRecord = { name, drain, signal: controller.signal, tracked: track(promise) };
    this.#drains.push(record);
    this.#drainControllers.set(record, controller);
    this.views(name);
    if (aborts) this.run.at(`abort ${name}`, () => this.#withdraw(record, `abort ${name}`));
  }

  #withdraw(record: DrainRecord, reason: string): void {
    this.#drainControllers.get(record)?.abort(new Error(reason));
    this.model.abortDrain(record.drain);
  }

  /** A step of the clock, on both sides. */
  advance(ms: number): void {
    this.#call(`advance(${ms})`, () => this.clock?.advance(ms));
    this.model.advance(ms);
    this.views(`advance(${ms})`);
  }

  /** Ends the run: shuts down (or withdraws the takes of a queue without shutdown), lets time run out, checks. */
  async end(s: fc.Scheduler): Promise<void> {
    await s.waitIdle();
    // What the run left behind is checked before the last shutdown settles the takes that still wait: an item an
    // aborted take swallowed shows as one in flight that no consumer holds, not as a take that shutDown answered.
    await flush();
    this.run.check();
    if (!this.model.queue.shuttingDown) {
      this.run.note("▸ (end of the run) the last shutdown");
      if (this.features.shutDown || this.features.drain) this.shutDown("the last shutDown()");
      else {
        this.#ending = true;
        for (const c of this.#controllers.keys()) this.#abort(c, new Error("end of the run"));
      }
      await s.waitIdle();
    }
    if (this.clock !== undefined && this.model.queue.waiting > 0) {
      this.run.note(`▸ (end of the run) advance(${endOfTime})`);
      this.advance(endOfTime);
      await s.waitIdle();
    }
    await flush();
    this.run.check();
    // Consumers that stopped may rightly have left items queued: the drains that still wait are withdrawn, and
    // each must then let go of its signal.
    for (const d of this.#drains) if (d.tracked.state === "pending") this.#withdraw(d, "end of the run");
  }
}
