#!/usr/bin/env python3
"""A keyed work queue in Python that speaks workqueue-spec's protocol v1 (docs/protocol.md) on stdin/stdout.

Standard library only. Run the gate against it:

    npx workqueue-conformance -- python3 examples/python/workqueue.py

The queue follows docs/spec.md: `add` collapses repeated adds, an item in flight is only marked dirty and `done`
requeues it, `retry` gives up when the failure count reaches `max_retries`, `forget` clears the count, and after
`shut_down` no new work is accepted while the work already asked for can still be handed out. With time
(docs/spec.md §17, the protocol's "time" feature), `add_after` makes an item wait on the queue's clock, an `add`
ends the wait, the earlier of two due times wins, items due together are added in the order they were asked for,
waiting items still fall due after `shut_down`, and `retry` may back off exponentially (client-go's formula).
It keeps client-go's work-queue metrics on that clock (docs/spec.md §19, the protocol's "metrics" feature).

With the protocol's "concurrent" feature, a request that carries an "id" runs on a thread of its own, as a real
caller's would, and its reply carries the same "id"; the one lock around the queue (LOCK) is what makes those calls
linearizable. Without it, the gate finds the race.
"""

from collections import deque
import heapq
import json
import math
import os
import sys
import threading

QUEUED, IN_FLIGHT, DIRTY = "queued", "in flight", "in flight + dirty"


class WorkQueue:
    """One dict of item states (an absent item has no entry) and a deque of queued items: O(1) per call."""

    def __init__(self, max_retries, clock=None, backoff=None):
        self.max_retries = max_retries
        self._state = {}  # invariant: an item is QUEUED exactly when it is in _queue
        self._queue = deque()  # queued items, oldest first, no duplicates
        self._failures = {}  # only positive counts
        self.shutting_down = False
        self._clock = clock  # an object with a `now` attribute in ms (FakeClock); None: no time
        self._backoff = backoff  # (base_ms, max_ms) or None
        self._due = {}  # waiting item -> (due, order); invariant: a waiting item is absent or IN_FLIGHT
        self._heap = []  # (due, order, item), with stale entries skipped when popped
        self._order = 0
        # §19: the metrics. _queued_at: when each queued item was appended; _handed_at: when each item in flight
        # was handed out, in hand-out order (a dict keeps insertion order), which §19.9 sums §19.5 in.
        self.adds = self.retries = 0
        self._queue_duration = [0, 0.0]  # count, sum of ms in the order observed
        self._work_duration = [0, 0.0]
        self._queued_at = {}
        self._handed_at = {}

    @property
    def waiting(self):
        return len(self._due)

    def add(self, item):
        if self.shutting_down:  # §12.3: no new work
            return
        self._due.pop(item, None)  # §17.4: an add ends the wait
        self._enter(item)

    def add_after(self, item, delay_ms):
        if delay_ms <= 0:  # §17.1
            self.add(item)
            return
        if self.shutting_down:  # §17.7
            return
        self._wait(item, delay_ms)

    def _wait(self, item, delay_ms):
        if self._state.get(item) in (QUEUED, DIRTY):  # §17.2: a processing is already due
            return
        due = self._clock.now + delay_ms
        if item in self._due and self._due[item][0] <= due:  # §17.3: the earlier wins
            return
        self._order += 1
        self._due[item] = (due, self._order)
        heapq.heappush(self._heap, (due, self._order, item))

    def advance(self, ms):
        """Moves the clock by `ms`, adding every item due on the way at its due time, in (due, order) order."""
        end = self._clock.now + ms
        while self._heap and self._heap[0][0] <= end:
            due, order, item = heapq.heappop(self._heap)
            if self._due.get(item) != (due, order):  # stale: re-delayed or its wait ended
                continue
            del self._due[item]
            self._clock.now = due
            self._enter(item)  # §17.5, while shutting down too (§17.7)
        self._clock.now = end

    def _enter(self, item):
        state = self._state.get(item)
        if state is None:
            self.adds += 1  # §19.2
            self._push(item)
        elif state == IN_FLIGHT:
            self.adds += 1  # §19.2: it marks the item dirty
            self._state[item] = DIRTY

    def _push(self, item):
        self._state[item] = QUEUED
        self._queue.append(item)
        self._queued_at[item] = self._now()  # §19.3: its queue duration starts

    def _now(self):
        return self._clock.now if self._clock is not None else 0.0

    def get(self):
        if not self._queue:
            return None
        item = self._queue.popleft()
        self._state[item] = IN_FLIGHT
        now = self._now()
        self._queue_duration[0] += 1  # §19.3
        self._queue_duration[1] += now - self._queued_at.pop(item)
        self._handed_at[item] = now  # §19.4: its work starts
        return item

    def done(self, item):
        state = self._state.get(item)
        if state in (IN_FLIGHT, DIRTY):
            self._work_duration[0] += 1  # §19.4
            self._work_duration[1] += self._now() - self._handed_at.pop(item)
        if state == IN_FLIGHT:
            del self._state[item]
        elif state == DIRTY:
            self._push(item)  # §6.2

    def retry(self, item):
        failures = self._failures.get(item, 0) + 1
        self._failures[item] = failures
        if failures >= self.max_retries or self.shutting_down:  # §7.2, §12.4
            return False
        self.retries += 1  # §19.7, before the add its requeue makes
        delay = 0
        if self._backoff is not None:  # §7.3, §18.2: min(max, base * 2^(failures - 1)), without overflow
            base, cap = self._backoff
            delay, n = base, 1
            while n < failures and delay < cap:
                delay, n = delay * 2, n + 1
            delay = min(delay, cap)
        if delay > 0:
            self._wait(item, delay)
        else:
            self.add(item)
        return True

    def forget(self, item):
        self._failures.pop(item, None)

    def shut_down(self):
        self.shutting_down = True

    def __len__(self):
        return len(self._queue)

    def metrics(self):
        """§19 now: the counters, the observations, and the two gauges of the items in flight."""
        now = self._now()
        ages = [now - at for at in self._handed_at.values()]  # in hand-out order (§19.9)
        unfinished = 0.0
        for age in ages:
            unfinished += age
        return {
            "depth": len(self._queue),
            "adds": self.adds,
            "retries": self.retries,
            "queueDuration": {"count": self._queue_duration[0], "sumMs": self._queue_duration[1]},
            "workDuration": {"count": self._work_duration[0], "sumMs": self._work_duration[1]},
            "unfinishedWorkMs": unfinished,
            "longestRunningMs": max(ages, default=0.0),
        }


