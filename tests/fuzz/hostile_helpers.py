"""Shared pieces of the hostile-input suite: a tiny trained model, memory measurement, kills."""
from __future__ import annotations

import os
import tracemalloc
from contextlib import contextmanager

import numpy as np

from classmap_gui.core.data import ImageSet

#: Peak memory any hostile file may cost on top of its declared, budget-checked size (issue 13).
PEAK_BYTES = 64 * 1024 * 1024


def tiny_set(n_per_class: int = 8, classes=("a", "b", "c"), size=(8, 8), seed=0) -> ImageSet:
    """Separable tiny images: class c is bright in its own band of rows."""
    rng = np.random.default_rng(seed)
    imgs, labels = [], []
    for c in range(len(classes)):
        for _ in range(n_per_class):
            img = rng.integers(0, 60, size).astype(np.uint8)
            img[c * size[0] // len(classes):(c + 1) * size[0] // len(classes)] += 150
            imgs.append(img)
            labels.append(c)
    return ImageSet(np.stack(imgs), np.array(labels), list(classes), name="tiny")


def tiny_model(seed: int = 0):
    from classmap_gui.core.train.training import TrainConfig, train

    return train(tiny_set(seed=seed), TrainConfig(features="pixels", bank="ova-ridge", test_fraction=0.25,
                                                  seed=seed)).recogniser


@contextmanager
def peak_memory():
    """Measure the peak of Python and numpy allocations inside the block: ``with peak_memory() as m: ...; m[0]``."""
    out = [0]
    tracemalloc.start()
    try:
        yield out
    finally:
        out[0] = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()


def run_killed_at(point: str, nth: int, fn) -> bool:
    """Run ``fn`` in a forked child that dies (``os._exit``, no cleanup) at the ``nth`` time the save
    reaches fault point ``point``; returns True when the child died there, False when it finished."""
    pid = os.fork()
    if pid == 0:  # child: arm the hook, run, report whether the kill point was reached
        import classmap_gui.core.store.atomic as atomic

        seen = [0]

        def hook(name: str) -> None:
            if name == point:
                seen[0] += 1
                if seen[0] == nth:
                    os._exit(9)

        atomic.FAULT_HOOK = hook
        try:
            fn()
        except BaseException:  # noqa: BLE001 - the forked child reports any failure by its exit code
            os._exit(3)
        os._exit(0)
    _, status = os.waitpid(pid, 0)
    code = os.waitstatus_to_exitcode(status)
    assert code in (0, 9), f"the save failed in the child (exit {code})"
    return code == 9
