"""The filter step of a fitted ClassMap: the p classes nearest a query's embedding.

Below ``FILTER_INDEX_THRESHOLD`` classes an exact weighted-L1 scan (the batch kernels, over the
alpha-scaled transposed class embeddings); from there on the IVF index of ``ann_index``. Both are
built lazily and cached, rebuilt when ``class_embeddings_`` or ``alpha_`` are replaced, never saved.
"""
from __future__ import annotations

import numpy as np

from . import _batch_kernels as BK, _classmap_kernels as K
from .ann_index import DEFAULT_THRESHOLD as FILTER_INDEX_THRESHOLD, FilterIndex

__all__ = ["FILTER_INDEX_THRESHOLD", "FilterStep"]


class FilterStep:
    """Mixin for :class:`~classmap_gui.core.classify.classmap.ClassMap`: needs ``class_embeddings_ (C, d)
    float32``, ``alpha_ (d,) float32`` and ``n_classes_``."""

    def _filter_index(self):
        """The IVF L1 index (numba, ann_index.py) over the class embeddings from
        ``FILTER_INDEX_THRESHOLD`` classes on (built on first use, rebuilt when the embeddings
        change; never saved), else None."""
        if self.n_classes_ < FILTER_INDEX_THRESHOLD:
            return None
        cached = self.__dict__.get("_index_cache")
        if cached is None or cached[0] is not self.class_embeddings_ or cached[1] is not self.alpha_:
            cached = (self.class_embeddings_, self.alpha_,
                      FilterIndex(method="ivf").fit(self.class_embeddings_, self.alpha_))
            self._index_cache = cached
        return cached[2]

    def use_filter_index(self, index) -> None:
        """Search with the fitted IVF ``index`` (built on these ``class_embeddings_`` / ``alpha_``, e.g.
        chosen on validation and saved with the model) until those arrays are replaced."""
        self._index_cache = (self.class_embeddings_, self.alpha_, index)

    def _embeddings_t(self) -> np.ndarray:
        """``class_embeddings_`` alpha-scaled and transposed to ``(d, C)``, the exact filter's layout
        (cached; rebuilt when either array is replaced)."""
        cached = self.__dict__.get("_et_cache")
        if cached is None or cached[0] is not self.class_embeddings_ or cached[1] is not self.alpha_:
            cached = self._et_cache = (self.class_embeddings_, self.alpha_,
                                       K.transpose_embeddings(self.class_embeddings_, self.alpha_))
        return cached[2]

    def _filter(self, F: np.ndarray, p: int, cands: np.ndarray, dist: np.ndarray) -> None:
        """Filter step into ``cands``/``dist (n, p)``: the fused exact scan, or the index at many classes."""
        index = self._filter_index()
        if index is None:
            BK.filter_batch_t(F, self._embeddings_t(), self.alpha_, p, cands, dist)
        else:
            index.search(F, p, out_cls=cands, out_dist=dist)
