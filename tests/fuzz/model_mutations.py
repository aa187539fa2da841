"""Seeded single-value mutations of saved models (issue 26 item 7): every leaf of ``model.json``
replaced by one hostile value at a time, then loaded and used as ``classmap predict`` would."""
from __future__ import annotations

import json
import math
import random
import signal
import traceback
from contextlib import contextmanager
from pathlib import Path

import numpy as np

#: values a corrupted or hand-edited model file may hold in place of any other
HOSTILE = [0, 1, -1, 2, 3, 7, 2 ** 31, -(2 ** 63), 2 ** 64, 0.0, 0.5, -0.5, 1e308, -1e308, math.inf, -math.inf,
           math.nan, True, False, None, "", "x", "v9", [], [0], [1, 2], [[]], {}, {"a": 1}, [None], ["a", "b"]]


def leaves(doc, path=()):
    """Every ``(path, value)`` of ``doc`` where a mutation can go: scalars, lists and objects alike."""
    yield path, doc
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield from leaves(v, path + (k,))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            yield from leaves(v, path + (i,))


def mutated(doc, path, value):
    """A copy of ``doc`` with the value at ``path`` replaced."""
    doc = json.loads(json.dumps(doc))
    if not path:
        return value
    node = doc
    for k in path[:-1]:
        node = node[k]
    node[path[-1]] = value
    return doc


def mutations(doc, n: int, seed: int):
    """``n`` distinct seeded ``(path, value)`` pairs over the leaves of ``doc`` (not its array manifest
    or free-form metadata: those have their own tests)."""
    paths = [p for p, _ in leaves(doc) if p and p[0] not in ("arrays", "metadata", "software")]
    pairs = [(p, v) for p in paths for v in HOSTILE]
    return random.Random(seed).sample(pairs, min(n, len(pairs)))


class Hang(Exception):
    pass


@contextmanager
def deadline(seconds: int):
    def ring(*_):
        raise Hang()

    old = signal.signal(signal.SIGALRM, ring)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def outcome(folder: Path, images: np.ndarray) -> str:
    """``"refused"`` (one clear ModelFormatError at load), ``"works"`` (loaded and predicted), or
    ``"internal: ..."`` / ``"hang"`` — what ``classmap predict`` would end as."""
    from classmap_gui.core.errors import ClassMapError, ModelFormatError
    from classmap_gui.core.recogniser import Recogniser

    try:
        with deadline(20):
            try:
                rec = Recogniser.load(folder)
            except ModelFormatError as exc:
                return "refused" if "\n" not in str(exc).strip() else f"internal: multi-line {exc!r}"
            try:
                res = rec.predict(images, top=2)
                np.asarray(res.top_classes)
            except ClassMapError as exc:  # a clear error after loading is still not "invalid at load"
                return f"internal: {type(exc).__name__} at predict: {exc}"
    except Hang:
        return "hang"
    except Exception as exc:  # noqa: BLE001 - every other exception is an internal error (exit 70)
        tb = traceback.extract_tb(exc.__traceback__)[-1]
        return f"internal: {type(exc).__name__}: {str(exc)[:120]} at {Path(tb.filename).name}:{tb.lineno}"
    return "works"
