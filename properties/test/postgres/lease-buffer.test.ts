/**
 * The buffer of prefetched leases (docs/spec.md §20.18) on its own, without a database: over a queue of items in an
 * array, on a time of the test's own, it hands leases on in the queue's order and in the order the calls were
 * made, fills in one statement for the calls waiting and `size` more, and gives leases back — a named item's with
 * every one after it, all once the oldest is no longer fresh, all at `releaseAll` — each to its place.
 */
import { expect, test } from "vitest";
import { type BufferSource, LeaseBuffer, type Prefetched } from "../../../src/postgres/prefetch.js";

/** A lease of the fake queue. */
interface Fake extends Prefetched {
  readonly place: number;
}

/** More fills than any test of this file sends. */
const statementsAtMost = 20;

/**
 * A queue of `items` behind a buffer of `size`: `fetch` leases its heads, fresh for `freshFor` from `now`; `release`
 * puts each lease back at its place. It logs every statement, every schedule and every `filled`. A fetch answers
 * once `state.held` has resolved, the one after {@link statementsAtMost} fails and the later ones never answer;
 * `state.onNow` runs whenever the buffer reads the time.
 */
function fakeQueue(items: string[], size: number, freshFor = 50) {
  const queued: Fake[] = items.map((item, place) => ({ item, place, freshUntil: 0 }));
  const log: string[] = [];
  const timers: { at: number; fire: () => void; cancelled: boolean }[] = [];
  const state = { now: 0, failFetch: 0, failRelease: false, held: Promise.resolve(), onNow: () => {} };
  const source: BufferSource<Fake> = {
    async fetch(verb, count) {
      log.push(`fetch ${verb} ${count}`);
      // No test sends more: a fill that never ends fails its calls once, then waits here for ever, so that its test
      // fails at once instead of starving the event loop.
      const sent = log.filter((line) => line.startsWith("fetch")).length;
      if (sent === statementsAtMost + 1) throw new Error(`more than ${statementsAtMost} fills`);
      if (sent > statementsAtMost) await new Promise(() => {});
      await state.held;
      if (state.failFetch > 0) {
        state.failFetch -= 1;
        throw new Error(`${verb} failed`);
      }
      return queued.splice(0, count).map((lease) => ({ ...lease, freshUntil: state.now + freshFor }));
    },
    async direct(verb, count) {
      log.push(`direct ${verb} ${count}`);
      await state.held;
      if (state.failFetch > 0) {
        state.failFetch -= 1;
        throw new Error(`${verb} failed`);
      }
      return queued.splice(0, count).map((lease) => ({ ...lease, freshUntil: state.now }));
    },
    async release(leases) {
      log.push(`release ${leases.map((lease) => lease.item).join(",")}`);
      await Promise.resolve();
      if (state.failRelease) throw new Error("release failed");
      queued.push(...leases);
      queued.sort((a, b) => a.place - b.place);
    },
    now: () => {
      state.onNow();
      return state.now;
    },
    schedule(at, fire) {
      const timer = {
        at,
        fire: () => {
          timer.cancelled = true; // fired: no longer set
          fire();
        },
        cancelled: false,
      };
      timers.push(timer);
      return () => {
        timer.cancelled = true;
      };
    },
    filled: () => log.push("filled"),
  };
  const buffer = new LeaseBuffer(size, source);
  /** The items queued, in order. */
  const queue = () => queued.map((lease) => lease.item);
  /** The timers set and neither cancelled nor fired, by when they fire. */
  const armed = () => timers.filter((timer) => !timer.cancelled);
  return { buffer, log, state, queue, armed };
}

const itemOf = (lease: Fake | undefined) => lease?.item;

/** Lets what a fill does after answering its calls (the timer, `filled`) happen. */
const idle = () => new Promise((resolve) => setTimeout(resolve, 0));

/** The item of the lease `buffer.next(verb)` answers, once the fill that served it, if any, ended. */
async function handed(buffer: LeaseBuffer<Fake>, verb: "get" | "take"): Promise<string | undefined> {
  const lease = await buffer.next(verb);
  await idle();
  return lease?.item;
}

