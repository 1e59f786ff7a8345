/**
 * What the lifecycle check runs on and with: the queue as it sees it (the verbs of docs/spec.md §4–§8 and
 * `take`; `shutDown`, `shutDownWithDrain`, `for await` and `addAfter` when offered), and one run's input — the
 * producers, consumers, shutdown, drains and steps of the clock whose moments fast-check's scheduler chooses.
 */
import * as fc from "fast-check";
import { maxRetries } from "../core/arbitraries.js";
import type { MaybePromise, SubjectOptions } from "../core/subject.js";

/**
 * Options of a waiting call: the `AbortSignal` that withdraws it ([docs/spec.md §13.3](../../docs/spec.md#§13-draining), [§14.5](../../docs/spec.md#§14-waiting-for-work)).
 *
 * @inline
 */
export interface LifecycleWaitOptions {
  /** The signal, when the check gives one. */
  readonly signal?: AbortSignal | undefined;
}

/**
 * What a queue must offer for {@link checkLifecycle}: the verbs of [docs/spec.md §4](../../docs/spec.md#§4)–[§8](../../docs/spec.md#§8) but `get`, and `take` ([§14](../../docs/spec.md#§14-waiting-for-work)).
 * The rest is optional and checked when offered: `shutDown` ([§12](../../docs/spec.md#§12-shutdown)), `shutDownWithDrain` ([§13](../../docs/spec.md#§13-draining)), `for await` ([§14.7](../../docs/spec.md#§14-waiting-for-work)),
 * `addAfter` ([§17](../../docs/spec.md#§17-delayed-adds), with `time`) and the views. Each call must take effect when it is made (an in-process queue); a
 * take's or a drain's promise settles when the queue says. With the check's `awaitCalls`, the calls and views may
 * answer promises instead (a queue over a database), which the check awaits.
 *
 * @example
 * ```ts
 * import type { LifecycleSubject } from "workqueue-spec/properties";
 * import { WorkQueue } from "workqueue-spec";
 *
 * const queue: LifecycleSubject = new WorkQueue<string>({ maxRetries: 3 }); // the reference queue offers it all
 * ```
 *
 * @public
 */
export interface LifecycleSubject {
  /**
   * [docs/spec.md §4](../../docs/spec.md#§4).
   *
   * @param item - One of `"a"`, `"b"`, `"c"`.
   */
  add(item: string): unknown;
  /**
   * [docs/spec.md §6](../../docs/spec.md#§6).
   *
   * @param item - An item a take resolved with.
   */
  done(item: string): unknown;
  /**
   * [docs/spec.md §7](../../docs/spec.md#§7): `true` when a requeue was requested.
   *
   * @param item - An item a take resolved with.
   */
  retry(item: string): boolean | PromiseLike<boolean>;
  /**
   * [docs/spec.md §8](../../docs/spec.md#§8).
   *
   * @param item - An item a take resolved with.
   */
  forget(item: string): unknown;
  /**
   * [docs/spec.md §14](../../docs/spec.md#§14-waiting-for-work): a promise of the next item, or of `undefined` once there is no more work.
   *
   * @param options - The signal that withdraws the take.
   */
  take(options?: LifecycleWaitOptions): PromiseLike<string | undefined>;
  /** [docs/spec.md §12.1](../../docs/spec.md#§12-shutdown). */
  shutDown?(): unknown;
  /**
   * [docs/spec.md §13](../../docs/spec.md#§13-draining): shuts down and answers a promise that resolves once nothing is queued, in flight or waiting.
   *
   * @param options - The signal that stops the wait.
   */
  shutDownWithDrain?(options?: LifecycleWaitOptions): PromiseLike<void>;
  /**
   * [docs/spec.md §17](../../docs/spec.md#§17-delayed-adds), with `time`.
   *
   * @param item - One of `"a"`, `"b"`, `"c"`.
   * @param delayMs - 1, 2 or 3.
   */
  addAfter?(item: string, delayMs: number): unknown;
  /**
   * With `awaitCalls`: a promise that resolves once none of the queue's calls is in progress — a take or a drain
   * that sleeps until woken is not — so that the check releases the next step only then: a take still making its
   * first look when the next step queues an item could otherwise be overtaken by a later one.
   */
  idle?(): PromiseLike<void>;
  /** [docs/spec.md §14.7](../../docs/spec.md#§14-waiting-for-work): `for await`. */
  [Symbol.asyncIterator]?(): AsyncIterator<string>;
  /** [docs/spec.md §9.1](../../docs/spec.md#§9-views), as a property, a getter or a method (answering a promise, with `awaitCalls`). */
  readonly size?: number | (() => number | PromiseLike<number>);
  /** [docs/spec.md §9.2](../../docs/spec.md#§9-views), likewise. */
  readonly inFlight?: number | (() => number | PromiseLike<number>);
  /** [docs/spec.md §12.2](../../docs/spec.md#§12-shutdown), likewise. */
  readonly shuttingDown?: boolean | (() => boolean | PromiseLike<boolean>);
  /** [docs/spec.md §17.6](../../docs/spec.md#§17-delayed-adds), likewise, with `time`. */
  readonly waiting?: number | (() => number | PromiseLike<number>);
}

