"""Encode an image set in chunks: into memory, or into a memory-mapped ``.npy`` file on disk.

Feature matrices outgrow memory long before the images do (k-means features with K=1600 are
6400 float32 = 25.6 kB per image against 784 bytes for a 28x28 image), so :func:`encode` can
write the ``(n, D) float32`` matrix straight into a ``.npy`` file opened with
``numpy.lib.format.open_memmap``: only one chunk of features per worker is ever in RAM, and the
file is a plain ``.npy`` that ``np.load(path, mmap_mode="r")`` opens without reading it. Training
then reads it chunk by chunk: ``OneVsAllRidge().fit(memmap, y)`` accumulates the
Gram matrix over row chunks (``ova.ridge_solve``), so only ``(D, D)`` float64 and one chunk are in
RAM. (liblinear and the RBF SVM need the whole matrix in float64 in RAM; use ridge for such sets.)

:class:`EncodedSet` is a labelled set once encoded, without its pixels: :func:`.training.train` takes one in place
of an :class:`~..data.ImageSet`, so a caller that encodes its images (:func:`encode_set`) can let them go before
the search (the hand model's 84 000 crops are 0.77 GB; their 512 features 0.17 GB).

Chunks are dispatched with ``joblib.Parallel`` when the active backend is Dask (see
:mod:`classmap_gui.core.parallel`), so encoding runs on the cluster's workers and only results
come back. On this machine chunks run one after the other and the feature map's own threads
(``n_jobs`` of the feature map) do the parallel work, which avoids nesting two thread pools.
"""
from __future__ import annotations

import inspect
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from joblib import Parallel, delayed

from ..data import ImageSet
from ..errors import ConfigError, DataError
from ..parallel import describe_backend
from ..progress import ProgressFn, StopFn, check_stop, report, sub_progress

_CHUNK_BYTES = 64 << 20  # feature rows per chunk: ~64 MB of float32 output


def _transform_chunk(features, images: np.ndarray, start: int) -> tuple[int, np.ndarray]:
    """One task: ``(start, features.transform(images) as float32)``; module level so Dask can ship it."""
    return start, np.asarray(features.transform(images), dtype=np.float32)


def _local_chunks(features, chunk, n: int, starts, chunk_size: int, progress: ProgressFn, should_stop: StopFn):
    """Chunks in this process (``chunk(a, b)``: images ``a:b``); the feature map's own progress/cancel (if it
    takes them) fills each slice."""
    params = inspect.signature(features.transform).parameters
    wired = "progress" in params and "should_stop" in params
    for a in starts:
        b = min(n, a + chunk_size)
        if wired:
            F = features.transform(chunk(a, b), progress=sub_progress(progress, a / n, b / n),
                                   should_stop=should_stop)
            yield a, np.asarray(F, dtype=np.float32)
        else:
            yield _transform_chunk(features, chunk(a, b), a)


