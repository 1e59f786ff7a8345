/**
 * A checker of histories of a distributed keyed work queue with leases (docs/spec.md §20.7), for any
 * implementation: each process logs its calls and answers with their times, and the checker says whether some
 * rule was broken, naming it and the events. It is sound: where calls overlap in real time, it reports only what no
 * order of them could explain (times are compared with a tolerance, `toleranceMs`, for clocks read at different
 * moments of one call).
 */

/**
 * One logged call: `startedAt` before it was made, `endedAt` once it answered (absent when its process died first).
 *
 * @example
 * ```ts
 * import { checkHistory, type HistoryEvent } from "workqueue-spec/properties";
 *
 * const events: HistoryEvent[] = [{ op: "add", key: "a", startedAt: 0, endedAt: 1 }];
 * console.log(checkHistory(events, { maxRetries: 3 })); // [] when no rule was broken
 * ```
 *
 * @public
 */
export type HistoryEvent = HistoryCall &
  (
    | {
        /** `add(key)`. */
        readonly op: "add";
        /** The key. */
        readonly key: string;
        /** Before the call, in milliseconds. */
        readonly startedAt: number;
        /** After its answer, if it answered. */
        readonly endedAt?: number | undefined;
      }
    | {
        /** A `get` or `take` that answered a lease. */
        readonly op: "lease";
        /** The leased key. */
        readonly key: string;
        /** The lease's token. */
        readonly token: number;
        /** The lease's expiry, on the same clock as the other times. */
        readonly expiresAt: number;
        /** Before the call. */
        readonly startedAt: number;
        /** After its answer. */
        readonly endedAt: number;
      }
    | {
        /** A fenced call with the lease `token`. */
        readonly op: "done" | "retry" | "forget";
        /** The key. */
        readonly key: string;
        /** The lease's token. */
        readonly token: number;
        /** `"stale"` when refused (`StaleLeaseError`), `true`/`false` for what `retry` answered, `"ok"` otherwise. */
        readonly outcome?: "ok" | "stale" | boolean | undefined;
        /** Before the call. */
        readonly startedAt: number;
        /** After its answer, if it answered. */
        readonly endedAt?: number | undefined;
      }
  );

/**
 * What every logged call may also say: who made it.
 *
 * @inline
 */
export interface HistoryCall {
  /** The process, host or worker that made the call: a lane of its own in `historyTimeline`. */
  readonly process?: string | undefined;
}

/**
 * A broken rule and the events that show it.
 *
 * @inline
 */
export interface HistoryViolation {
  /** The rule: "two live leases", "token reused", "stale token accepted", "lost", "retries miscounted". */
  readonly rule: string;
  /** What happened, in words. */
  readonly message: string;
  /** The events of the history that show it, as given to `checkHistory`. */
  readonly events: readonly HistoryEvent[];
}

/**
 * Checks a history (docs/spec.md §20.7): never two live leases on one key; no token handed out twice for a key; no
 * stale token accepted; every add handled to completion (a `done` after `forget`) or given up (`retry` answered
 * `false`) by a lease handed out after it started — a call whose process died before logging its answer may
 * have answered anything; and, while no retry's answer was lost, `retry` gives up exactly
 * at `maxRetries` failures counted since the last `forget` (an expiry counts none, §20.3).
 *
 * @param events - Every process's events, in any order.
 * @param options - `maxRetries` of the queue, and the tolerance of times read by different processes.
 * @returns The violations, none when the history is consistent with the rules.
 * @public
 * @example
 * ```ts
 * const violations = checkHistory(
 *   [
 *     { op: "add", key: "a", startedAt: 0, endedAt: 1 },
 *     { op: "lease", key: "a", token: 1, expiresAt: 1000, startedAt: 2, endedAt: 3 },
 *     { op: "forget", key: "a", token: 1, outcome: "ok", startedAt: 4, endedAt: 5 },
 *     { op: "done", key: "a", token: 1, outcome: "ok", startedAt: 6, endedAt: 7 },
 *   ],
 *   { maxRetries: 3 },
 * ); // []
 * ```
 */
export function checkHistory(
  events: readonly HistoryEvent[],
  options: { readonly maxRetries: number; readonly toleranceMs?: number },
): HistoryViolation[] {
  const tolerance = options.toleranceMs ?? 50;
  const keys = [...new Set(events.map((e) => e.key))];
  return keys.flatMap((key) => {
    const log = keyLog(key, events);
    return [
      ...leaseViolations(log, tolerance),
      ...staleAccepted(log, tolerance),
      ...lostAdds(log, tolerance),
      ...retryCount(key, log.fenced, options.maxRetries),
    ];
  });
}

/** The events of one key, by kind. */
interface KeyLog {
  readonly key: string;
  readonly adds: readonly Extract<HistoryEvent, { op: "add" }>[];
  /** Its leases, in token order. */
  readonly leases: readonly Extract<HistoryEvent, { op: "lease" }>[];
  /** Its calls fenced by a lease's token: `done`, `retry`, `forget`. */
  readonly fenced: readonly Extract<HistoryEvent, { op: "done" | "retry" | "forget" }>[];
}