/**
 * Makes a fresh, empty queue for one run: with `time`, on the clock it is given.
 *
 * @inline
 */
export type LifecycleFactory = (options: SubjectOptions) => MaybePromise<LifecycleSubject>;

/** The optional parts a queue offers, found on the first queue made. */
export interface Features {
  readonly shutDown: boolean;
  readonly drain: boolean;
  readonly iterate: boolean;
  readonly time: boolean;
  /** Whether takes wait, while shutting down, for the items in flight too (docs/spec.md §20.10). */
  readonly leases: boolean;
}

/** What a producer does, one step after the other. */
export type Production = readonly ["add", string] | readonly ["addAfter", string, number];

/** A consumer: how many items it takes, what it does with each, how often its signal aborts. */
export interface Consumer {
  /** `take` in a loop, or `for await`. */
  readonly kind: "take" | "for await";
  /** The most takes (steps) it makes; it stops earlier when one answers `undefined`. */
  readonly takes: number;
  /** For each item in turn (cycling): `forget` it or `retry` it, then `done` it. */
  readonly outcomes: readonly ("forget" | "retry")[];
  /** How many aborts hit its signal, each at a moment of the scheduler's choosing (a `take` loop only). */
  readonly aborts: number;
}

/** One run's input. */
export interface LifecycleScenario {
  /** The queue's `maxRetries`. */
  readonly maxRetries: number;
  /** The producers. */
  readonly producers: readonly (readonly Production[])[];
  /** The consumers. */
  readonly consumers: readonly Consumer[];
  /** How the queue is shut down before the end, if at all. */
  readonly shutDown: "at the end" | "shutDown" | "shutDownWithDrain";
  /** More drains, each `true` when its signal aborts at some moment. */
  readonly drains: readonly boolean[];
  /** Steps of the clock, in milliseconds, with `time`. */
  readonly advances: readonly number[];
}

const key = fc.constantFrom("a", "b", "c");

/** Few keys, few actors, so that takes wait side by side and every key meets every state. */
export function lifecycleScenario(features: Features): fc.Arbitrary<LifecycleScenario> {
  const production: fc.Arbitrary<Production> = features.time
    ? fc.oneof(
        key.map((k) => ["add", k] as const),
        fc.tuple(fc.constant("addAfter" as const), key, fc.integer({ min: 1, max: 3 })),
      )
    : key.map((k) => ["add", k] as const);
  const ends = features.shutDown || features.drain; // a `for await` ends only with a shutdown
  const kinds: ("take" | "for await")[] = features.iterate && ends ? ["take", "for await"] : ["take"];
  const stops = ["at the end" as const, ...(features.shutDown ? ["shutDown" as const] : [])];
  return fc.record({
    maxRetries,
    producers: fc.array(fc.array(production, { maxLength: 5 }), { minLength: 1, maxLength: 3 }),
    consumers: fc.array(
      fc.record({
        kind: fc.constantFrom(...kinds),
        takes: fc.integer({ min: 1, max: 4 }),
        outcomes: fc.array(fc.constantFrom("forget" as const, "retry" as const), { minLength: 1, maxLength: 3 }),
        aborts: fc.integer({ min: 0, max: 2 }),
      }),
      { minLength: 1, maxLength: 3 },
    ),
    shutDown: fc.constantFrom(...stops, ...(features.drain ? ["shutDownWithDrain" as const] : [])),
    drains: features.drain ? fc.array(fc.boolean(), { maxLength: 2 }) : fc.constant([]),
    advances: features.time ? fc.array(fc.integer({ min: 1, max: 3 }), { maxLength: 3 }) : fc.constant([]),
  });
}
