"""What the app's inspection views show, computed without any window (model/view separation).

Each function returns plain arrays; the GUI only draws them:
confusion rates and the misclassified examples of a cell, the top confusions as a list (readable
at thousands of classes) and the classes one class is mixed up with, the k-means centroid mosaic,
the 2-D ClassMap embedding on two chosen reference classifiers (the paper's Fig. 2), and
the accuracy-against-evaluations curve of filter-and-refine next to brute force (Fig. 3).
"""
from __future__ import annotations

import copy
from dataclasses import dataclass

import numpy as np

from ..errors import ConfigError, NotFittedError
from ..progress import ProgressFn, StopFn, check_stop, report


def confusion_rates(confusion: np.ndarray) -> np.ndarray:
    """Row-normalised confusion ``(C, C) float32``: entry (i, j) = share of class i predicted as j."""
    conf = np.asarray(confusion, np.float32)
    rows = conf.sum(axis=1, keepdims=True)
    return np.divide(conf, rows, out=np.zeros_like(conf), where=rows > 0)


def confusion_from_labels(true: np.ndarray, pred: np.ndarray, n_classes: int) -> np.ndarray:
    """Counts ``(C, C) int64``, rows = true class, columns = predicted class (one bincount)."""
    true = np.asarray(true, np.int64)
    pred = np.asarray(pred, np.int64)
    return np.bincount(true * n_classes + pred, minlength=n_classes * n_classes).reshape(n_classes, n_classes)


def cell_examples(true: np.ndarray, pred: np.ndarray, i: int, j: int) -> np.ndarray:
    """Indices ``(k,) int64`` of the examples of true class ``i`` predicted as ``j``."""
    return np.flatnonzero((np.asarray(true) == i) & (np.asarray(pred) == j))


def centroid_mosaic(centroids: np.ndarray, patch_size: int, channels: int = 1, *, columns: int | None = None,
                    pad: int = 1, scale: int = 1) -> np.ndarray:
    """The k-means dictionary as one picture, like the memo's figure of learned centroids.

    ``centroids (K, p*p*c)`` float32 (patch vectors ordered row, column, channel) -> mosaic
    uint8 ``(H, W)`` grey or ``(H, W, 3)``; each tile is min-max stretched on its own so
    whitened filters are visible; tiles are separated by ``pad`` white pixels, laid out in
    ``columns`` (default ceil(sqrt(K))) columns, each pixel enlarged ``scale`` times.
    """
    C = np.asarray(centroids, np.float32)
    k = len(C)
    if k == 0:
        raise ConfigError("no centroids to draw")
    if C.shape[1] != patch_size * patch_size * channels:
        raise ConfigError(f"centroids have {C.shape[1]} values, expected {patch_size}x{patch_size}x{channels}")
    lo = C.min(axis=1, keepdims=True)
    span = C.max(axis=1, keepdims=True) - lo
    tiles = np.divide(C - lo, span, out=np.full_like(C, 0.5), where=span > 0)
    tiles = np.rint(tiles * 255).astype(np.uint8).reshape(k, patch_size, patch_size, channels)
    if scale > 1:
        tiles = tiles.repeat(scale, axis=1).repeat(scale, axis=2)
    cols = columns or int(np.ceil(np.sqrt(k)))
    rows = int(np.ceil(k / cols))
    t = tiles.shape[1]
    grid = np.full((rows * cols, t + pad, t + pad, channels), 255, np.uint8)
    grid[:k, :t, :t] = tiles
    mosaic = grid.reshape(rows, cols, t + pad, t + pad, channels).transpose(0, 2, 1, 3, 4)
    mosaic = mosaic.reshape(rows * (t + pad), cols * (t + pad), channels)[: rows * (t + pad) - pad, : cols * (t + pad) - pad]
    return np.ascontiguousarray(mosaic[..., 0] if channels == 1 else mosaic)


@dataclass
class Embedding2D:
    """The 2-D view of a ClassMap embedding on reference dimensions ``dims``.

    ``patterns (n, 2) float32`` query embeddings, ``labels (n,)`` their classes,
    ``classes (C, 2) float32`` class embeddings (per-class medians), ``reference (2,)``
    the classifier rows of the two dimensions.
    """

    patterns: np.ndarray
    labels: np.ndarray
    classes: np.ndarray
    reference: np.ndarray


def embedding_2d(classmap, bank, X: np.ndarray, labels: np.ndarray, dims: tuple[int, int] = (0, 1)) -> Embedding2D:
    """Project patterns ``X (n, D) float32`` and all classes onto two reference classifiers.

    ``dims`` index the ClassMap's reference list (0..d-1). A pattern's coordinate on a
    dimension is the output of that reference classifier on it; a class's is its learned
    embedding value, so the two share axes as in the paper's Fig. 2.
    """
    from ..classify.classmap.bank_view import classifier_outputs

    refs = getattr(classmap, "reference_", None)
    if refs is None:
        raise NotFittedError("the recogniser has no ClassMap embedding; train with ClassMap on")
    d = len(refs)
    a, b = (int(v) for v in dims)
    if not (0 <= a < d and 0 <= b < d):
        raise ConfigError(f"embedding dimensions must be in 0..{d - 1}, got {dims}")
    rows = np.asarray(refs)[[a, b]]
    P = classifier_outputs(bank, np.asarray(X, np.float32), rows=rows)
    return Embedding2D(np.ascontiguousarray(P, np.float32), np.asarray(labels, np.int64),
                       np.ascontiguousarray(classmap.class_embeddings_[:, [a, b]], np.float32), rows)