def encode(features, images: np.ndarray, *, rows: np.ndarray | None = None, out: str | os.PathLike | None = None,
           chunk_size: int | None = None, progress: ProgressFn = None, should_stop: StopFn = None) -> np.ndarray:
    """Apply a fitted feature map to ``images`` chunk by chunk.

    features : a fitted transformer with ``transform(images) -> (m, D)``.
    images : uint8 ``(n, h, w)`` or ``(n, h, w, 3)`` (an ``np.memmap`` works too).
    rows : encode only these rows of ``images``, in this order (gathered chunk by chunk: no copy of the
        images they select sits in memory, as ``images[rows]`` would; a training part of a large set).
    out : ``None`` -> the result is an in-memory ``(n, D) float32`` array. A path -> the result is
        written to that ``.npy`` file (written to ``<path>.part`` and renamed when complete, so a
        crash or a cancel never leaves a truncated file under the final name) and returned as a
        read-only ``np.memmap``.
    chunk_size : images per chunk (default: ~64 MB of features per chunk).

    Returns ``(n, D) float32``. Raises :class:`Cancelled` when ``should_stop()`` turns true.
    """
    images = np.asarray(images) if not isinstance(images, np.memmap) else images
    if images.ndim not in (3, 4) or images.dtype != np.uint8:
        raise DataError(f"encode expects uint8 images (n,h,w) or (n,h,w,3), got {images.dtype} {images.shape}")
    if rows is None:
        n = images.shape[0]

        def chunk(a: int, b: int) -> np.ndarray:
            return images[a:b]
    else:
        rows = np.asarray(rows, np.int64)
        if rows.ndim != 1 or (len(rows) and (rows.min() < 0 or rows.max() >= images.shape[0])):
            raise ConfigError(f"encode: rows must be indices into the {images.shape[0]} images")
        n = len(rows)

        def chunk(a: int, b: int) -> np.ndarray:
            return images[rows[a:b]]
    if n == 0:
        raise DataError("encode: no images to encode")
    report(progress, 0.0, "encoding")
    # The feature dimension D is known only after a transform; the first image gives it cheaply.
    first = np.asarray(features.transform(chunk(0, 1)), dtype=np.float32)
    if first.ndim != 2 or first.shape[0] != 1:
        raise ConfigError(f"{type(features).__name__}.transform returned shape {first.shape}, expected (1, D)")
    d = first.shape[1]
    if chunk_size is None:
        chunk_size = max(1, _CHUNK_BYTES // (4 * d))
    chunk_size = int(chunk_size)
    if chunk_size < 1:
        raise ConfigError(f"chunk_size must be >= 1, got {chunk_size}")

    part = None
    if out is None:
        result = np.empty((n, d), dtype=np.float32)
    else:
        path = Path(out)
        if path.suffix != ".npy":
            raise ConfigError(f"the feature file must end in .npy, got {path}")
        path.parent.mkdir(parents=True, exist_ok=True)
        part = path.with_name(path.name + ".part")
        result = np.lib.format.open_memmap(part, mode="w+", dtype=np.float32, shape=(n, d))
    try:
        starts = range(0, n, chunk_size)
        if describe_backend() == "dask":
            tasks = (delayed(_transform_chunk)(features, chunk(a, min(n, a + chunk_size)), a) for a in starts)
            results = Parallel(n_jobs=-1, return_as="generator_unordered")(tasks)
        else:
            results = _local_chunks(features, chunk, n, starts, chunk_size, progress, should_stop)
        done = 0
        for a, F in results:
            if F.shape != (min(n, a + chunk_size) - a, d):
                raise ConfigError(f"{type(features).__name__}.transform returned {F.shape} for a chunk of "
                                  f"{min(n, a + chunk_size) - a} images with D={d}")
            result[a:a + F.shape[0]] = F
            done += F.shape[0]
            report(progress, done / n, "encoding")
            check_stop(should_stop)
    except BaseException:
        if part is not None:
            del result
            part.unlink(missing_ok=True)
        raise
    if part is None:
        return result
    result.flush()
    del result
    os.replace(part, path)
    return np.load(path, mmap_mode="r")



@dataclass
class EncodedSet:
    """A labelled image set as training reads it once encoded: the feature rows of its images, not the pixels.

    ``X (n, D) float32``: row i is image i through ``features``, a fitted feature map that learned nothing from
    these images (a trained network, HOG: :func:`.training.train` fits none for an EncodedSet, so a map that
    learns from its data would see the test part); ``labels``, ``class_names``, ``name``, ``groups`` as the
    :class:`~..data.ImageSet`'s; ``image_size`` (h, w) and ``is_color`` of the images.
    """

    X: np.ndarray
    labels: np.ndarray
    class_names: list[str]
    features: Any
    image_size: tuple[int, int]
    is_color: bool = False
    name: str = ""
    groups: np.ndarray | None = None

    def __post_init__(self) -> None:
        self.labels = np.asarray(self.labels, np.int64)
        if not isinstance(self.X, np.ndarray) or self.X.dtype != np.float32 or self.X.shape[:1] != self.labels.shape \
                or self.X.ndim != 2:
            raise DataError(f"encoded set {self.name!r}: features must be (n, D) float32 with one row per label, got "
                            f"{getattr(self.X, 'dtype', None)} {getattr(self.X, 'shape', None)} for "
                            f"{len(self.labels)} labels")

    def __len__(self) -> int:
        return len(self.labels)

    n_classes = ImageSet.n_classes
    counts = ImageSet.counts
    check_trainable = ImageSet.check_trainable

    def subset(self, index) -> "EncodedSet":
        """The rows at ``index`` (integer array), same classes and feature map."""
        index = np.asarray(index)
        return EncodedSet(self.X[index], self.labels[index], list(self.class_names), self.features,
                          self.image_size, self.is_color, self.name, None if self.groups is None else self.groups[index])


def encode_set(imageset: ImageSet, features, *, progress: ProgressFn = None, should_stop: StopFn = None) -> EncodedSet:
    """Every image of ``imageset`` through the fitted ``features`` (:func:`encode`, in chunks): an
    :class:`EncodedSet` that holds no pixels, so the caller can drop the images."""
    X = encode(features, imageset.images, progress=progress, should_stop=should_stop)
    return EncodedSet(X, imageset.labels, list(imageset.class_names), features, imageset.image_size,
                      imageset.is_color, imageset.name, imageset.groups)