test("a get leases its head and size more in one statement; the next calls are served from the buffer in the queue's order, a hand-on that leaves half of size or fewer refilling it in the background", async () => {
  const { buffer, log, queue } = fakeQueue(["a", "b", "c", "d"], 2);
  expect(await handed(buffer, "get")).toBe("a");
  expect([buffer.count, buffer.has("b"), buffer.has("c"), buffer.has("a"), queue()]).toEqual([
    2,
    true,
    true,
    false,
    ["d"],
  ]);
  expect(await handed(buffer, "take")).toBe("b");
  expect(await handed(buffer, "get")).toBe("c");
  // b left 1 of 2: a refill of 1 buffered d; c left 1 again: a refill found nothing, and refills stop
  expect(log).toEqual(["fetch get 3", "filled", "fetch take 1", "filled", "fetch get 1", "filled"]);
  expect(await handed(buffer, "take")).toBe("d");
  expect(await handed(buffer, "get")).toBeUndefined();
  // the get's own fill, which found nothing: not filled
  expect(log).toEqual(["fetch get 3", "filled", "fetch take 1", "filled", "fetch get 1", "filled", "fetch get 3"]);
});

test("calls made while a fill runs wait for it and are answered in the order they were made; those beyond what is queued get undefined", async () => {
  const { buffer, log } = fakeQueue(["a", "b"], 1);
  const answers = await Promise.all([buffer.next("get"), buffer.next("take"), buffer.next("get")]);
  expect(answers.map(itemOf)).toEqual(["a", "b", undefined]);
  expect(log).toEqual(["fetch get 4"]);
  expect(buffer.count).toBe(0);
});

test("a call that finds the head stale waits for a fill, and a call made meanwhile waits with it: both served in order by one statement", async () => {
  const { buffer, log, state } = fakeQueue(["a", "b", "c", "d", "e"], 2);
  await handed(buffer, "get"); // a; b and c buffered
  state.now = 100; // b is no longer fresh: the next call fills
  const first = buffer.next("get");
  const second = buffer.next("get"); // the fill runs: this one waits for it
  expect([itemOf(await first), itemOf(await second)]).toEqual(["b", "c"]);
  await idle();
  expect(log).toEqual(["fetch get 3", "filled", "release b,c", "fetch get 4", "filled"]);
});

test("a lease is handed on while now is at most its freshUntil; after, it goes back with every lease after it, to its place, and is leased anew", async () => {
  const { buffer, log, state, queue } = fakeQueue(["a", "b", "c", "d"], 2);
  await handed(buffer, "get");
  state.now = 50;
  expect(await handed(buffer, "get")).toBe("b"); // at freshUntil: fresh
  state.now = 51;
  expect(await handed(buffer, "get")).toBe("c"); // c went back to its place and was leased again
  // b left 1 of 2: a refill buffered d; then c, stale, went back with d after it
  expect(log).toEqual(["fetch get 3", "filled", "fetch get 1", "filled", "release c,d", "fetch get 3", "filled"]);
  expect(queue()).toEqual([]);
  expect(buffer.count).toBe(1); // d
});

test("around gives back the lease of a named item with every one after it, to their places, then runs its statement", async () => {
  const { buffer, log, queue } = fakeQueue(["a", "b", "c", "d", "e"], 3);
  await handed(buffer, "get"); // b, c, d buffered
  expect(await buffer.around(["c"], async () => "ran")).toBe("ran");
  expect(log).toEqual(["fetch get 4", "filled", "release c,d"]);
  expect([buffer.count, buffer.has("b"), buffer.has("c"), buffer.has("d"), queue()]).toEqual([
    1,
    true,
    false,
    false,
    ["c", "d", "e"],
  ]);
});

test("around of items that are not buffered runs its statement without a give-back", async () => {
  const { buffer, log } = fakeQueue(["a", "b", "c"], 2);
  await handed(buffer, "get");
  expect(await buffer.around(["a", "z"], async () => 7)).toBe(7);
  expect(log).toEqual(["fetch get 3", "filled"]);
  expect(buffer.count).toBe(2);
});