@dataclass
class TradeOff:
    """Accuracy against classifier evaluations per query (the paper's Fig. 3).

    ``p (k,)`` candidate counts, ``accuracy (k,)`` and ``evaluations (k,)`` (mean per query)
    of filter-and-refine at each p; ``brute_accuracy`` and ``brute_evaluations`` of the
    stacked bank evaluated in full.
    """

    p: np.ndarray
    accuracy: np.ndarray
    evaluations: np.ndarray
    brute_accuracy: float
    brute_evaluations: float


def accuracy_vs_evaluations(classmap, bank, X: np.ndarray, y: np.ndarray, ps=None, *,
                            progress: ProgressFn = None, should_stop: StopFn = None) -> TradeOff:
    """Sweep the filter's p on features ``X (n, D) float32`` with true labels ``y`` (bank labels).

    The fitted ClassMap is not changed (a shallow copy gets each p). ``ps`` defaults to a
    geometric sweep from 1 to the number of classes.
    """
    from ..classify.classmap.bank_view import classifier_outputs, n_classifiers

    C = int(classmap.n_classes_)
    if ps is None:
        ps = np.unique(np.clip(np.rint(np.geomspace(1, C, num=min(12, C))).astype(int), 1, C))
    ps = np.asarray(ps, np.int64)
    y = np.asarray(y)
    if len(y) == 0:                 # no held-out images (a model opened alone): nothing to measure, said as NaN
        nan = np.full(len(ps), np.nan, np.float32)
        return TradeOff(ps, nan, nan.copy(), float("nan"), float(n_classifiers(bank)))
    acc, ev = [], []
    for k, p in enumerate(ps):
        check_stop(should_stop)
        report(progress, k / (len(ps) + 1), f"filter-and-refine, p = {p}")
        cm = copy.copy(classmap)
        cm.p = int(p)
        res = cm.predict_result(X, top=1, bank=bank)
        acc.append(float(np.mean(res.labels == y)))
        ev.append(float(np.mean(res.evaluations)))
    report(progress, len(ps) / (len(ps) + 1), "brute force")
    out = classifier_outputs(bank, X)
    classes = np.asarray(bank.classes_)
    if getattr(bank, "pairs_", None) is not None:
        pairs = np.asarray(bank.pairs_)
        win = np.where(out > 0, pairs[:, 0][None, :], pairs[:, 1][None, :])
        C_ = len(classes)
        votes = np.bincount((np.arange(len(X))[:, None] * C_ + win).ravel(), minlength=len(X) * C_)
        brute = classes[votes.reshape(len(X), C_).argmax(axis=1)]
    else:
        brute = classes[out.argmax(axis=1)]
    report(progress, 1.0, "done")
    return TradeOff(ps, np.asarray(acc, np.float32), np.asarray(ev, np.float32),
                    float(np.mean(brute == y)), float(out.shape[1]))


def test_part(imageset, config):
    """The held-out test images ``train(imageset, config)`` evaluated its report on (its own
    :func:`~classmap_gui.core.train.training.split_parts`), or None when ``config.test_fraction`` is 0."""
    from ..train.training import split_parts

    if not config.test_fraction:
        return None
    return imageset.subset(split_parts(imageset.labels, config, imageset.groups)["test"])  # bursts kept whole


@dataclass
class Confusions:
    """Mistakes grouped by (true, predicted) class, most frequent first, without a C x C matrix.

    ``true (m,) int64``, ``pred (m,) int64``, ``count (m,) int64`` test images of ``true`` predicted
    as ``pred``, ``share (m,) float32`` = count / test images of ``true``.
    """

    true: np.ndarray
    pred: np.ndarray
    count: np.ndarray
    share: np.ndarray

    def __len__(self) -> int:
        return len(self.count)


def top_confusions(true: np.ndarray, pred: np.ndarray, n_classes: int, k: int | None = None) -> Confusions:
    """Every (true, predicted) pair with at least one mistake, by count (ties: by true, then predicted
    class), at most ``k``; memory grows with the mistakes, not with ``n_classes`` squared."""
    true = np.asarray(true, np.int64)
    pred = np.asarray(pred, np.int64)
    if true.shape != pred.shape:
        raise ConfigError(f"true and predicted labels differ in length: {true.shape} vs {pred.shape}")
    C = int(n_classes)
    if len(true) and (min(true.min(), pred.min()) < 0 or max(true.max(), pred.max()) >= C):
        raise ConfigError(f"labels must lie in 0..{C - 1}")
    wrong = true != pred
    codes, counts = np.unique(true[wrong] * C + pred[wrong], return_counts=True)
    order = np.argsort(-counts, kind="stable")[: (None if k is None else int(k))]
    codes, counts = codes[order], counts[order].astype(np.int64)
    tested = np.bincount(true, minlength=C)
    t, p = codes // C, codes % C
    return Confusions(t, p, counts, (counts / np.maximum(tested[t], 1)).astype(np.float32))


def most_confused_with(true: np.ndarray, pred: np.ndarray, c: int, k: int = 8) -> tuple[np.ndarray, np.ndarray]:
    """The classes class ``c`` is most often mixed up with, either way round (its images predicted as
    them, or theirs predicted as ``c``): ``(classes (m,) int64, mistakes (m,) int64)``, m <= k, by count."""
    true = np.asarray(true, np.int64)
    pred = np.asarray(pred, np.int64)
    c = int(c)
    other = np.concatenate([pred[(true == c) & (pred != c)], true[(pred == c) & (true != c)]])
    classes, counts = np.unique(other, return_counts=True)
    order = np.argsort(-counts, kind="stable")[: int(k)]
    return classes[order].astype(np.int64), counts[order].astype(np.int64)
