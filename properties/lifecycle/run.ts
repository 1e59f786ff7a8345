/**
 * The shell of one scheduled run: it logs what happens, in the order fast-check's scheduler lets it happen, records
 * the first broken invariant, listens for unhandled rejections, remembers the signals handed out, and at the end
 * checks what every run must leave behind and throws a readable violation.
 */
import { getEventListeners } from "node:events";
import type * as fc from "fast-check";
import { showValue } from "../core/render.js";
import { flush } from "../core/turns.js";
import { type LifecycleRule, lifecycleRules as lifecycle } from "./rules.js";

/** Whether `value` is a promise, or like one. */
function isThenable(value: unknown): value is PromiseLike<unknown> {
  return typeof (value as PromiseLike<unknown> | undefined)?.then === "function";
}

/** A broken invariant, with everything needed to read it: what, where, and the interleaving that led there. */
export class LifecycleViolation extends Error {
  constructor(
    readonly invariant: LifecycleRule,
    readonly detail: string,
    readonly log: readonly string[],
  ) {
    super(
      [
        `${invariant.name} (docs/spec.md ${invariant.rule})`,
        `  ✗ ${detail}`,
        "  interleaving (▸ a task released by the scheduler, in its order; indented, what followed from it):",
        ...log.map((line, i) => `    ${String(i + 1).padStart(3)} ${line}`),
      ].join("\n"),
    );
    this.name = "LifecycleViolation";
  }
}

/** One run: the scheduler, the log, and the first violation. */
export class Run {
  /** What happened, in order. */
  readonly log: string[] = [];
  /** The check run before every scheduled task; the suite sets it. */
  check: () => void = () => {};
  #violation: { invariant: LifecycleRule; detail: string } | undefined;
  readonly #unhandled: unknown[] = [];
  readonly #signals: [string, AbortSignal][] = [];
  /** The actions released that answered a promise and have not settled yet: a queue whose calls are awaited. */
  readonly #busy = new Set<PromiseLike<unknown>>();
  readonly #onUnhandled = (reason: unknown) => {
    this.#unhandled.push(reason);
  };

  constructor(readonly scheduler: fc.Scheduler) {
    process.on("unhandledRejection", this.#onUnhandled);
  }

  /** Records that `invariant` broke; only the first violation counts. */
  fail(invariant: LifecycleRule, detail: string): void {
    if (this.#violation !== undefined) return;
    this.#violation = { invariant, detail };
    this.note(`  ✗ ${detail}`);
  }

  /** Whether a rule broke already. */
  get failed(): boolean {
    return this.#violation !== undefined;
  }

  /** Logs an event. */
  note(line: string): void {
    this.log.push(line);
  }

  /** A fresh controller, whose signal is checked for leftover listeners at the end. */
  controller(name: string): AbortController {
    const controller = new AbortController();
    this.#signals.push([name, controller.signal]);
    return controller;
  }

  /** Lets the scheduler decide when `action` runs: a task labelled `label`, preceded by the step check. */
  at<V>(label: string, action: () => V): Promise<Awaited<V>> {
    const released = this.scheduler.schedule(Promise.resolve(), label).then(() => this.#step(label, action));
    return released as Promise<Awaited<V>>; // a promise the action answers is followed, as `then` does
  }

  /** Like {@link Run.at} for actions that must run one after the other, as a producer's adds do. */
  sequence(steps: readonly (readonly [label: string, action: () => unknown])[]): void {
    const builders = steps.map(([label, action]) => ({ label, builder: async () => this.#step(label, action) }));
    this.scheduler.scheduleSequence(builders);
  }

  #step<V>(label: string, action: () => V): V {
    this.note(`▸ ${label}`);
    this.check();
    const result = action();
    if (isThenable(result)) {
      this.#busy.add(result);
      const settled = () => this.#busy.delete(result);
      result.then(settled, settled);
    }
    return result;
  }

  /**
   * Waits until every action released so far that answered a promise has settled, then a turn more, so that what
   * followed from them ran — at most `timeoutMs`, after which it answers `false`.
   */
  async settle(timeoutMs: number): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), timeoutMs);
    });
    try {
      while (this.#busy.size > 0) {
        const settled = await Promise.race([Promise.allSettled([...this.#busy]).then(() => true), late]);
        if (!settled) return false;
      }
      await flush();
      return true;
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * Ends the run: lets Node report unhandled rejections, checks that no signal kept a listener and no task is left,
   * stops listening, and throws the first violation, if any.
   */
  async finish(): Promise<void> {
    await flush();
    this.close();
    for (const reason of this.#unhandled) this.fail(lifecycle.unhandled, `unhandled rejection: ${showValue(reason)}`);
    for (const [name, signal] of this.#signals) {
      const left = getEventListeners(signal, "abort").length;
      if (left > 0) this.fail(lifecycle.pending, `${left} abort listener(s) left on ${name}`);
    }
    for (const task of this.scheduler.report().filter((t) => t.status === "pending")) {
      this.fail(lifecycle.pending, `the task ${task.label} was never released`);
    }
    const violation = this.#violation;
    if (violation !== undefined) throw new LifecycleViolation(violation.invariant, violation.detail, this.log);
  }

  /** Stops listening for unhandled rejections. */
  close(): void {
    process.off("unhandledRejection", this.#onUnhandled);
  }
}
