/**
 * The named checks of time ([docs/spec.md §17](../../docs/spec.md#§17-delayed-adds), [§18.2](../../docs/spec.md#§18-backoff-and-rate-limiters)), run after every step as the others are,
 * `advance` included: each rule of delayed adds that a queue can break has a check of its own, so that a report
 * names that rule and not the catch-all "every answer equals the model's", and each detail says only what is true
 * of the queue it blames: what it answered or showed against what the rule makes it.
 */
import { type Invariant, itemOf, type StepFacts, sizeOff, wrongItem, wrongViews } from "./facts.js";
import { showAnswer, showCall, showValue } from "./render.js";

/** The item of a call that has one. */
function itemIn(f: StepFacts): unknown {
  return (f.operation as { item?: unknown }).item;
}

/** What differs in `size` and `waiting`, as a detail says it: `size is 0 (expected 1), waiting 1 (expected 0)`. */
function sizes(f: StepFacts): string {
  const { size, waiting } = f.actualViews;
  const parts = [];
  if (size !== undefined && size !== f.expectedViews.size)
    parts.push(`size is ${size} (expected ${f.expectedViews.size})`);
  if (waiting !== undefined && waiting !== f.expectedViews.waiting) {
    parts.push(`waiting is ${waiting} (expected ${f.expectedViews.waiting})`);
  }
  return parts.join(", ");
}

/** Whether the implementation shows more items waiting than the model. */
function moreWaiting(f: StepFacts): boolean {
  const { waiting } = f.actualViews;
  return waiting !== undefined && waiting > (f.expectedViews.waiting as number);
}

/** Whether the implementation shows fewer items waiting than the model. */
function fewerWaiting(f: StepFacts): boolean {
  const { waiting } = f.actualViews;
  return waiting !== undefined && waiting < (f.expectedViews.waiting as number);
}

/** The model's earliest waiting item and its due time, as a detail says it: `"a" until 1.5`. */
function earliest(f: StepFacts): string {
  const waits = [...f.model.snapshot().waiting].sort((a, b) => a[1] - b[1]);
  const [item, due] = waits[0] as readonly [unknown, number];
  return `${showValue(item)} until ${due}`;
}

/** Why `addAfter` throws, by the rule of §17.8 that applies to its arguments. */
function whyThrows(item: unknown, delayMs: unknown): string {
  if (item === undefined || item === null) return `an item that is ${showValue(item)}`;
  return typeof delayMs === "number" ? `a delay of ${showValue(delayMs)}` : "a delay that is not a number";
}