test("around waits for a fill that runs, and gives back what it buffered before the statement", async () => {
  const { buffer, log } = fakeQueue(["a", "b", "c"], 2);
  const got = buffer.next("get");
  const ran = buffer.around(["b"], async () => {
    log.push("statement");
    return buffer.has("b");
  });
  expect([itemOf(await got), await ran]).toEqual(["a", false]);
  expect(log).toEqual(["fetch get 3", "filled", "release b,c", "statement"]);
});

test("shared runs its statement after the leases no longer fresh went back, and leaves fresh ones buffered", async () => {
  const { buffer, log, state } = fakeQueue(["a", "b", "c"], 2);
  await handed(buffer, "get");
  expect(await buffer.shared(async () => "first")).toBe("first");
  expect(buffer.count).toBe(2);
  state.now = 51;
  expect(await buffer.shared(async () => buffer.count)).toBe(0);
  expect(log).toEqual(["fetch get 3", "filled", "release b,c"]);
});

test("freshen gives back nothing while the head is fresh, and nothing from an empty buffer", async () => {
  const { buffer, log, state } = fakeQueue(["a", "b"], 1);
  await buffer.freshen();
  await handed(buffer, "get");
  await buffer.freshen();
  expect(buffer.count).toBe(1);
  state.now = 51;
  await buffer.freshen();
  expect(buffer.count).toBe(0);
  expect(log).toEqual(["fetch get 2", "filled", "release b"]);
});

test("releaseAll gives every buffered lease back, to its place, and cancels the timer", async () => {
  const { buffer, log, queue, armed } = fakeQueue(["a", "b", "c", "d"], 2);
  await handed(buffer, "get");
  expect(armed().map((timer) => timer.at)).toEqual([50]);
  await buffer.releaseAll();
  expect([buffer.count, queue(), armed()]).toEqual([0, ["b", "c", "d"], []]);
  await buffer.releaseAll(); // nothing buffered: no statement
  expect(log).toEqual(["fetch get 3", "filled", "release b,c"]);
});

test("the timer is set for when the head stops being fresh; when it fires, the stale leases go back", async () => {
  const { buffer, log, state, queue, armed } = fakeQueue(["a", "b", "c"], 2);
  await handed(buffer, "get");
  const [timer] = armed();
  expect(timer?.at).toBe(50);
  state.now = 50;
  timer?.fire(); // early or on time: the head is fresh, the timer is set again
  await new Promise((resolve) => setTimeout(resolve, 0));
  expect([buffer.count, armed().map((each) => each.at)]).toEqual([2, [50]]);
  state.now = 51;
  armed()[0]?.fire();
  await new Promise((resolve) => setTimeout(resolve, 0));
  expect([buffer.count, queue(), armed()]).toEqual([0, ["b", "c"], []]);
  expect(log).toEqual(["fetch get 3", "filled", "release b,c"]);
});

test("a give-back that fails is not reported: the leases have left the buffer all the same", async () => {
  const { buffer, log, state } = fakeQueue(["a", "b"], 1);
  await handed(buffer, "get");
  state.failRelease = true;
  await buffer.releaseAll();
  expect(buffer.count).toBe(0);
  expect(log).toEqual(["fetch get 2", "filled", "release b"]);
});

test("a fill that fails rejects the waiting calls of its verb with its error, and the next fill serves the others in order", async () => {
  const { buffer, log, state } = fakeQueue(["a", "b"], 1);
  state.failFetch = 1;
  const calls = [buffer.next("get"), buffer.next("take"), buffer.next("get"), buffer.next("take")];
  const settled = await Promise.allSettled(calls);
  expect(
    settled.map((each) => (each.status === "fulfilled" ? itemOf(each.value) : (each.reason as Error).message)),
  ).toEqual(["get failed", "a", "get failed", "b"]);
  expect(log).toEqual(["fetch get 5", "fetch take 3"]);
});

