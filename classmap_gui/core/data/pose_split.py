"""What the generated pose sets (glyph-pose, hand-pose) share: the fixed per-class split of the
benchmark, and the rotation matrices of their viewing orientations."""
from __future__ import annotations

import numpy as np

from ..errors import DataError
from ..selection.splits import position_in_class
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
    rank = position_in_class(ims.labels)
    edges = np.concatenate([[0], np.cumsum(counts)])
    return tuple(ims.subset(np.flatnonzero((rank >= lo) & (rank < hi))) for lo, hi in zip(edges[:-1], edges[1:]))


__all__ = ["BENCH_SPLIT", "split_per_class"]


def rotations(yaw: np.ndarray, pitch: np.ndarray, roll: np.ndarray) -> np.ndarray:
    """``(m, 3, 3)`` float64 rotations Rz(roll) @ Rx(pitch) @ Ry(yaw) for angle arrays ``(m,)`` in radians."""
    m = len(yaw)
    cy, sy, cp, sp, cr, sr = np.cos(yaw), np.sin(yaw), np.cos(pitch), np.sin(pitch), np.cos(roll), np.sin(roll)
    o, z = np.ones(m), np.zeros(m)
    Ry = np.stack([np.stack([cy, z, sy], 1), np.stack([z, o, z], 1), np.stack([-sy, z, cy], 1)], 1)
    Rx = np.stack([np.stack([o, z, z], 1), np.stack([z, cp, -sp], 1), np.stack([z, sp, cp], 1)], 1)
    Rz = np.stack([np.stack([cr, -sr, z], 1), np.stack([sr, cr, z], 1), np.stack([z, z, o], 1)], 1)
    return Rz @ Rx @ Ry
