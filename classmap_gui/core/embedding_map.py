"""A 2-D map of a whole ClassMap embedding: every class and a sample of queries in one picture.

ClassMap embeds a query by the outputs of its d reference classifiers and a class by its learned
embedding (``class_embeddings_ (C, d)``); the filter ranks classes by the alpha-weighted L1 distance.
This module lays the alpha-scaled points (classes first, then queries) out in 2-D by PCA (instant)
or t-SNE (scikit-learn's Barnes-Hut, with progress and cancel), and answers "which classes lie
nearest this one" in the filter's own distance. Pure numpy / scikit-learn: the GUI only draws.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .errors import ConfigError, NotFittedError
from .progress import ProgressFn, StopFn, check_stop, report

#: t-SNE settings chosen by timing hand-pose (2430 classes + 5000 queries, d = 45) on 2 loaded cores:
#: as good neighbourhoods as scikit-learn's defaults in a fifth of the time (docs/explore-map.md)
TSNE_DEFAULTS = {"perplexity": 30.0, "max_iter": 500, "angle": 0.8, "metric": "manhattan"}


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
    from sklearn.decomposition import PCA  # noqa: PLC0415

    P = _check_points(P)
    k = min(2, P.shape[1])
    Y = PCA(n_components=k, random_state=random_state).fit_transform(P).astype(np.float32)
    return Y if k == 2 else np.hstack([Y, np.zeros((len(Y), 1), np.float32)])


def _watched_tsne(progress: ProgressFn, should_stop: StopFn, n_threads: int | None, **params):
    """A scikit-learn ``TSNE`` whose optimiser reports progress and stops on request.

    ``TSNE`` has no callback; its optimiser calls the Barnes-Hut objective once per iteration, so the
    objective is wrapped (in ``_tsne``, a private method whose body this override follows: the
    early-exaggeration phase, then the rest at momentum 0.8). ``n_threads`` bounds the gradient's
    OpenMP threads (scikit-learn takes all cores), so the UI thread keeps a core on a 2-core machine.
    """
    from sklearn.manifold import TSNE  # noqa: PLC0415
    from sklearn.manifold import _t_sne  # noqa: PLC0415
    from sklearn.utils._openmp_helpers import _openmp_effective_n_threads  # noqa: PLC0415

    class WatchedTSNE(TSNE):
        def _tsne(self, P, degrees_of_freedom, n_samples, X_embedded, neighbors=None, skip_num_points=0):
            total = self.max_iter
            seen = [0]

            def objective(p, *args, **kwargs):
                check_stop(should_stop)
                seen[0] += 1
                if seen[0] % 10 == 0:
                    report(progress, 0.1 + 0.9 * seen[0] / total, "t-SNE: arranging the map")
                return _t_sne._kl_divergence_bh(p, *args, **kwargs)

            threads = _openmp_effective_n_threads() if n_threads is None else max(1, int(n_threads))
            opt = {"it": 0, "n_iter_check": self._N_ITER_CHECK, "min_grad_norm": self.min_grad_norm,
                   "learning_rate": self.learning_rate_, "verbose": self.verbose,
                   "kwargs": {"skip_num_points": skip_num_points, "angle": self.angle, "verbose": self.verbose,
                              "num_threads": threads},
                   "args": [P, degrees_of_freedom, n_samples, self.n_components],
                   "n_iter_without_progress": self._EXPLORATION_MAX_ITER,
                   "max_iter": self._EXPLORATION_MAX_ITER, "momentum": 0.5}
            P *= self.early_exaggeration
            params, kl, it = _t_sne._gradient_descent(objective, X_embedded.ravel(), **opt)
            P /= self.early_exaggeration
            if it < self._EXPLORATION_MAX_ITER or self.max_iter > self._EXPLORATION_MAX_ITER:
                opt.update(max_iter=self.max_iter, it=it + 1, momentum=0.8,
                           n_iter_without_progress=self.n_iter_without_progress)
                params, kl, it = _t_sne._gradient_descent(objective, params, **opt)
            self.n_iter_, self.kl_divergence_ = it, kl
            return params.reshape(n_samples, self.n_components)

    return WatchedTSNE(**params)


def tsne_layout(P: np.ndarray, *, perplexity: float = TSNE_DEFAULTS["perplexity"],
                max_iter: int = TSNE_DEFAULTS["max_iter"], angle: float = TSNE_DEFAULTS["angle"],
                metric: str = TSNE_DEFAULTS["metric"], n_jobs: int | None = None, n_threads: int | None = 1,
                random_state: int = 0, progress: ProgressFn = None, should_stop: StopFn = None) -> np.ndarray:
    """``(n, 2) float32`` t-SNE coordinates of points ``P (n, d)``.

    scikit-learn's Barnes-Hut t-SNE, started from PCA (``init="pca"``: the global arrangement is kept
    and runs are repeatable) with ``learning_rate="auto"`` (n / 48). ``metric`` "manhattan" is the
    ClassMap filter's L1 on alpha-scaled points. ``max_iter`` (>= 250, the early-exaggeration phase)
    and ``angle`` trade time for detail; the defaults were chosen by timing on hand-pose (see
    ``TSNE_DEFAULTS``). ``n_jobs``: the neighbour search's processes; ``n_threads``: the gradient's
    OpenMP threads (None: all cores). One by default: on a shared, loaded machine OpenMP's threads wait
    for each other at every step, and two were four times slower than one (docs/explore-map.md).
    Perplexity is capped below the number of points so tiny maps work.
    """
    P = _check_points(P)
    if int(max_iter) < 250:
        raise ConfigError(f"t-SNE max_iter must be at least 250 (its early-exaggeration phase), got {max_iter}")
    report(progress, 0.0, "t-SNE: finding neighbours")
    check_stop(should_stop)
    perp = float(min(perplexity, max(1.0, (len(P) - 1) / 3.0)))
    tsne = _watched_tsne(progress, should_stop, n_threads, n_components=2, perplexity=perp, init="pca",
                         learning_rate="auto", max_iter=int(max_iter), angle=float(angle), metric=metric,
                         n_jobs=n_jobs, random_state=random_state)
    Y = tsne.fit_transform(P)
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