test("filled is told once a fill leaves leases in the buffer, and only then", async () => {
  const { buffer, log } = fakeQueue(["a", "b"], 1);
  await Promise.all([buffer.next("get"), buffer.next("get")]);
  expect(log).toEqual(["fetch get 3"]); // both served: nothing left
  await handed(buffer, "get");
  expect(log).toEqual(["fetch get 3", "fetch get 2"]);
});

test("around of several items, one of them buffered, gives back that one's lease and every one after it, then runs", async () => {
  const { buffer, log, queue } = fakeQueue(["a", "b", "c", "d"], 3);
  await handed(buffer, "get"); // b, c, d buffered
  expect(await buffer.around(["z", "c"], async () => "ran")).toBe("ran");
  expect([buffer.count, queue()]).toEqual([1, ["c", "d"]]);
  expect(log).toEqual(["fetch get 4", "filled", "release c,d"]);
});

test("statements of the object run beside each other: a shared statement does not wait for another while the buffer is fresh", async () => {
  const { buffer } = fakeQueue(["a", "b"], 1);
  await handed(buffer, "get"); // b buffered, fresh
  let finish: () => void = () => {};
  const first = buffer.shared(() => new Promise<string>((resolve) => (finish = () => resolve("first"))));
  await idle(); // the first statement runs
  const second = buffer.shared(async () => "second");
  expect(await Promise.race([second, idle().then(() => "waited")])).toBe("second");
  finish();
  expect(await first).toBe("first");
});

test("a call made as a fill ends is served from what the fill buffered, and the buffer keeps serving at once after", async () => {
  const { buffer, log } = fakeQueue(["a", "b", "c", "d"], 3);
  expect(itemOf(await buffer.next("get"))).toBe("a");
  expect(itemOf(await buffer.next("get"))).toBe("b"); // made before the fill that served a had ended
  await idle();
  const next = await Promise.race([buffer.next("get"), idle().then(() => "still waiting")]);
  expect(itemOf(next as Fake)).toBe("c");
  await idle();
  expect(log).toEqual(["fetch get 4", "filled", "fetch get 2", "filled"]); // c left 1 of 3: a refill, which found nothing
});

test("around waiting for its turn while a fill buffers one of its items gives that lease back first, and runs its statement once", async () => {
  const { buffer, log } = fakeQueue(["a", "b", "c"], 2);
  const got = buffer.next("get"); // the fill is sent: b and c are not buffered yet
  let runs = 0;
  const ran = buffer.around(["b"], async () => {
    runs += 1;
    log.push("statement");
    return buffer.has("b");
  });
  expect([itemOf(await got), await ran, runs]).toEqual(["a", false, 1]);
  expect(log).toEqual(["fetch get 3", "filled", "release b,c", "statement"]);
});

test("around of an item that is not buffered runs beside a shared statement that runs", async () => {
  const { buffer } = fakeQueue(["a", "b"], 1);
  await handed(buffer, "get"); // b buffered, fresh
  let finish: () => void = () => {};
  const first = buffer.shared(() => new Promise<string>((resolve) => (finish = () => resolve("first"))));
  await idle(); // the first statement runs
  const second = buffer.around(["a"], async () => "second");
  expect(await Promise.race([second, idle().then(() => "waited")])).toBe("second");
  finish();
  expect(await first).toBe("first");
});

test("calls made while a fill's statement runs, beyond the leases it brought, wait for the next statement of the fill and are answered in order", async () => {
  const { buffer, log, state } = fakeQueue(["a", "b", "c", "d", "e"], 1);
  let answer: () => void = () => {};
  state.held = new Promise((resolve) => (answer = resolve));
  const first = buffer.next("get"); // the fill asks for this call and one more
  await idle(); // its statement is sent
  const later = [buffer.next("take"), buffer.next("get"), buffer.next("get")];
  answer(); // a and b: the first two calls; the statement brought all it asked for, so more is queued
  expect((await Promise.all([first, ...later])).map(itemOf)).toEqual(["a", "b", "c", "d"]);
  await idle();
  expect(log).toEqual(["fetch get 2", "fetch get 3", "filled"]);
  expect([buffer.count, buffer.has("e")]).toEqual([1, true]);
});

