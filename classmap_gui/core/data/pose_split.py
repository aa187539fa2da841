"""The fixed per-class split of the generated pose sets (glyph-pose, hand-pose) for the benchmark."""
from __future__ import annotations

import numpy as np

from ..errors import DataError
from .imageset import ImageSet

BENCH_SPLIT = (40, 10, 10)  # train / embedding / test images per class (paper: 150 / 25 / 25)


def split_per_class(ims: ImageSet, counts: tuple[int, ...] = BENCH_SPLIT) -> tuple[ImageSet, ...]:
    """Split a generated set by position within each class: the first ``counts[0]`` images of every
    class, the next ``counts[1]``, ... (images of a class are i.i.d., so this is a random split and it
    is the same for every run). Every class needs ``sum(counts)`` images."""
    per = ims.counts()
    need = int(sum(counts))
    if per.min() < need:
        raise DataError(f"{ims.name}: the split {counts} needs {need} images per class, some class has {per.min()}; "
                        f"generate with images_per_class={need}")
    order = np.argsort(ims.labels, kind="stable")
    rank = np.empty(len(ims), np.int64)
    starts = np.concatenate([[0], np.cumsum(per)[:-1]])
    rank[order] = np.arange(len(ims)) - np.repeat(starts, per)
    edges = np.concatenate([[0], np.cumsum(counts)])
    return tuple(ims.subset(np.flatnonzero((rank >= lo) & (rank < hi))) for lo, hi in zip(edges[:-1], edges[1:]))


__all__ = ["BENCH_SPLIT", "split_per_class"]
