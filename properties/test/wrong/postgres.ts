/**
 * Deliberately wrong PostgreSQL queues (docs/spec.md §20): the reference schema with one realistic mistake in one
 * function, each found by the suite named beside it. A defect is a text edit of the migration, which the test
 * checks applied, so a change of the schema cannot silently make a defect vanish.
 */

/** One mistake: where it is, what it becomes, and the suite and rule that reject it. */
export interface PostgresDefect {
  /** What the mistake is. */
  readonly name: string;
  /** The text of the reference migration the mistake replaces. */
  readonly from: string;
  /** What it becomes. */
  readonly to: string;
  /** Further edits of the same mistake, `[from, to]`, when it takes more than one. */
  readonly more?: readonly (readonly [string, string])[];
  /**
   * Which suite rejects it: the lease suite, the gate (`checkConformance`) or the concurrent gets, whose history
   * `checkHistory` judges (docs/spec.md §20.7).
   */
  readonly suite: "leases" | "gate" | "concurrent gets";
  /** The rule the rejection names: a section of docs/spec.md, or a rule of `checkHistory`. */
  readonly rule: string;
  /**
   * The other rules the same mistake breaks, which a random search may meet first and name instead: a fencing
   * function that accepts every token fences `extend` (§20.5) as well as done, retry and forget (§20.4).
   */
  readonly alsoBreaks?: readonly string[];
}

export const postgresDefects: readonly PostgresDefect[] = [
  {
    name: "no fencing: any token is accepted",
    from: "return (p_token = r.token and r.lease = 'live') or (p_token = 0 and not r.in_flight);",
    to: "return true;",
    suite: "leases",
    rule: "§20.4",
    alsoBreaks: ["§20.5"], // an extend with a stale token extends the item's live lease
  },
  {
    name: "an expired lease's token is accepted until the item is handed out again",
    from: "return (p_token = r.token and r.lease = 'live') or (p_token = 0 and not r.in_flight);",
    to: "return (p_token = r.token and r.lease <> 'finished') or (p_token = 0 and not r.in_flight);",
    suite: "leases",
    rule: "§20.4",
  },
  {
    name: "a finished lease is accepted: retry after done queues the item again",
    from: "return (p_token = r.token and r.lease = 'live') or (p_token = 0 and not r.in_flight);",
    to: "return (p_token = r.token and r.lease <> 'expired') or (p_token = 0 and not r.in_flight);",
    suite: "leases",
    rule: "§20.4",
  },
  {
    // The storage bound of §20.9: no answer changes, the lease suite counts the rows. Every deletion of an idle
    // item's row (tidy, and the common case of done and done_many) ends its condition with this test.
    name: "rows of idle items are kept",
    from: "i.failures = 0",
    to: "i.failures = 0 and false",
    suite: "leases",
    rule: "§20.9",
  },
  {
    name: "tokens do not grow: every lease of an item has token 1",
    from: "v_token := nextval(",
    to: "v_token := 1 + 0 * nextval(",
    more: [["v_tokens := array(select nextval(", "v_tokens := array(select 1 + 0 * nextval("]], // get_many's
    suite: "leases",
    rule: "§20.2",
  },
  {
    name: "an expired lease drops its item instead of queueing it",
    from: "(p_queue, expiry.item, expiry.expires_ms);",
    to: "(p_queue, expiry.item, expiry.expires_ms) where false;",
    suite: "leases",
    rule: "§9.1",
  },
  {
    // §20.3 serves an add made while in flight by the expiry's requeue: this mistake loses that add, as an expiry
    // written "a dirty item is requeued by its done" would. (An expiry that requeues the item and clears its dirty
    // mark is the reference itself: the requeue is the one more processing the mark asks for.)
    name: "an expired lease of an item added while in flight drops it; a clean one is requeued",
    from: "select item, expires_ms into expiry from",
    to: "select item, expires_ms, dirty into expiry from",
    more: [
      [
        "(p_queue, expiry.item, expiry.expires_ms);",
        "(p_queue, expiry.item, expiry.expires_ms) where not expiry.dirty;",
      ],
    ],
    suite: "leases",
    rule: "§9.1",
  },
  {
    name: "an expired lease counts a failure",
    from: "set in_flight = false, dirty = false, lease = 'expired',",
    to: "set failures = failures + 1, in_flight = false, dirty = false, lease = 'expired',",
    suite: "leases",
    rule: "§9.3",
  },
  {
    name: "done drops the dirty mark",
    from: "if r.dirty then perform",
    to: "if false and r.dirty then perform",
    suite: "gate",
    rule: "§10.3",
  },
  {
    name: "get is not atomic: it reads the oldest item without locking it",
    from: "order by q.queued_ms, q.position limit 1 for update;",
    to: "order by q.queued_ms, q.position limit 1;",
    more: [["lock_queue(p_queue); -- one get at a time per queue", "clock(p_now); -- one get at a time per queue"]],
    suite: "concurrent gets",
    rule: "two live leases",
  },
];

/** The migration `sql` with `defect`'s edits made. */
export function applyDefect(defect: PostgresDefect, sql: string): string {
  return [[defect.from, defect.to] as const, ...(defect.more ?? [])].reduce(
    (text, [from, to]) => text.replaceAll(from, to),
    sql,
  );
}

/** The edits of `defect` whose text the migration `sql` does not hold: none, while the defect still applies. */
export function missingEdits(defect: PostgresDefect, sql: string): string[] {
  return [defect.from, ...(defect.more ?? []).map(([from]) => from)].filter((from) => !sql.includes(from));
}
