"""The live query on the ClassMap map: where a frame lands among all classes, which p classes the filter
kept, which one the refine chose, and how far down the filter's ordering the true class was.

Pure numpy over a fitted recogniser's public state: the GUI's live map only draws a :class:`LiveFrame`.

*Placing a new point on a map.* A t-SNE map has no transform for new points, so a query is placed by
the rule :func:`place`: the weighted mean of the map positions of its ``k`` nearest classes in the
embedding's own distance (the filter's alpha-weighted L1), weights ``1 / distance``; ``PLACE_K`` (1:
on its nearest class) was chosen by :func:`placement_faithfulness` on validation queries. On a PCA map
the same rule is used, so a marker means the same on every map (docs/explore-map.md gives the figures).
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from ..classify.classmap.ops import filter_distances
from ..errors import ConfigError, NotFittedError
from .views import centroid_mosaic

#: nearest classes whose map positions place a query (see :func:`place`): 1, the marker sits on the star of
#: its nearest class, was the most faithful of 1, 2, 3, 5, 10, 20 on validation queries of hand-pose on both
#: PCA and t-SNE maps: averaging pulls the marker into the gaps between classes (docs/explore-map.md)
PLACE_K = 1
#: centroids shown as "driving this frame's feature" for k-means feature maps
TOP_PATCHES = 8


def query_embedding(classmap, bank, X: np.ndarray) -> np.ndarray:
    """``(n, d) float32`` alpha-scaled embeddings of feature rows ``X (n, D) float32``: the outputs of the
    d reference classifiers (the kept reference bank ``reference_coef_``/``reference_intercept_`` or the
    bank's rows ``reference_``) times ``alpha_``, so plain L1 to the alpha-scaled class embeddings is the
    filter's distance."""
    if getattr(classmap, "class_embeddings_", None) is None:
        raise NotFittedError("the recogniser has no ClassMap embedding; train with ClassMap on")
    F = classmap.reference_outputs(bank, np.ascontiguousarray(X, np.float32))
    return np.ascontiguousarray(F * classmap.alpha_, np.float32)


def class_distances(query: np.ndarray, classes: np.ndarray) -> np.ndarray:
    """``(C,) float32`` L1 distances of one alpha-scaled query ``(d,) float32`` to every alpha-scaled class
    embedding ``classes (C, d) float32`` (the map's points); the analyser ranks with the filter's own
    ``classmap.ops.filter_distances``, equal up to float rounding."""
    return np.abs(np.asarray(classes, np.float32) - np.asarray(query, np.float32)).sum(axis=1, dtype=np.float32)


def true_rank(dist: np.ndarray, c: int) -> int:
    """1-based position of class ``c`` in the filter's ordering of ``dist (C,) float32`` (ties in class
    order, as a stable sort): 1 means the filter put the true class first; ``<= p`` means it was kept."""
    dist = np.asarray(dist)
    c = int(c)
    if not 0 <= c < len(dist):
        raise ConfigError(f"class {c} is not in 0..{len(dist) - 1}")
    return int(np.count_nonzero(dist < dist[c]) + np.count_nonzero(dist[:c] == dist[c]) + 1)


def place(dist: np.ndarray, class_xy: np.ndarray, k: int = PLACE_K) -> np.ndarray:
    """``(2,) float32`` map position of a query with class distances ``dist (C,)``, given the classes' map
    positions ``class_xy (C, 2)``: the mean of its ``k`` nearest classes' positions weighted by
    ``1 / distance`` (a query on a class sits on it)."""
    dist = np.asarray(dist, np.float64)
    k = max(1, min(int(k), len(dist)))
    near = np.argpartition(dist, k - 1)[:k]
    d = dist[near]
    if d.min() <= 0:
        return np.asarray(class_xy[near[np.argmin(d)]], np.float32).copy()
    w = 1.0 / d
    return (w @ np.asarray(class_xy, np.float64)[near] / w.sum()).astype(np.float32)


def placement_faithfulness(queries: np.ndarray, classes: np.ndarray, class_xy: np.ndarray, k: int = 10,
                           place_k: int = PLACE_K) -> float:
    """How faithful the placement rule is on a map: for each query ``(n, d)`` placed by :func:`place`, the
    share of the ``k`` classes nearest the marker on the map (Euclidean in 2-D) that are among its ``k``
    nearest classes in the embedding (L1 over ``classes (C, d)``); the mean over queries, in [0, 1]
    (chance ``k / C``). 1 means the map's neighbourhood of the marker is the filter's."""
    classes = np.asarray(classes, np.float32)
    xy = np.asarray(class_xy, np.float64)
    k = max(1, min(int(k), len(classes)))
    kept = []
    for q in np.asarray(queries, np.float32):
        dist = class_distances(q, classes)
        pos = place(dist, xy, place_k)
        on_map = ((xy - pos) ** 2).sum(axis=1)
        a = np.argpartition(dist, k - 1)[:k]
        b = np.argpartition(on_map, k - 1)[:k]
        kept.append(len(np.intersect1d(a, b)) / k)
    return float(np.mean(kept)) if kept else float("nan")


def top_centroids(feature: np.ndarray, n_centroids: int, m: int = TOP_PATCHES) -> tuple[np.ndarray, np.ndarray]:
    """The k-means centroids whose pooled responses make up most of one frame's feature.

    ``feature (4K,) float32`` is a single-layer k-means feature (2x2 quadrants x ``n_centroids`` K, quadrant
    major); a centroid's response is its sum over the quadrants. Returns ``(indices (m,) int64, share (m,)
    float32)``: the ``m`` strongest, strongest first, each with its share of the total response."""
    K = int(n_centroids)
    f = np.asarray(feature, np.float32)
    if f.ndim != 1 or K < 1 or len(f) % K:
        raise ConfigError(f"a k-means feature of {K} centroids has a multiple of {K} values, got shape {f.shape}")
    resp = f.reshape(-1, K).sum(axis=0)
    m = max(1, min(int(m), K))
    idx = np.argsort(-resp, kind="stable")[:m]
    total = float(resp.sum())
    share = resp[idx] / total if total > 0 else np.zeros(m, np.float32)
    return idx.astype(np.int64), share.astype(np.float32)


class RankTally:
    """A running histogram of the true class's rank in the filter's ordering: ``counts (p + 1,) int64``,
    ``counts[r - 1]`` frames at rank r <= p, ``counts[p]`` frames where the filter dropped the true class.
    Its cumulative sum over the frames seen is the recall-at-p curve filling in."""

    def __init__(self, p: int):
        self.p = max(1, int(p))
        self.counts = np.zeros(self.p + 1, np.int64)

    def add(self, rank: int) -> None:
        """Count one frame whose true class had 1-based rank ``rank``."""
        self.counts[min(int(rank), self.p + 1) - 1] += 1

    @property
    def frames(self) -> int:
        """Frames counted."""
        return int(self.counts.sum())

    def recall(self) -> np.ndarray:
        """``(p,) float64``: share of the counted frames whose true class was within the first r, r = 1..p."""
        n = max(1, self.frames)
        return np.cumsum(self.counts[:-1]) / n


@dataclass
class LiveFrame:
    """One frame seen through filter-and-refine (shapes for p candidates of C classes).

    ``position (2,) float32`` map position by :func:`place` (None without a map); ``candidates (p,) int64``
    in filter order with ``distances (p,) float32`` (L1), ``scores (p,) float32`` after refine (NaN
    where the refine did not evaluate one) and ``refine_rank (p,) int64`` each one's 1-based place in the
    refine's ordering (0: not evaluated); ``winner`` the refined class; ``truth`` the true class or -1
    and ``rank`` its 1-based place in the filter's full ordering (-1 when unknown); ``patches`` /
    ``patch_share`` from :func:`top_centroids` (empty for other feature maps) and ``patch_image`` those
    centroids as one uint8 strip (:func:`~.views.centroid_mosaic`, None without); ``tally (p + 1,) int64``
    a copy of the running rank histogram; ``seconds`` the analysis time.
    """

    position: np.ndarray | None
    candidates: np.ndarray
    distances: np.ndarray
    scores: np.ndarray
    refine_rank: np.ndarray
    winner: int
    truth: int
    rank: int
    patches: np.ndarray
    patch_share: np.ndarray
    patch_image: np.ndarray | None
    tally: np.ndarray
    seconds: float


class LiveAnalyser:
    """Turns one frame (an RGB crop) into a :class:`LiveFrame` with a fitted ClassMap recogniser.

    ``class_xy (C, 2)``: the map's class positions (None: no placement); may be replaced between frames.
    Keeps the running :class:`RankTally` of the frames whose truth is known (``reset`` empties it).
    """

    def __init__(self, recogniser, class_xy: np.ndarray | None = None, place_k: int = PLACE_K):
        cm = getattr(recogniser, "classmap", None)
        if cm is None or getattr(cm, "class_embeddings_", None) is None:
            raise NotFittedError("the live map needs a recogniser trained with ClassMap")
        self.recogniser, self.classmap, self.place_k = recogniser, cm, int(place_k)
        self.classes = np.ascontiguousarray(cm.class_embeddings_ * cm.alpha_, np.float32)
        self.p = min(int(cm.p), len(self.classes))
        self.class_xy = class_xy
        self.tally = RankTally(self.p)
        self.n_centroids = len(getattr(recogniser.features, "centroids_", ()))
        self.patch_size = int(getattr(recogniser.features, "patch_size_", 0) or 0)

    def reset(self) -> None:
        """Start a new rank histogram (a new stream)."""
        self.tally = RankTally(self.p)

    def analyse(self, crop: np.ndarray, truth: int = -1, features: np.ndarray | None = None) -> LiveFrame:
        """Recognise ``crop (h, w[, 3]) uint8`` and describe it; ``truth`` the true class index or -1.
        ``features (1, D) float32``: the crop's features when already computed by this recogniser (a stream
        that recognised the frame), so they are not computed twice."""
        t0 = time.perf_counter()
        rec, cm = self.recogniser, self.classmap
        X = rec.transform(rec.prepare(crop[None])) if features is None else np.asarray(features, np.float32)
        pred = rec.predict_features(X, top=self.p)
        cands, dist_p = cm.candidates(rec.classifier, X, self.p)
        cands, dist_p = cands[0], dist_p[0]
        refined = dict(zip(pred.top_classes[0].tolist(), pred.top_scores[0].tolist()))
        scores = np.array([refined.get(int(c), np.nan) for c in cands], np.float32)
        place_of = {c: r + 1 for r, (c, v) in enumerate(refined.items()) if np.isfinite(v)}
        refine_rank = np.array([place_of.get(int(c), 0) for c in cands], np.int64)
        # the filter's own arithmetic (bit-identical distances), so the rank agrees with its list
        dist = filter_distances(cm.reference_outputs(rec.classifier, X), cm.class_embeddings_, cm.alpha_)[0]
        xy = self.class_xy
        position = place(dist, xy, self.place_k) if xy is not None and len(xy) == len(dist) else None
        rank = -1
        if 0 <= int(truth) < len(dist):
            rank = true_rank(dist, int(truth))
            self.tally.add(rank)
        patches = share = np.zeros(0, np.int64)
        strip = None
        if self.n_centroids:
            feats = rec.features
            patches, share = top_centroids(X[0], self.n_centroids)
            strip = centroid_mosaic(feats.centroids_[patches], self.patch_size, int(feats.n_channels_),
                                    columns=len(patches), pad=1, scale=max(1, 24 // max(1, self.patch_size)))
        return LiveFrame(position, cands.astype(np.int64), dist_p.astype(np.float32), scores, refine_rank,
                         int(pred.labels[0]),
                         int(truth) if rank > 0 else -1, rank, patches, share, strip, self.tally.counts.copy(),
                         time.perf_counter() - t0)
