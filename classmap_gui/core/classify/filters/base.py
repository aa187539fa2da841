"""The filter index protocol: ClassMap's filter step (the ``p`` nearest classes by weighted L1) as a search.

The filter ranks classes by ``sum_i alpha_i |f_i - e_i|`` between the query embedding ``f (d,)`` and each class
embedding ``e``. With ``alpha >= 0`` that is plain L1 between ``alpha * f`` and ``alpha * e``, so an index stores
the alpha-scaled class embeddings once and any L1 nearest-neighbour search serves the filter (the paper's
closing suggestion: a sublinear filter).

:class:`FilterIndex` is the one interface every kind implements (``kind``; ``fit(embeddings, alpha)``,
``search(F, p, out_cls=, out_dist=)``, and the store's hooks): a kind is a scikit-learn-style component whose
constructor parameters are declared once in ``_parameter_constraints`` and whose fitted state (attributes ending
in ``_``: plain numbers and arrays) the store saves and loads through its generic path like any other component;
``after_load`` rebuilds what is derived and never saved. The input checks, the ``p > C`` padding and the output
arrays are here once; a kind only says how it finds the ``k <= C`` nearest (:meth:`FilterIndex._search`).
"""
from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator

from ...errors import ConfigError, NotFittedError


def checked_embeddings(embeddings, alpha, *, at_least_one: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """``(alpha (d,) float32, scaled (C, d) float32 = embeddings * alpha)`` for a filter index's ``fit``,
    or a ConfigError when the shapes do not match or a value is not finite / alpha negative."""
    E = np.asarray(embeddings, dtype=np.float32)
    a = np.asarray(alpha, dtype=np.float32)
    if E.ndim != 2 or a.shape != (E.shape[1],) or (at_least_one and len(E) < 1):
        raise ConfigError(f"embeddings must be (C, d){' with C >= 1' if at_least_one else ''} and alpha (d,), "
                          f"got {E.shape} and {a.shape}")
    if not np.all(np.isfinite(E)) or not np.all(np.isfinite(a)) or np.any(a < 0):
        raise ConfigError("class embeddings and alpha must be finite, alpha >= 0")
    return a.copy(), np.ascontiguousarray(E * a)


def checked_queries(F, d: int, p) -> tuple[np.ndarray, int]:
    """``(F (n, d) float32, p)`` for a filter index's ``search`` (one ``(d,)`` query becomes ``(1, d)``),
    or a ConfigError naming what is wrong with the queries or p."""
    F = np.asarray(F, dtype=np.float32)
    if F.ndim == 1:
        F = F[None]
    elif F.ndim != 2:
        raise ConfigError(f"query embeddings must be (n, d), got shape {F.shape}")
    if F.shape[1] != d:
        raise ConfigError(f"query embeddings have {F.shape[1]} dimensions, the index {d}")
    p = int(p)
    if p < 1:
        raise ConfigError(f"p must be >= 1, got {p}")
    return F, p


class FilterIndex(BaseEstimator):
    """The interface of every filter index: nearest classes by weighted L1 over alpha-scaled class embeddings.

    A kind sets ``kind`` (its name in :data:`classmap_gui.core.classify.filters.INDEXES`), declares its
    parameters in ``_parameter_constraints``, fits ``alpha_ (d,) float32`` and ``n_classes_`` (and its own
    state) in ``fit(embeddings, alpha)``, implements :meth:`_search` and :meth:`scaled` (the alpha-scaled class
    embeddings it holds, for :meth:`matches`), and rebuilds derived structures in ``after_load``."""

    kind: str = ""
    _parameter_constraints: dict = {}

    def _search(self, F: np.ndarray, k: int, cls: np.ndarray, dist: np.ndarray) -> None:
        """The ``k <= C`` nearest classes of the C-contiguous unscaled queries ``F (n, d) float32`` into the
        C-contiguous ``cls (n, k) int64`` / ``dist (n, k) float32``, ascending."""
        raise NotImplementedError

    def scaled(self) -> np.ndarray:
        """The alpha-scaled class embeddings ``(C, d) float32`` the index searches."""
        raise NotImplementedError

    def after_load(self) -> None:
        """Rebuild what is derived from the saved state (nothing for a kind that searches its state directly)."""

    def extend(self, embeddings: np.ndarray, alpha: np.ndarray) -> "FilterIndex":
        """Index classes added after the fit: ``embeddings (C', d)`` are the indexed classes' (unchanged, first)
        followed by the new ones, under the same ``alpha``. This default refits on all of them (IVF: its k-means
        lists and code step are the data's); the exact scan appends columns and the graph inserts nodes."""
        return self.fit(embeddings, alpha)

    def matches(self, embeddings: np.ndarray, alpha: np.ndarray) -> bool:
        """Whether the index was built on exactly these class embeddings and weights (a saved model's filter
        against its class embeddings; a mismatch means the filter must be refitted)."""
        a = np.asarray(alpha, np.float32)
        try:
            same_alpha = np.array_equal(self.alpha_, a)
            return bool(same_alpha and np.array_equal(self.scaled(), np.asarray(embeddings, np.float32) * a))
        except (AttributeError, ValueError):
            return False

    def _require_fitted(self) -> None:
        if not hasattr(self, "n_classes_"):
            raise NotFittedError(f"the {type(self).__name__} is not built yet: call fit(embeddings, alpha)")

    def search(self, F: np.ndarray, p: int, *, out_cls: np.ndarray | None = None,
               out_dist: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """The ``p`` nearest classes of each query embedding.

        F : ``(n, d) float32`` query embeddings (unscaled, as ClassMap computes them), or one ``(d,)``.
        Returns ``(classes (n, p) int64, distances (n, p) float32)``, ascending weighted L1 distance
        (exact distances for every kind; an approximate index's membership is approximate). Optional
        ``out_*`` arrays are filled and returned. When ``p`` exceeds the class count the extra slots hold
        class -1 and distance +inf.
        """
        self._require_fitted()
        F, p = checked_queries(F, len(self.alpha_), p)
        n = len(F)
        k = min(p, self.n_classes_)
        cls = np.empty((n, p), np.int64) if out_cls is None else out_cls
        dist = np.empty((n, p), np.float32) if out_dist is None else out_dist
        if k < p:
            cls[:, k:] = -1
            dist[:, k:] = np.inf
        direct = k == p and cls.flags.c_contiguous and dist.flags.c_contiguous
        tc = cls if direct else np.empty((n, k), np.int64)
        td = dist if direct else np.empty((n, k), np.float32)
        self._search(np.ascontiguousarray(F), k, tc, td)
        if not direct:
            cls[:, :k] = tc
            dist[:, :k] = td
        return cls, dist

    def _check_fitted_arrays(self, C: int, d: int) -> None:
        """The saved ``alpha_`` / ``n_classes_`` against the sizes of the kind's own arrays (``validate_state``)."""
        a = np.asarray(self.alpha_)
        if a.dtype != np.float32 or a.shape != (d,) or int(self.n_classes_) != C or np.any(a < 0):
            raise ValueError(f"{type(self).__name__}: alpha_ must be ({d},) float32 >= 0 and n_classes_ {C}")


__all__ = ["FilterIndex", "checked_embeddings", "checked_queries"]
