/**
 * checkHistory (properties/history/check-history.ts) on hand-written histories: a valid one passes, and each
 * rule, broken alone, is reported by name; calls whose answers were lost are not held against the queue.
 */
import { expect, test } from "vitest";
import { checkHistory, type HistoryEvent } from "../../history/check-history.js";

const add = (key: string, at: number): HistoryEvent => ({ op: "add", key, startedAt: at, endedAt: at + 1 });
const lease = (key: string, token: number, at: number, expiresAt = at + 1000): HistoryEvent => ({
  op: "lease",
  key,
  token,
  expiresAt,
  startedAt: at,
  endedAt: at + 1,
});
const call = (
  op: "done" | "retry" | "forget",
  key: string,
  token: number,
  at: number,
  outcome?: "ok" | "stale" | boolean,
): HistoryEvent => ({
  op,
  key,
  token,
  outcome,
  startedAt: at,
  endedAt: at + 1,
});
const success = (key: string, token: number, at: number): HistoryEvent[] => [
  lease(key, token, at),
  call("forget", key, token, at + 10, "ok"),
  call("done", key, token, at + 20, "ok"),
];
const rules = (events: HistoryEvent[], maxRetries = 3) =>
  checkHistory(events, { maxRetries, toleranceMs: 0 }).map((v) => v.rule);

test("a valid history: an add while in flight handled again, a failure retried, an expired lease refused", () => {
  const events = [
    add("a", 0),
    lease("a", 1, 10, 500),
    add("a", 20), // dirty
    call("retry", "a", 1, 30, true),
    call("done", "a", 1, 40, "ok"),
    ...success("a", 2, 50),
    add("b", 100),
    lease("b", 3, 110, 200), // its holder dies
    lease("b", 4, 300),
    call("done", "b", 3, 310, "stale"),
    call("forget", "b", 4, 320, "ok"),
    call("done", "b", 4, 330, "ok"),
  ];
  expect(checkHistory(events, { maxRetries: 3 })).toEqual([]);
});

test("two live leases: a second lease handed out before the first ended or expired", () => {
  expect(rules([add("a", 0), lease("a", 1, 10), ...success("a", 2, 20), call("done", "a", 1, 100, "ok")])).toContain(
    "two live leases",
  );
});

test("two live leases: a refused done ends no lease, so a lease handed out after it and before the expiry is a second", () => {
  const refused = [add("a", 0), lease("a", 1, 10, 500), call("done", "a", 1, 20, "stale"), ...success("a", 2, 30)];
  const violations = checkHistory(refused, { maxRetries: 3, toleranceMs: 0 });
  expect(violations.map((v) => [v.rule, v.message])).toEqual([
    ["two live leases", "a: token 2 was handed out at 31, while token 1 was live until 500"],
  ]);
  // A done whose answer was lost may have been accepted: it may have ended the lease.
  const lost = [add("a", 0), lease("a", 1, 10, 500), call("done", "a", 1, 20), ...success("a", 2, 30)];
  expect(rules(lost)).toEqual([]);
});

test("two live leases: a forget ends no lease, only a done or the expiry does", () => {
  const forgotten = [add("a", 0), lease("a", 1, 10, 500), call("forget", "a", 1, 20, "ok"), ...success("a", 2, 30)];
  expect(rules([...forgotten, call("done", "a", 1, 100, "stale")])).toEqual(["two live leases"]);
});

test("token reused: one token handed out twice for a key", () => {
  expect(rules([add("a", 0), ...success("a", 1, 10), ...success("a", 1, 50)])).toContain("token reused");
});

test("stale token accepted: after a later lease, or after the lease expired", () => {
  const superseded = [add("a", 0), lease("a", 1, 10, 100), ...success("a", 2, 200), call("done", "a", 1, 300, "ok")];
  expect(rules(superseded)).toEqual(["stale token accepted"]);
  const expired = [
    add("a", 0),
    lease("a", 1, 10, 100),
    call("forget", "a", 1, 400, "ok"),
    call("done", "a", 1, 410, "ok"),
  ];
  expect(rules(expired)).toEqual(["stale token accepted", "stale token accepted"]);
});

test("lost: an add that no lease handed out after it handled nor gave up, also an add while in flight", () => {
  expect(rules([add("a", 0)])).toEqual(["lost"]);
  expect(
    rules([
      add("a", 0),
      lease("a", 1, 10),
      add("a", 10), // it overlaps the get that answered the lease: that lease may serve it
      call("forget", "a", 1, 20, "ok"),
      call("done", "a", 1, 30, "ok"),
    ]),
  ).toEqual([]);
  expect(
    rules([
      add("a", 0),
      lease("a", 1, 10),
      add("a", 30),
      call("forget", "a", 1, 20, "ok"),
      call("done", "a", 1, 40, "ok"),
    ]),
  ).toEqual(["lost"]);
  expect(rules([add("a", 0), lease("a", 1, 10), call("retry", "a", 1, 20, false)], 1)).toEqual([]);
});

test("retries miscounted: a give-up before maxRetries, or a requeue at it; a lost answer stops the count", () => {
  const failing = (answers: (boolean | undefined)[]) =>
    answers.flatMap((answer, i) => [
      lease("a", i + 1, i * 10 + 1),
      call("retry", "a", i + 1, i * 10 + 2, answer),
      call("done", "a", i + 1, i * 10 + 3, "ok"),
    ]);
  expect(rules([add("a", 0), ...failing([true, true, false])])).toEqual([]);
  expect(rules([add("a", 0), ...failing([true, false])])).toEqual(["retries miscounted"]);
  expect(rules([add("a", 0), ...failing([true, true, true])])).toEqual(["lost", "retries miscounted"]);
  expect(rules([add("a", 0), ...failing([undefined, true, true])])).toEqual([]); // the first may have given up
});

test("a done whose answer was lost may have succeeded: the add is not reported lost", () => {
  const events = [add("a", 0), lease("a", 1, 10), call("forget", "a", 1, 20, "ok"), call("done", "a", 1, 30)];
  expect(checkHistory(events, { maxRetries: 3 })).toEqual([]);
});

test("each violation carries the events of the history that show it, as given", () => {
  const shown = (events: HistoryEvent[], maxRetries = 3) =>
    checkHistory(events, { maxRetries, toleranceMs: 0 }).map((v) => [v.rule, v.events.map((e) => events.indexOf(e))]);
  // two live leases: the earlier lease and the one handed out while it was live
  expect(shown([add("a", 0), lease("a", 1, 10), ...success("a", 2, 20), call("done", "a", 1, 100, "ok")])).toEqual([
    ["two live leases", [1, 2]],
    ["stale token accepted", [5, 2]],
  ]);
  // token reused: both hand-outs of the token
  expect(shown([add("a", 0), ...success("a", 1, 10), ...success("a", 1, 50)])[0]).toEqual(["token reused", [1, 4]]);
  // stale token accepted after expiry: the call and its own lease
  expect(shown([add("a", 0), lease("a", 1, 10, 100), call("forget", "a", 1, 400, "ok")])).toContainEqual([
    "stale token accepted",
    [2, 1],
  ]);
  expect(shown([add("a", 0)])).toEqual([["lost", [0]]]);
  const miscounted = [add("a", 0), lease("a", 1, 1), call("retry", "a", 1, 2, false), call("done", "a", 1, 3, "ok")];
  expect(shown(miscounted)).toEqual([["retries miscounted", [2]]]);
});