test("a call made while a fill's leases are being handed to the calls waiting for it waits behind them: the calls are answered in the order they were made", async () => {
  const { buffer, log, state } = fakeQueue(["a", "b", "c"], 1);
  let answer: () => void = () => {};
  state.held = new Promise((resolve) => (answer = resolve));
  const first = buffer.next("get");
  await idle(); // its statement is sent
  let second: Promise<Fake | undefined> | undefined;
  // the fill reads the time once its leases are in (to give back a head gone stale): the next call comes then
  state.onNow = () => {
    state.onNow = () => {};
    queueMicrotask(() => (second = buffer.next("get")));
  };
  answer();
  expect(itemOf(await first)).toBe("a");
  expect(itemOf(await second)).toBe("b");
  await idle();
  expect(log).toEqual(["fetch get 2"]);
});

test("hand-ons while a refill runs start no other refill: the buffer is served from meanwhile, and the refill is its only statement", async () => {
  const { buffer, log, state } = fakeQueue(["a", "b", "c", "d", "e", "f", "g", "h"], 4);
  expect(await handed(buffer, "get")).toBe("a"); // b, c, d, e buffered
  expect(await handed(buffer, "get")).toBe("b");
  let answer: () => void = () => {};
  state.held = new Promise((resolve) => (answer = resolve));
  expect(await handed(buffer, "get")).toBe("c"); // leaves two: a refill of two is sent
  expect(await handed(buffer, "take")).toBe("d"); // the refill runs: served from the buffer, no other refill
  expect(await handed(buffer, "get")).toBe("e");
  answer();
  await idle();
  expect(log).toEqual(["fetch get 5", "filled", "fetch get 2", "filled"]);
  expect([buffer.count, buffer.has("f"), buffer.has("g")]).toEqual([2, true, true]);
});

test("a refill that fails rejects nobody: a call that came meanwhile, to the empty buffer, is served by a statement of its own", async () => {
  const { buffer, log, state } = fakeQueue(["a", "b", "c", "d", "e", "f"], 2);
  expect(await handed(buffer, "get")).toBe("a"); // b and c buffered
  let answer: () => void = () => {};
  state.held = new Promise((resolve) => (answer = resolve));
  state.failFetch = 1;
  expect(await handed(buffer, "get")).toBe("b"); // leaves one: a refill of one is sent, and fails
  expect(await handed(buffer, "get")).toBe("c");
  const waiting = buffer.next("take"); // the buffer is empty: waits for the refill
  answer();
  expect(itemOf(await waiting)).toBe("d"); // its own statement: d, e and f
  await idle();
  expect(log).toEqual(["fetch get 3", "filled", "fetch get 1", "fetch take 3", "filled"]);
});

test("a lease is handed on at once while now is at most its freshUntil: at freshUntil, with no refill due, no statement is sent", async () => {
  const { buffer, log, state } = fakeQueue(["a", "b"], 2);
  expect(await handed(buffer, "get")).toBe("a"); // b buffered; the fill brought fewer than it asked for: no refill
  state.now = 50; // b's freshUntil
  expect(await handed(buffer, "get")).toBe("b");
  expect(log).toEqual(["fetch get 3", "filled"]);
});

test("a call after an empty look that finds the buffer empty leases for the calls waiting alone, in one direct statement, and buffers nothing; the next call that finds it empty fills it", async () => {
  const { buffer, log, state, queue } = fakeQueue(["a", "b", "c", "d", "e"], 2);
  let release = () => {};
  state.held = new Promise<void>((resolve) => {
    release = resolve;
  });
  const woken = buffer.next("take", true);
  // made while the direct statement runs, after an empty look or not: they wait for the next round, a fill
  const beside = buffer.next("get", true);
  const later = buffer.next("get");
  release();
  expect([itemOf(await woken), itemOf(await beside), itemOf(await later)]).toEqual(["a", "b", "c"]);
  await idle();
  expect(log).toEqual(["direct take 1", "fetch get 4", "filled"]);
  expect([buffer.count, queue()]).toEqual([2, []]);
  // with leases buffered, a call after an empty look is served from the buffer
  expect(await handed(buffer, "take")).toBe("d");
  expect(log).toEqual(["direct take 1", "fetch get 4", "filled", "fetch take 1", "filled"]);
});

