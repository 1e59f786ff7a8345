#!/usr/bin/env python3
"""A keyed work queue in Python that speaks workqueue-spec's protocol v1 (docs/protocol.md) on stdin/stdout.

Standard library only. Run the gate against it:

    npx workqueue-conformance -- python3 examples/python/workqueue.py

The queue follows docs/spec.md: `add` collapses repeated adds, an item in flight is only marked dirty and `done`
requeues it, `retry` gives up when the failure count reaches `max_retries`, `forget` clears the count, and after
`shut_down` no new work is accepted while the work already asked for can still be handed out.
"""

from collections import deque
import json
import os
import sys

QUEUED, IN_FLIGHT, DIRTY = "queued", "in flight", "in flight + dirty"


class WorkQueue:
    """One dict of item states (an absent item has no entry) and a deque of queued items: O(1) per call."""

    def __init__(self, max_retries):
        self.max_retries = max_retries
        self._state = {}  # invariant: an item is QUEUED exactly when it is in _queue
        self._queue = deque()  # queued items, oldest first, no duplicates
        self._failures = {}  # only positive counts
        self.shutting_down = False

    def add(self, item):
        if self.shutting_down:  # §12.3: no new work
            return
        state = self._state.get(item)
        if state is None:
            self._state[item] = QUEUED
            self._queue.append(item)
        elif state == IN_FLIGHT:
            self._state[item] = DIRTY

    def get(self):
        if not self._queue:
            return None
        item = self._queue.popleft()
        self._state[item] = IN_FLIGHT
        return item

    def done(self, item):
        state = self._state.get(item)
        if state == IN_FLIGHT:
            del self._state[item]
        elif state == DIRTY:
            self._state[item] = QUEUED
            self._queue.append(item)

    def retry(self, item):
        failures = self._failures.get(item, 0) + 1
        self._failures[item] = failures
        if failures >= self.max_retries or self.shutting_down:  # §7.2, §12.4
            return False
        self.add(item)
        return True

    def forget(self, item):
        self._failures.pop(item, None)

    def shut_down(self):
        self.shutting_down = True

    def __len__(self):
        return len(self._queue)


# The replies that never change, serialised once: json.dumps costs as much as the queue operation itself.
ACK = '{"ok":true}'
REQUEUED = {True: '{"ok":true,"requeued":true}', False: '{"ok":true,"requeued":false}'}
NOTHING = '{"ok":true,"item":null}'
HELLO = json.dumps({"ok": True, "name": "python-workqueue", "features": ["len", "shutdown"]})
SHUTTING_DOWN = {True: '{"ok":true,"value":true}', False: '{"ok":true,"value":false}'}


def answer(request, queue):
    """The reply to one request, as a JSON line without its newline, and the queue to use from now on."""
    op = request.get("op") if isinstance(request, dict) else None
    item = request.get("item") if isinstance(request, dict) else None
    if op == "hello":
        return HELLO, queue
    if op == "new" and isinstance(request.get("maxRetries"), int) and request["maxRetries"] >= 0:
        return ACK, WorkQueue(request["maxRetries"])
    if queue is not None and op in ("add", "done", "forget") and isinstance(item, str):
        getattr(queue, op)(item)
        return ACK, queue
    if queue is not None and op == "retry" and isinstance(item, str):
        return REQUEUED[queue.retry(item)], queue
    if queue is not None and op == "get":
        got = queue.get()
        return (NOTHING if got is None else '{"ok":true,"item":' + json.dumps(got) + "}"), queue
    if queue is not None and op == "len":
        return '{"ok":true,"len":' + str(len(queue)) + "}", queue
    if queue is not None and op == "shutdown":
        queue.shut_down()
        return ACK, queue
    if queue is not None and op == "shuttingDown":
        return SHUTTING_DOWN[queue.shutting_down], queue
    return json.dumps({"ok": False, "error": "unknown or malformed request: " + json.dumps(request)}), queue


def main():
    """Answers requests in order. Reads whatever input has arrived and writes all its replies at once, so a gate
    that pipelines its requests is answered with few system calls, and one that waits for each reply gets it."""
    queue = None
    pending = b""
    while True:
        chunk = os.read(0, 1 << 16)
        if not chunk:
            return
        *lines, pending = (pending + chunk).split(b"\n")
        replies = []
        for line in lines:
            try:
                request = json.loads(line)
            except ValueError as error:
                request = {"malformed": str(error)}
            reply, queue = answer(request, queue)
            replies.append(reply)
        if replies:
            sys.stdout.buffer.write(("\n".join(replies) + "\n").encode())
            sys.stdout.buffer.flush()


if __name__ == "__main__":
    main()
