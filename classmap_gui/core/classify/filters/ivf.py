"""An inverted-file filter index: k-means lists over the alpha-scaled class embeddings, uint8 codes, exact re-rank.

A query scans the ``nprobe`` lists whose centroids are nearest and re-ranks the ``ceil(rerank * p)`` rows nearest
by code exactly (:class:`..kernels.ivf_lists.IVFLists`, numba; no extra dependency). On real class embeddings
the lists did not prune at recall 0.99 (docs/scale.md), so ClassMap's "auto" filter takes the HNSW graph from
many classes on; this index, and with one list the quantised exact scan, remain candidates that ``bench scale
--data hand-pose`` chooses among on validation queries. Fitted state (saved): ``alpha_``, ``scaled_ (C, d)``,
the lists' ``centroids_``, ``starts_`` and ``ids_``; the padded search arrays are rebuilt on load without
k-means.
"""
from __future__ import annotations

import math
from numbers import Integral, Real

import numpy as np

from ...guards.constraints import Interval, validate_params
from ..kernels.ivf_lists import IVFLists
from .base import FilterIndex, checked_embeddings

#: default nprobe = this fraction of the lists: what ``bench scale`` chose on its validation queries at
#: 10^5 classes (71 of 1012 lists for recall@40 >= 0.99) ...
IVF_PROBE_FRACTION = 0.07
#: ... but at least enough lists to hold this many times p rows on average (small indexes probe more)
IVF_MIN_ROWS_PER_CANDIDATE = 50
#: IVF re-ranks exactly the ``rerank * p`` rows nearest by code (``bench scale``'s validation choice at 10^5
#: classes; 1.25 and 2 reach the same recall there, the partition and not the coding limits it)
DEFAULT_RERANK = 1.25


class IVFFilter(FilterIndex):
    """Nearest classes by weighted L1 through an IVF index over alpha-scaled embeddings.

    Parameters: ``nlist`` lists (None: 3.2 sqrt(C)), ``nprobe`` lists scanned per query (None:
    ``IVF_PROBE_FRACTION`` of the lists, and at least enough for ``IVF_MIN_ROWS_PER_CANDIDATE * p`` rows),
    ``rerank`` (the ``ceil(rerank * p)`` code-nearest rows are re-ranked exactly), ``n_iter`` k-means passes,
    ``random_state`` for k-means."""

    kind = "ivf"
    _parameter_constraints: dict = {
        "nlist": [Interval(Integral, 1, None, closed="left"), None],
        "nprobe": [Interval(Integral, 1, None, closed="left"), None],
        "rerank": [Interval(Real, 1, None, closed="left")],
        "n_iter": [Interval(Integral, 0, 1000, closed="both")],
        "random_state": ["random_state"],
    }

    def __init__(self, nlist: int | None = None, nprobe: int | None = None, rerank: float = DEFAULT_RERANK,
                 n_iter: int = 15, random_state: int | None = 0):
        self.nlist = nlist
        self.nprobe = nprobe
        self.rerank = rerank
        self.n_iter = n_iter
        self.random_state = random_state

    def fit(self, embeddings: np.ndarray, alpha: np.ndarray) -> "IVFFilter":
        """Index class embeddings ``(C, d) float32`` under weights ``alpha (d,) >= 0``."""
        validate_params(self)
        self.alpha_, self.scaled_ = checked_embeddings(embeddings, alpha, at_least_one=True)
        C = self.n_classes_ = len(self.scaled_)
        nlist = int(self.nlist) if self.nlist is not None else max(1, int(round(3.2 * np.sqrt(C))))
        lists = IVFLists.build(self.scaled_, nlist, int(self.n_iter), np.random.default_rng(self.random_state))
        self.centroids_, self.starts_, self.ids_ = lists.centroids, lists.starts, lists.ids
        self.__dict__["_lists"] = lists
        return self

    def validate_state(self) -> None:
        C, d = np.shape(self.scaled_)
        cent, starts, ids = (np.asarray(a) for a in (self.centroids_, self.starts_, self.ids_))
        nlist = len(cent)
        ok = (cent.dtype == np.float32 and cent.shape == (nlist, d) and nlist >= 1 and starts.dtype == np.int64
              and starts.shape == (nlist + 1,) and starts[0] == 0 and starts[-1] == C and np.all(np.diff(starts) >= 0)
              and ids.dtype == np.int64 and ids.shape == (C,) and C > 0 and ids.min() >= 0 and ids.max() < C
              and np.bincount(ids, minlength=C).max() == 1)
        if not ok:
            raise ValueError("IVFFilter: the saved lists do not partition the class embeddings")
        self._check_fitted_arrays(C, d)

    def after_load(self) -> None:
        self.__dict__["_lists"] = IVFLists(np.ascontiguousarray(self.scaled_), np.ascontiguousarray(self.centroids_),
                                           np.ascontiguousarray(self.starts_), np.ascontiguousarray(self.ids_))

    def scaled(self) -> np.ndarray:
        return self.scaled_

    def nprobe_for(self, p: int) -> int:
        """Lists a search for ``p`` candidates scans (``nprobe``, or the default rule)."""
        nlist = len(self.centroids_)
        if self.nprobe is not None:
            return max(1, min(int(self.nprobe), nlist))
        by_rows = -(-IVF_MIN_ROWS_PER_CANDIDATE * p * nlist // max(self.n_classes_, 1))
        return max(1, min(nlist, max(math.ceil(IVF_PROBE_FRACTION * nlist), by_rows)))

    def _search(self, F: np.ndarray, k: int, cls: np.ndarray, dist: np.ndarray) -> None:
        self.__dict__["_lists"].search(F, self.alpha_, k, self.nprobe_for(k), math.ceil(float(self.rerank) * k),
                                       cls, dist)


__all__ = ["DEFAULT_RERANK", "IVF_MIN_ROWS_PER_CANDIDATE", "IVF_PROBE_FRACTION", "IVFFilter"]