test("a direct statement answers undefined to the calls beyond what is queued, and one that fails rejects the calls of its verb, the others served by the next round", async () => {
  const { buffer, log, state } = fakeQueue(["a"], 2);
  state.failFetch = 1;
  let release = () => {};
  state.held = new Promise<void>((resolve) => {
    release = resolve;
  });
  const failed = buffer.next("take", true);
  const beside = buffer.next("get");
  await idle();
  release();
  await expect(failed).rejects.toThrow("take failed");
  expect(itemOf(await beside)).toBe("a");
  expect(log).toEqual(["direct take 1", "fetch get 3"]);
  await idle(); // the fill ended
  const [first, second] = [buffer.next("take", true), buffer.next("take", true)];
  expect([itemOf(await first), itemOf(await second)]).toEqual([undefined, undefined]);
  expect(log).toEqual(["direct take 1", "fetch get 3", "direct take 1", "fetch take 3"]);
});

test("a call after an empty look that finds the head stale fills: the stale leases go back first, and it is served the head of the queue, not a direct lease of what comes after them", async () => {
  const { buffer, log, state, queue } = fakeQueue(["a", "b", "c", "d"], 2);
  expect(await handed(buffer, "get")).toBe("a"); // b and c buffered
  state.now = 51; // b is no longer fresh
  expect(itemOf(await buffer.next("take", true))).toBe("b");
  await idle();
  expect(log).toEqual(["fetch get 3", "filled", "release b,c", "fetch take 3", "filled"]);
  expect([buffer.count, queue()]).toEqual([2, []]); // c and d
});

test("a direct statement for calls of both verbs that fails rejects only those of its verb: the others are served, in order, by the next round", async () => {
  const { buffer, log, state } = fakeQueue(["a", "b"], 2);
  let finish: () => void = () => {};
  const statement = buffer.shared(() => new Promise<void>((resolve) => (finish = resolve)));
  await idle(); // the statement runs: the round waits for it, and the calls below all wait for the round
  state.failFetch = 1;
  const outcome = (call: Promise<Fake | undefined>) =>
    call.then(itemOf, (error: unknown) => `rejected: ${(error as Error).message}`);
  const calls = Promise.all([
    outcome(buffer.next("take", true)),
    outcome(buffer.next("get")),
    outcome(buffer.next("take", true)),
  ]);
  finish();
  await statement;
  expect(await Promise.race([calls, idle().then(() => "a call is still waiting")])).toEqual([
    "rejected: take failed",
    "a",
    "rejected: take failed",
  ]);
  expect(log).toEqual(["direct take 3", "fetch get 3", "filled"]);
  expect([buffer.count, buffer.has("b")]).toEqual([1, true]);
});

test("around whose item was handed on while it waited for its turn alone gives nothing back, the leases after it staying buffered, and runs its statement", async () => {
  const { buffer, log } = fakeQueue(["a", "b", "c"], 3);
  expect(await handed(buffer, "get")).toBe("a"); // b and c buffered; the fill brought fewer than it asked for: no refill
  let finish: () => void = () => {};
  const statement = buffer.shared(() => new Promise<void>((resolve) => (finish = resolve)));
  const ran = buffer.around(["b"], async () => "ran");
  await idle(); // around found b buffered: it waits for its turn alone, behind the statement
  expect(itemOf(await buffer.next("get"))).toBe("b"); // handed on from the buffer meanwhile
  finish();
  await statement;
  expect(await ran).toBe("ran");
  expect(log).toEqual(["fetch get 4", "filled"]);
  expect([buffer.count, buffer.has("c")]).toEqual([1, true]);
});
