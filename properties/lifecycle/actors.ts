/**
 * One run of the lifecycle check (docs/spec.md §12–§14, §17.7): producers add keys, consumers take (or loop with
 * `for await`), finish and `done` items, and a shutdown, drains, aborts and steps of the clock come at moments
 * fast-check's scheduler chooses. Every call is made on the queue and on the model of the lifecycle at the same
 * moment; before every step the two must agree — views, takes and drains. A queue whose calls answer promises (a
 * queue over a database) is awaited: each step's calls are made one after the other, the model's when the queue's
 * answered, and before the next step the check waits for its takes, drains and views to reach the model's.
 */
import type * as fc from "fast-check";
import { type ClockModel, LifecycleModel } from "../../model/index.js";
import { showValue } from "../core/render.js";
import { flush, promised, type Tracked, track } from "../core/turns.js";
import { compareDrain, compareTake, type DrainRecord, type TakeRecord } from "./compare.js";
import { lifecycleRules as rules } from "./rules.js";
import type { Run } from "./run.js";
import type { Consumer, Features, LifecycleScenario, LifecycleSubject, Production } from "./scenario.js";
import { type Awaiting, drive, type Settling } from "./settle.js";
import { awaitViews, readViews, type Shown, shownView, viewDiff } from "./views.js";

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
  /** With a queue whose calls are awaited: the last step whose calls were made, for the log. */
  #last = "the first step";

  constructor(
    readonly run: Run,
    readonly scenario: LifecycleScenario,
    readonly queue: LifecycleSubject,
    readonly features: Features,
    readonly clock: ClockModel | undefined,
    readonly seen: Set<string>,
    readonly awaiting?: Awaiting | undefined,
  ) {
    this.model = new LifecycleModel<string>({ maxRetries: scenario.maxRetries, leases: features.leases });
    this.#controllers = scenario.consumers.map((_, c) => run.controller(`consumer ${c + 1}'s signal`));
    // Takes and drains first: a take that answers wrongly also changes the views, and its rule is the sharper one.
    // An awaited queue's views are read when it settled, before the scheduler releases the next step.
    run.check = () => {
      if (awaiting === undefined) this.#swallowed(shownView(this.queue, "inFlight", this.#caller));
      this.#compareCalls();
      if (awaiting === undefined) this.views("the previous step");
    };
  }

  /** Compares every take and drain with the model's. */
  #compareCalls(): void {
    for (const record of this.#takes) this.#fail(compareTake(record));
    for (const drain of this.#drains) this.#fail(compareDrain(drain));
  }

  /** Whether every take and drain stands where the model's does. */
  #callsAgree(): boolean {
    return this.#takes.every((r) => compareTake(r) === undefined) && this.#drains.every((d) => !compareDrain(d));
  }

  /** Whether a take or drain settled otherwise than the model's: it will not agree before the next step. */
  #callsSettledWrong(): boolean {
    const wrong = (record: TakeRecord | DrainRecord, broken: unknown) => record.tracked.state !== "pending" && !!broken;
    return this.#takes.some((r) => wrong(r, compareTake(r))) || this.#drains.some((d) => wrong(d, compareDrain(d)));
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
   * Makes a call on the queue, then `then` with its answer (`undefined` when it threw, which breaks the rule that
   * every answer is the model's): at once, or, for a queue whose calls are awaited, once its promise settled.
   */
  #make<V, R>(label: string, thunk: () => V | PromiseLike<V>, then: (answer: V | undefined) => R): R | Promise<R> {
    if (this.awaiting === undefined) return then(this.#call(label, thunk) as V | undefined);
    return promised(async () => thunk()).then(then, (error: unknown) => {
      this.run.fail(rules.answers, `${label} rejected with ${showValue(error)}`);
      return then(undefined);
    });
  }

  /** After a step's calls: the views compared at once, or, for a queue whose calls are awaited, once it settled. */
  #after(label: string): void {
    if (this.awaiting === undefined) this.views(label);
    else this.#last = label;
  }

  /** {@link LifecycleRun.#call}, for the views. */
  readonly #caller = (label: string, thunk: () => unknown): unknown => this.#call(label, thunk);

  /**
   * [§14.5]: consumers only take, so every item in flight is held by a consumer whose take resolved with it; one
   * more in flight, after an abort, was handed to a take that its signal withdrew, and is lost.
   */
  #swallowed(inFlight: unknown): void {
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
    this.#compareViews(after, readViews(this.queue, this.features.time, this.#caller));
  }

  /** The views of a queue whose calls are awaited; a view that rejects breaks the rule of answers. */
  #awaitViews(): Promise<Shown> {
    return awaitViews(this.queue, this.features.time, this.#caller, (view, error) =>
      this.run.fail(rules.answers, `${view} rejected with ${showValue(error)}`),
    );
  }

  /** How the views shown differ from the model's. */
  #viewDiff(shown: Shown): { wrong: string[]; swallowed: boolean } {
    return viewDiff(this.model.queue, shown, this.seen);
  }

  /** Compares the views shown with the model's. */
  #compareViews(after: string, shown: Shown): void {
    const { wrong, swallowed } = this.#viewDiff(shown);
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
      const call = () => (step[0] === "add" ? this.queue.add(step[1]) : this.queue.addAfter?.(step[1], step[2]));
      return this.#make(label, call, () => {
        if (step[0] === "add") this.model.add(step[1]);
        else this.model.addAfter(step[1], step[2]);
        this.#after(label);
      });
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
      if (this.awaiting === undefined) {
        this.#fail(compareTake(record));
        this.views(`${who}'s take #${take.id}`);
      }
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
      if (this.awaiting === undefined) {
        this.#fail(compareTake(record));
        this.views(`${who}'s step #${take.id}`);
      }
      if (item === null || item === undefined) return;
      await this.#finish(who, item, consumer.outcomes[handled++ % consumer.outcomes.length] ?? "forget");
    }
    this.run.note(`  ${who} leaves the loop`);
    await promised(async () => iterator.return?.()).catch(() => {});
    this.#after(`${who} left the loop`);
  }

  /** Finishes an item: `forget` or `retry` it, then `done` it, on both sides. */
  #finish(who: string, item: string, outcome: "forget" | "retry"): Promise<void> {
    const done = () =>
      this.#make(
        "done",
        () => this.queue.done(item),
        () => {
          this.#held--;
          this.model.done(item);
          this.#after(`done(${showValue(item)})`);
        },
      );
    // Chained, not awaited: with a queue answering at once, the three calls are one step, with nothing between them.
    return this.run.at(`${who}: ${outcome}(${showValue(item)}), done(${showValue(item)})`, () => {
      if (outcome === "forget") {
        return this.#make(
          "forget",
          () => this.queue.forget(item),
          () => {
            this.model.queue.forget(item);
            return done();
          },
        );
      }
      return this.#make(
        "retry",
        () => this.queue.retry(item),
        (actual) => {
          const expected = this.model.retry(item);
          if (actual !== expected)
            this.run.fail(rules.answers, `retry(${showValue(item)}) answered ${showValue(actual)}, not ${expected}`);
          return done();
        },
      );
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

  /** A shutdown: `shutDown` if offered, or else a drain; for a queue whose calls are awaited, a promise. */
  shutDown(label: string): unknown {
    if (!this.features.shutDown) {
      this.drain(label, false);
      return;
    }
    return this.#make(
      label,
      () => this.queue.shutDown?.(),
      () => {
        this.model.shutDown();
        this.#after(label);
      },
    );
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
    this.#after(name);
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
    this.#after(`advance(${ms})`);
  }

  /** Lets the scheduler release every task, and what they lead to, one after the other. */
  #idle(s: fc.Scheduler): Promise<void> {
    return this.awaiting === undefined ? s.waitIdle() : drive(s, this.#settling, this.awaiting);
  }

  /** The run, as settling an awaited queue reads it. */
  get #settling(): Settling {
    return {
      run: this.run,
      queue: this.queue,
      last: () => this.#last,
      callsSettled: () => this.#callsAgree() || this.#callsSettledWrong(),
      brokenCalls: () => [...this.#takes.map(compareTake), ...this.#drains.map(compareDrain)].filter((b) => !!b),
      awaitViews: () => this.#awaitViews(),
      viewsAgree: (shown) => this.#viewDiff(shown).wrong.length === 0,
      compare: (shown, broken) => {
        this.#swallowed(shown.inFlight);
        for (const b of broken) this.#fail(b);
        this.#compareCalls();
        this.#compareViews(this.#last, shown);
      },
    };
  }

  /** Ends the run: shuts down (or withdraws the takes of a queue without shutdown), lets time run out, checks. */
  async end(s: fc.Scheduler): Promise<void> {
    await this.#idle(s);
    // What the run left behind is checked before the last shutdown settles the takes that still wait: an item an
    // aborted take swallowed shows as one in flight that no consumer holds, not as a take that shutDown answered.
    // (An awaited queue was checked when it settled.)
    await flush();
    if (this.awaiting === undefined) this.run.check();
    if (!this.model.queue.shuttingDown) {
      this.run.note("▸ (end of the run) the last shutdown");
      if (this.features.shutDown || this.features.drain) {
        const shut = this.shutDown("the last shutDown()");
        if (shut !== undefined) await shut;
      } else {
        this.#ending = true;
        for (const c of this.#controllers.keys()) this.#abort(c, new Error("end of the run"));
      }
      await this.#idle(s);
    }
    if (this.clock !== undefined && this.model.queue.waiting > 0) {
      this.run.note(`▸ (end of the run) advance(${endOfTime})`);
      this.advance(endOfTime);
      await this.#idle(s);
    }
    await flush();
    if (this.awaiting === undefined) this.run.check();
    // Consumers that stopped may rightly have left items queued: the drains that still wait are withdrawn, and
    // each must then let go of its signal.
    for (const d of this.#drains) if (d.tracked.state === "pending") this.#withdraw(d, "end of the run");
  }
}