/** The timed checks, in the order they are tried, between "never handed out in flight" and FIFO. */
export const timedInvariants: readonly Invariant[] = [
  {
    id: "add-after-errors",
    name: "addAfter throws for a bad item or delay, before anything changes, and for nothing else",
    rule: "§17.8",
    check(f) {
      if (f.operation.verb !== "addAfter") return undefined;
      const { item, delayMs } = f.operation;
      if (f.expected.kind === "value") {
        if (f.actual.kind !== "error") return undefined;
        return `${showCall(f.operation)} ${showAnswer(f.actual)}, but only an item that is undefined or null, or a delay that is not a finite number, throws`;
      }
      if (f.actual.kind !== "error" || f.actual.name !== f.expected.name) {
        return `${showCall(f.operation)} answered ${showAnswer(f.actual)}, but ${whyThrows(item, delayMs)} throws a ${f.expected.name}`;
      }
      const [view] = wrongViews(f.expectedViews, f.actualViews);
      if (view === undefined) return undefined;
      return `${showCall(f.operation)} threw, but changed ${view} to ${f.actualViews[view]} (expected ${f.expectedViews[view]}): it throws before anything changes`;
    },
  },
  {
    id: "not-positive-is-add",
    name: "addAfter with a delay that is not positive is add",
    rule: "§17.1",
    check(f) {
      if (f.operation.verb !== "addAfter" || f.expected.kind !== "value") return undefined;
      if (!((f.operation.delayMs as number) <= 0) || (!moreWaiting(f) && sizeOff(f) >= 0)) return undefined;
      return `${showCall(f.operation)} must be add(${itemOf(f.operation)}), as its delay is not positive, but ${sizes(f)}`;
    },
  },
  {
    id: "queued-or-dirty-does-not-wait",
    name: "an item queued, or in flight and dirty, does not wait",
    rule: "§17.2",
    check(f) {
      const { verb } = f.operation;
      if (verb !== "addAfter" && !(verb === "retry" && f.expected.kind === "value" && f.expected.value === true)) {
        return undefined;
      }
      if ((f.before !== "queued" && f.before !== "in flight + dirty") || !moreWaiting(f)) return undefined;
      const serves = f.before === "queued" ? "its place in the queue" : "the processing its done queues";
      return `${showCall(f.operation)} made ${itemOf(f.operation)} wait (${sizes(f)}), but it was ${f.before}, so it does not wait: ${serves} serves this request`;
    },
  },
  {
    id: "backoff",
    name: "retry backs off for min(maxMs, baseMs · 2^(n−1)) after the n-th failure",
    rule: "§7.3, §18.2",
    check(f) {
      const item = itemIn(f);
      if (f.operation.verb === "retry") {
        const wait = f.backedOff.get(item);
        if (wait === undefined || wait.due !== f.model.dueOf(item) || sizeOff(f) <= 0) return undefined;
        const failures = f.model.failures(item);
        const set =
          wait.failures === failures
            ? `it backs off for ${wait.delayMs} ms`
            : `its backoff after failure ${wait.failures} set that due time, and a retry of a waiting item keeps the earlier one`;
        return `${showCall(f.operation)} at failure ${failures} queued ${showValue(item)} at once, but it waits until ${wait.due}: ${set}`;
      }
      if (f.operation.verb !== "advance") return undefined;
      // An item asked for twice while it waited is named by §17.3 (earlier-due-wins), whichever call set its due time.
      const late = f.fellDue.find(([fell, at]) => f.backedOff.get(fell)?.due === at && !f.reasked.has(fell));
      if (late !== undefined && (sizeOff(f) < 0 || moreWaiting(f))) {
        const wait = f.backedOff.get(late[0]) as { failures: number; delayMs: number };
        return `${showValue(late[0])} backed off for ${wait.delayMs} ms after failure ${wait.failures}, so it fell due at ${late[1]}, but after ${showCall(f.operation)} to ${f.model.now} ${sizes(f)}`;
      }
      if (sizeOff(f) <= 0 || f.model.waiting === 0) return undefined;
      const waits = [...f.model.snapshot().waiting].sort((a, b) => a[1] - b[1]);
      const [first, due] = waits[0] as readonly [unknown, number];
      const wait = f.backedOff.get(first);
      if (wait === undefined || wait.due !== due) return undefined;
      return `after ${showCall(f.operation)} to ${f.model.now}, ${sizes(f)}, but nothing else fell due: ${showValue(first)} backs off for ${wait.delayMs} ms after failure ${wait.failures}, until ${due}`;
    },
  },
  {
    id: "nothing-before-due",
    name: "nothing is handed out or queued before it is due",
    rule: "§17.2, §17.5, §7.3",
    check(f) {
      const wrong = wrongItem(f);
      const due = (item: unknown) => f.model.dueOf(item);
      if (wrong !== undefined && due(wrong.item) !== undefined && f.model.stateOf(wrong.item) === "absent") {
        return `get() handed out ${showValue(wrong.item)} at ${f.model.now}, but it waits until ${due(wrong.item)}`;
      }
      const { verb } = f.operation;
      if (verb === "advance") {
        if (sizeOff(f) <= 0 || f.model.waiting === 0) return undefined;
        return `after ${showCall(f.operation)} to ${f.model.now}, ${sizes(f)}, but the items still waiting are not due: ${earliest(f)} first`;
      }
      if (verb !== "addAfter" && verb !== "retry") return undefined;
      const item = itemIn(f);
      if (sizeOff(f) <= 0 || due(item) === undefined) return undefined;
      return `${showCall(f.operation)} queued ${showValue(item)} at ${f.model.now}, but it is due at ${due(item)}`;
    },
  },
  {
    id: "waiting-survives-shutdown",
    name: "items that wait when the queue shuts down still fall due",
    rule: "§17.7",
    check(f) {
      if (!f.model.shuttingDown) return undefined;
      const call = showCall(f.operation);
      if (f.operation.verb === "advance" && f.fellDue.length > 0 && sizeOff(f) < 0 && !moreWaiting(f)) {
        const fell = f.fellDue.map(([item, at]) => `${showValue(item)} at ${at}`).join(", ");
        return `${call} while shutting down passed the due times of ${fell}, but ${sizes(f)}: a wait asked for before the shutdown is added when it falls due`;
      }
      if (!fewerWaiting(f) || sizeOff(f) > 0) return undefined;
      const when = f.operation.verb === "shutDown" ? `after ${call}` : `after ${call} while shutting down`;
      return `${when}, ${sizes(f)}: the waits asked for before the shutdown are kept until they fall due`;
    },
  },
  {
    id: "waiting-never-queued",
    name: "a waiting item is never also queued, and an add ends its wait",
    rule: "§17.4, §10.6",
    check(f) {
      if (!moreWaiting(f)) return undefined;
      if (f.operation.verb !== "add" && f.operation.verb !== "addAfter" && f.operation.verb !== "retry") {
        return undefined;
      }
      const state = f.model.stateOf(itemIn(f));
      if (state === "absent") return undefined;
      return `after ${showCall(f.operation)}, ${itemOf(f.operation)} is ${state}, but ${sizes(f)}: the add ended its wait`;
    },
  },
  {
    id: "earlier-due-wins",
    name: "of two due times asked for one item, the earlier wins",
    rule: "§17.3",
    check(f) {
      const wrong = wrongItem(f);
      if (wrong !== undefined && f.expected.kind === "value" && f.model.stateOf(wrong.item) === "queued") {
        const twice = [f.expected.value, wrong.item].find((item) => f.reasked.has(item));
        if (twice === undefined) return undefined;
        return `get() handed out ${showValue(wrong.item)} before ${showValue(f.expected.value)}, but ${showValue(twice)} was asked for twice while it waited, and its earlier due time decides when it was queued`;
      }
      if (f.operation.verb !== "advance" || sizeOff(f) >= 0) {
        return undefined;
      }
      const moved = f.fellDue.find(([item]) => f.reasked.has(item));
      if (moved === undefined) return undefined;
      return `${showValue(moved[0])} was asked for twice while it waited, the earlier due time being ${moved[1]}, but ${showCall(f.operation)} to ${f.model.now} did not add it`;
    },
  },
  {
    id: "falls-due-on-advance",
    name: "an item falls due in the advance that passes its due time",
    rule: "§17.5",
    check(f) {
      if (f.operation.verb !== "advance" || f.fellDue.length === 0) return undefined;
      if (sizeOff(f) >= 0 && !moreWaiting(f)) return undefined;
      const due = f.fellDue.map(([item, at]) => `${showValue(item)} at ${at}`).join(", ");
      return `${showCall(f.operation)} moved the time to ${f.model.now}, past the due times of ${due}, but ${sizes(f)}`;
    },
  },
  {
    id: "due-order",
    name: "items fall due in the order of their due times, ties in the order the due times were set",
    rule: "§17.5",
    check(f) {
      const wrong = wrongItem(f);
      if (wrong === undefined || f.expected.kind !== "value" || f.model.stateOf(wrong.item) !== "queued") {
        return undefined;
      }
      const first = f.fellAt.get(f.expected.value);
      const second = f.fellAt.get(wrong.item);
      if (first === undefined || second === undefined || first > second) return undefined;
      const [a, b] = [showValue(f.expected.value), showValue(wrong.item)];
      if (first < second)
        return `get() handed out ${b} before ${a}, but ${a} fell due first, at ${first}, and ${b} at ${second}`;
      return `get() handed out ${b} before ${a}, but both fell due at ${first}, and ${a}'s due time was set first`;
    },
  },
];