# The replies that never change, serialised once: json.dumps costs as much as the queue operation itself.
ACK = '{"ok":true}'
REQUEUED = {True: '{"ok":true,"requeued":true}', False: '{"ok":true,"requeued":false}'}
NOTHING = '{"ok":true,"item":null}'
HELLO = json.dumps(
    {"ok": True, "name": "python-workqueue", "features": ["len", "shutdown", "time", "metrics", "concurrent"]}
)


class FakeClock:
    """A clock that moves only when the gate says so (the "time" feature): it starts at 0 with each queue."""

    def __init__(self):
        self.now = 0.0  # a float: time is IEEE 754 double sums, as the gate's model computes it


def is_number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
SHUTTING_DOWN = {True: '{"ok":true,"value":true}', False: '{"ok":true,"value":false}'}


def refuse(request):
    return json.dumps({"ok": False, "error": "unknown or malformed request: " + json.dumps(request)})


def on_new(request, queue):
    if not (isinstance(request.get("maxRetries"), int) and request["maxRetries"] >= 0):
        return refuse(request), queue
    backoff = request.get("backoff")
    if isinstance(backoff, dict) and is_number(backoff.get("baseMs")) and is_number(backoff.get("maxMs")):
        backoff = (float(backoff["baseMs"]), float(backoff["maxMs"]))
        return ACK, WorkQueue(request["maxRetries"], FakeClock(), backoff)
    return ACK, WorkQueue(request["maxRetries"], FakeClock())


def on_item(verb):
    """add, done and forget: a string item, nothing to answer."""

    def handle(request, queue):
        item = request.get("item")
        if not isinstance(item, str):
            return refuse(request), queue
        getattr(queue, verb)(item)
        return ACK, queue

    return handle


def on_retry(request, queue):
    item = request.get("item")
    return (REQUEUED[queue.retry(item)] if isinstance(item, str) else refuse(request)), queue


def on_get(request, queue):
    got = queue.get()
    return (NOTHING if got is None else '{"ok":true,"item":' + json.dumps(got) + "}"), queue


def on_add_after(request, queue):
    item, delay = request.get("item"), request.get("delayMs")
    if not (isinstance(item, str) and is_number(delay)):
        return refuse(request), queue
    queue.add_after(item, float(delay))
    return ACK, queue


def on_advance(request, queue):
    if not (is_number(request.get("ms")) and request["ms"] >= 0):
        return refuse(request), queue
    queue.advance(float(request["ms"]))
    return ACK, queue


def on_shutdown(request, queue):
    queue.shut_down()
    return ACK, queue