/** The events of `key` among `events`, by kind. */
function keyLog(key: string, events: readonly HistoryEvent[]): KeyLog {
  const mine = events.filter((e) => e.key === key);
  return {
    key,
    adds: mine.flatMap((e) => (e.op === "add" ? [e] : [])),
    leases: mine.flatMap((e) => (e.op === "lease" ? [e] : [])).sort((a, b) => a.token - b.token),
    fenced: mine.flatMap((e) => (e.op === "lease" || e.op === "add" ? [] : [e])),
  };
}

/**
 * A token handed out twice, and a lease handed out while the one before it was live: until the start of its first
 * `done` that was not refused, or its expiry, whichever came first.
 */
function leaseViolations({ key, leases, fenced }: KeyLog, tolerance: number): HistoryViolation[] {
  const violations: HistoryViolation[] = [];
  // A lease ends at its first done that may have been accepted: a refused one (stale) ended nothing.
  const finishOf = (token: number) =>
    Math.min(
      ...fenced.filter((e) => e.token === token && e.op === "done" && e.outcome !== "stale").map((e) => e.startedAt),
    );
  for (const [i, lease] of leases.entries()) {
    const previous = leases[i - 1];
    if (previous?.token === lease.token) {
      violations.push({
        rule: "token reused",
        message: `${key}: token ${lease.token} was handed out twice`,
        events: [previous, lease],
      });
    }
    if (previous === undefined || previous.token === lease.token) continue;
    const ended = Math.min(finishOf(previous.token), previous.expiresAt);
    if (lease.endedAt + tolerance < ended) {
      violations.push({
        rule: "two live leases",
        message: `${key}: token ${lease.token} was handed out at ${lease.endedAt}, while token ${previous.token} was live until ${ended}`,
        events: [previous, lease],
      });
    }
  }
  return violations;
}

/** Fenced calls accepted after a later lease was handed out, or after their own lease expired. */
function staleAccepted({ key, leases, fenced }: KeyLog, tolerance: number): HistoryViolation[] {
  const violations: HistoryViolation[] = [];
  for (const call of fenced) {
    if (call.outcome === "stale" || call.outcome === undefined) continue;
    const lease = leases.find((l) => l.token === call.token);
    const later = leases.find((l) => l.token > call.token && l.endedAt + tolerance < call.startedAt);
    const expired = lease !== undefined && lease.expiresAt + tolerance < call.startedAt;
    if (later !== undefined || expired) {
      violations.push({
        rule: "stale token accepted",
        message: `${key}: ${call.op} with token ${call.token} at ${call.startedAt} was accepted, ${later ? `after token ${later.token} was handed out` : `after its lease expired at ${lease?.expiresAt}`}`,
        events: [call, later ?? (lease as HistoryEvent)], // without a later lease, its own expired: it is known
      });
    }
  }
  return violations;
}

/**
 * Adds that no lease handed out after they started handled to completion (a `done` after `forget`) or gave up
 * (`retry` answered `false`), counting a call that may have answered so.
 */
function lostAdds({ key, adds, leases, fenced }: KeyLog, tolerance: number): HistoryViolation[] {
  const handledBy = (token: number) =>
    fenced.some(
      (e) =>
        e.token === token &&
        ((e.op === "done" && maybe(e, "ok") && forgotten(fenced, token)) || (e.op === "retry" && maybe(e, false))),
    );
  return adds
    .filter((add) => !leases.some((l) => l.endedAt > add.startedAt - tolerance && handledBy(l.token)))
    .map((add) => ({
      rule: "lost",
      message: `${key}: the add at ${add.startedAt} was never handled nor given up`,
      events: [add],
    }));
}

/** Whether `call` answered `outcome`, or may have: its process died before it logged the answer. */
function maybe(call: HistoryEvent, outcome: "ok" | boolean): boolean {
  return !("outcome" in call) || call.outcome === undefined || call.outcome === outcome;
}

/** Whether the lease `token` reset the failures (success), or may have, before its `done`. */
function forgotten(fenced: readonly HistoryEvent[], token: number): boolean {
  return fenced.some((e) => e.op === "forget" && e.token === token && maybe(e, "ok"));
}

/** §10.4 across leases: in token order, accepted retries count up and accepted forgets reset; stops at a lost answer. */
function retryCount(key: string, fenced: readonly HistoryEvent[], maxRetries: number): HistoryViolation[] {
  const calls = fenced
    .flatMap((e) => (e.op === "retry" || e.op === "forget" ? [e] : []))
    .sort((a, b) => a.token - b.token || a.startedAt - b.startedAt);
  let failures = 0;
  for (const call of calls) {
    if (call.outcome === undefined) return []; // its process died: whether it counted is unknown from here on
    if (call.outcome === "stale") continue;
    if (call.op === "forget") {
      failures = 0;
      continue;
    }
    failures += 1;
    const expected = failures < maxRetries;
    if (call.outcome !== expected) {
      return [
        {
          rule: "retries miscounted",
          message: `${key}: retry number ${failures} answered ${String(call.outcome)}`,
          events: [call],
        },
      ];
    }
  }
  return [];
}
