#!/usr/bin/env python3
"""Replays workqueue-spec's conformance vectors (properties/vectors/*.json, docs/protocol.md "Conformance vectors")
on the queue of workqueue.py, in process, through `answer`: the function its protocol server answers each line with.

Standard library only. From this folder (or with the package installed, from node_modules/workqueue-spec/examples/python):

    python3 -m unittest test_vectors

Each vector makes a fresh queue with {"op":"new","maxRetries":N}, replays the steps of the vector it comes `after`
(and of that one's, back to the first), then its own; a reply passes when it has every property of the expected
reply with the same value (protocol v1 lets a reply carry more). A vector that needs
a feature the queue's hello does not announce is skipped. The same loop, with your own mapping from a request to a
call of your queue, replays the vectors in a Go, Rust or Python project's unit tests.
"""

import json
import pathlib
import sys
import unittest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from workqueue import answer  # noqa: E402  (the example's request handler)

VECTORS = pathlib.Path(__file__).resolve().parents[2] / "properties" / "vectors"
FILES = sorted(path for path in VECTORS.glob("*.json") if path.name != "vectors.schema.json")


def same(expected, actual):
    """Whether `actual` has every property of `expected` with the same value; true is not 1, as in JSON."""
    return all(key in actual and type(actual[key]) is type(value) and actual[key] == value for key, value in expected.items())


def chain(vectors, index):
    """The steps of vectors[index] with those of the vectors it comes after before them, in replay order."""
    steps = []
    while index is not None:
        steps[:0] = vectors[index]["steps"]
        index = vectors[index].get("after")
    return steps


def replay(vectors, index):
    """Replays vectors[index] and its chain on a fresh queue; answers None, or where it first differs: the step's
    number (0 for `new`), the step and the reply."""
    new = {"request": {"op": "new", "maxRetries": vectors[index]["maxRetries"]}, "reply": {"ok": True}}
    reply, queue = answer(new["request"], None)
    if not same(new["reply"], json.loads(reply)):
        return 0, new, reply
    for number, step in enumerate(chain(vectors, index), 1):
        reply, queue = answer(step["request"], queue)
        if not same(step["reply"], json.loads(reply)):
            return number, step, reply
    return None


class ConformanceVectors(unittest.TestCase):
    def test_every_vector(self):
        features = set(json.loads(answer({"op": "hello"}, None)[0])["features"])
        self.assertTrue(FILES, f"no vector files in {VECTORS}")
        ran = skipped = 0
        for path in FILES:
            document = json.loads(path.read_text(encoding="utf-8"))
            self.assertEqual(document["formatVersion"], 2, path.name)
            vectors = document["vectors"]
            for index, vector in enumerate(vectors):
                if not set(vector["features"]) <= features:
                    skipped += 1
                    continue
                ran += 1
                failure = replay(vectors, index)
                if failure is not None:
                    number, step, reply = failure
                    self.fail(f"{path.name}: {vector['description']}: step {number}, expected {json.dumps(step)}, got {reply}")
        print(f"replayed {ran} vectors from {len(FILES)} files, skipped {skipped}", file=sys.stderr)
        self.assertGreater(ran, 0)


if __name__ == "__main__":
    unittest.main()