METRICS = (
    '{"ok":true,"metrics":{"depth":%d,"adds":%d,"retries":%d,"queueDuration":{"count":%d,"sumMs":%r},'
    '"workDuration":{"count":%d,"sumMs":%r},"unfinishedWorkMs":%r,"longestRunningMs":%r}}'
)


def metrics_reply(m):
    """The metrics reply, written by hand: json.dumps of the dict costs five times as much, after every call. A
    float's repr is its JSON (the times are finite), and the counts are ints."""
    q, w = m["queueDuration"], m["workDuration"]
    counts = (m["depth"], m["adds"], m["retries"], q["count"], q["sumMs"], w["count"], w["sumMs"])
    return METRICS % (*counts, m["unfinishedWorkMs"], m["longestRunningMs"])


# Each request's handler, by its "op"; all but hello and new need a queue.
HANDLERS = {
    "add": on_item("add"),
    "done": on_item("done"),
    "forget": on_item("forget"),
    "retry": on_retry,
    "get": on_get,
    "len": lambda request, queue: ('{"ok":true,"len":' + str(len(queue)) + "}", queue),
    "addAfter": on_add_after,
    "advance": on_advance,
    "waiting": lambda request, queue: ('{"ok":true,"waiting":' + str(queue.waiting) + "}", queue),
    "shutdown": on_shutdown,
    "shuttingDown": lambda request, queue: (SHUTTING_DOWN[queue.shutting_down], queue),
    "metrics": lambda request, queue: (metrics_reply(queue.metrics()), queue),
}


def answer(request, queue):
    """The reply to one request, as a JSON line without its newline, and the queue to use from now on."""
    op = request.get("op") if isinstance(request, dict) else None
    if op == "hello":
        return HELLO, queue
    if op == "new":
        return on_new(request, queue)
    handler = HANDLERS.get(op) if isinstance(op, str) else None
    if handler is None or queue is None:
        return refuse(request), queue
    return handler(request, queue)


DECODE = json.JSONDecoder().raw_decode


def decoded(line):
    """The request on `line` alone, or one that says why it is malformed."""
    try:
        return json.loads(line)
    except ValueError as error:  # UnicodeDecodeError too
        return {"malformed": str(error)}


def parse(lines):
    """The requests of `lines`, one per line. Each line is decoded where it lies in the text of them all, about
    twice as fast as a json.loads per line; a line that does not hold exactly one JSON value, or input that is not
    UTF-8, is decoded line by line, so that it is answered as malformed, with json's reason."""
    try:
        text = b"\n".join(lines).decode()
    except UnicodeDecodeError:
        return [decoded(line) for line in lines]
    requests = []
    start = 0
    for line in text.split("\n"):
        end = start + len(line)
        try:
            request, stop = DECODE(text, start)
        except ValueError:
            stop = -1
        requests.append(request if stop == end else decoded(line))
        start = end + 1
    return requests


LOCK = threading.Lock()  # held by every concurrent call for the whole of its work on the queue
OUT = threading.Lock()  # held by every write to stdout, so that replies never interleave


def write(replies):
    with OUT:
        sys.stdout.buffer.write(("\n".join(replies) + "\n").encode())
        sys.stdout.buffer.flush()


def concurrently(request, queue):
    """Runs a request that carries an "id" on a thread of its own (the "concurrent" feature) and writes its reply,
    with the same "id", as soon as it is made. The gate sends only calls this way (never hello or new), so the queue
    stays the same."""
    request_id = request.pop("id")

    def run():
        try:
            with LOCK:
                reply, _ = answer(request, queue)
        except Exception as error:  # a bug here must still answer, or the gate waits for this id
            reply = json.dumps({"ok": False, "error": repr(error)})
        write([reply[:-1] + ',"id":' + json.dumps(request_id) + "}"])

    threading.Thread(target=run, daemon=True).start()


def main():
    """Answers requests in order. Reads whatever input has arrived and writes all its replies at once, so a gate
    that pipelines its requests is answered with few system calls, and one that waits for each reply gets it.
    Requests that carry an "id" are answered by their own threads, in any order."""
    queue = None
    pending = b""
    while True:
        chunk = os.read(0, 1 << 16)
        if not chunk:
            return
        *lines, pending = (pending + chunk).split(b"\n")
        replies = []
        for request in parse(lines):
            if isinstance(request, dict) and "id" in request and queue is not None:
                if replies:  # the replies to earlier requests go first
                    write(replies)
                    replies = []
                concurrently(request, queue)
                continue
            reply, queue = answer(request, queue)
            replies.append(reply)
        if replies:
            write(replies)


if __name__ == "__main__":
    main()
