"""A 2-D map of a whole ClassMap embedding: every class and a sample of queries in one picture.

ClassMap embeds a query by the outputs of its d reference classifiers and a class by its learned
embedding (``class_embeddings_ (C, d)``); the filter ranks classes by the alpha-weighted L1 distance.
This module lays the alpha-scaled points (classes first, then queries) out in 2-D by PCA (instant)
or t-SNE (openTSNE's Barnes-Hut, with progress and cancel through its callbacks), and answers "which classes lie
nearest this one" in the filter's own distance. Pure numpy / scikit-learn / openTSNE: the GUI only draws.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
# imported with the module, not on first use: an import in a worker thread holds the GIL for long stretches
# (loading compiled modules) and would freeze the window that imported this module long before
from openTSNE import TSNE
from sklearn.decomposition import PCA

from ..errors import ConfigError, NotFittedError
from ..progress import ProgressFn, StopFn, check_stop, report

#: t-SNE settings chosen by timing hand-pose (2430 classes + 5000 queries, d = 45) on 2 loaded cores:
#: as good neighbourhoods as scikit-learn's defaults in a fifth of the time (docs/explore-map.md)
TSNE_DEFAULTS = {"perplexity": 30.0, "max_iter": 500, "angle": 0.8, "metric": "manhattan"}
EARLY_ITER = 250  # iterations of the early-exaggeration phase, part of max_iter


@dataclass
class MapPoints:
    """The points a map lays out: ``classes (C, d) float32`` and ``queries (n, d) float32``, both
    multiplied by the filter's weights ``alpha (d,)`` so plain L1 distance is the filter's distance."""

    classes: np.ndarray
    queries: np.ndarray

    @property
    def stacked(self) -> np.ndarray:
        """``(C + n, d) float32``: classes first, then queries (the layouts' row order)."""
        return np.ascontiguousarray(np.vstack([self.classes, self.queries]), np.float32)


def map_points(classmap, bank, X: np.ndarray) -> MapPoints:
    """Class embeddings and the embeddings of queries with features ``X (n, D) float32``, alpha-scaled."""
    if getattr(classmap, "class_embeddings_", None) is None:
        raise NotFittedError("the recogniser has no ClassMap embedding; train with ClassMap on")
    alpha = np.asarray(classmap.alpha_, np.float32)
    X = np.asarray(X, np.float32)
    # the reference outputs exactly as the filter computes them (the bank's rows or the kept reference bank)
    F = classmap.reference_outputs(bank, X) if len(X) else np.zeros((0, len(alpha)), np.float32)
    return MapPoints(np.ascontiguousarray(classmap.class_embeddings_ * alpha, np.float32),
                     np.ascontiguousarray(F * alpha, np.float32))


def _check_points(P: np.ndarray) -> np.ndarray:
    P = np.asarray(P, np.float32)
    if P.ndim != 2 or len(P) < 3:
        raise ConfigError(f"a map needs at least 3 points of shape (n, d), got {P.shape}")
    if not np.all(np.isfinite(P)):
        raise ConfigError("the embedding has non-finite values (NaN or infinity); retrain the recogniser")
    return P


def pca_layout(P: np.ndarray, random_state: int = 0) -> np.ndarray:
    """``(n, 2) float32`` PCA coordinates of points ``P (n, d)`` (a single axis is padded with zeros)."""
    P = _check_points(P)
    k = min(2, P.shape[1])
    Y = PCA(n_components=k, random_state=random_state).fit_transform(P).astype(np.float32)
    return Y if k == 2 else np.hstack([Y, np.zeros((len(Y), 1), np.float32)])


def tsne_layout(P: np.ndarray, *, perplexity: float = TSNE_DEFAULTS["perplexity"],
                max_iter: int = TSNE_DEFAULTS["max_iter"], angle: float = TSNE_DEFAULTS["angle"],
                metric: str = TSNE_DEFAULTS["metric"], n_jobs: int = 1, random_state: int = 0,
                progress: ProgressFn = None, should_stop: StopFn = None) -> np.ndarray:
    """``(n, 2) float32`` t-SNE coordinates of points ``P (n, d)``.

    openTSNE's Barnes-Hut t-SNE through its public API: its optimiser calls back every few iterations,
    which reports progress and stops on request (no private scikit-learn function is overridden).
    Started from PCA (the global arrangement is kept and runs are repeatable) with openTSNE's automatic
    learning rate. ``max_iter`` counts every iteration, the first 250 of them the early-exaggeration
    phase (scikit-learn's convention); ``angle`` is Barnes-Hut's theta. ``metric`` "manhattan" is the
    ClassMap filter's L1 on alpha-scaled points. ``n_jobs``: threads for the neighbour search and the
    gradient, one by default: on a shared, loaded 2-core machine threads wait for each other at every
    step, and the other core stays free for the window (docs/explore-map.md). Perplexity is capped
    below the number of points so tiny maps work.
    """
    P = _check_points(P)
    if int(max_iter) < EARLY_ITER:
        raise ConfigError(f"t-SNE max_iter must be at least {EARLY_ITER} (its early-exaggeration phase), "
                          f"got {max_iter}")
    report(progress, 0.0, "t-SNE: finding neighbours")
    check_stop(should_stop)
    every = 10
    total = max(1, int(max_iter) // every)
    calls = [0]

    def watch(_iteration, _error, _embedding) -> bool:
        check_stop(should_stop)  # raises Cancelled out of the optimiser
        calls[0] += 1
        report(progress, 0.1 + 0.9 * min(1.0, calls[0] / total), "t-SNE: arranging the map")
        return False

    perp = float(min(perplexity, max(1.0, (len(P) - 1) / 3.0)))
    tsne = TSNE(n_components=2, perplexity=perp, initialization="pca", learning_rate="auto",
                early_exaggeration_iter=EARLY_ITER, n_iter=int(max_iter) - EARLY_ITER, theta=float(angle),
                metric=metric, negative_gradient_method="bh", n_jobs=int(n_jobs), random_state=random_state,
                callbacks=watch, callbacks_every_iters=every)
    Y = np.asarray(tsne.fit(P))
    report(progress, 1.0, "t-SNE: done")
    return np.ascontiguousarray(Y, np.float32)


def nearest_classes(classes: np.ndarray, c: int, k: int = 8) -> tuple[np.ndarray, np.ndarray]:
    """The ``k`` classes nearest class ``c`` in the filter's distance (L1 between alpha-scaled class
    embeddings ``classes (C, d)``): ``(indices (k,) int64, distances (k,) float32)``, nearest first,
    ``c`` itself left out."""
    E = np.asarray(classes, np.float32)
    C = len(E)
    if not 0 <= int(c) < C:
        raise ConfigError(f"class {c} is not in 0..{C - 1}")
    d = np.abs(E - E[int(c)]).sum(axis=1)
    d[int(c)] = np.inf
    idx = np.argsort(d, kind="stable")[:max(0, min(int(k), C - 1))]
    return idx.astype(np.int64), d[idx].astype(np.float32)
