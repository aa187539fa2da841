"""The filter step of a fitted ClassMap: the p classes nearest a query's embedding.

Below ``FILTER_INDEX_THRESHOLD`` classes an exact weighted-L1 scan (the batch kernels, over the
alpha-scaled transposed class embeddings; a batch prefilters on their byte codes, ``filter_codes``, and
gets the same lists); from there on an HNSW graph (``filter_graph``, faiss), the
filter that pruned real class embeddings at recall 0.99 where the IVF index of ``ann_index`` did not
(docs/scale.md). Both are built lazily and kept in the model's one private cache dict, rebuilt when
``class_embeddings_`` or ``alpha_`` are replaced; an index chosen on validation and kept with the model
(``classmap_sampled.keep_graph_index``) is saved and restored instead.
"""
from __future__ import annotations

import numpy as np

from ..kernels.codes import encode_classes, filter_codes_batch, worth_it
from ..kernels.exact_filter import filter_batch_t, transpose_embeddings
from ..filters.ivf import DEFAULT_THRESHOLD as FILTER_INDEX_THRESHOLD

__all__ = ["CODES_MIN_BATCH", "FILTER_INDEX_THRESHOLD", "FilterStep", "default_graph_beam"]

#: batches from this many queries filter through the byte codes (a handful costs the coding more than it saves)
CODES_MIN_BATCH = 8


def default_graph_beam(p: int) -> int:
    """The HNSW search beam a default filter index gets for ``p`` candidates: ``max(2p, 160)``, what reached
    recall@p 0.99 on validation queries of real hand-pose class embeddings at 10^4-10^5 classes for p from
    10 to 320 (2p at p = 320, 6p at p = 20; docs/scale.md)."""
    return max(2 * int(p), 160)


class FilterStep:
    """Mixin for :class:`~classmap_gui.core.classify.classmap.estimator.ClassMap`: needs ``class_embeddings_ (C, d)
    float32``, ``alpha_ (d,) float32`` and ``n_classes_``."""

    def _caches(self) -> dict:
        """The one dict of derived, unsaved arrays (created by ``fit``, or on first use after loading)."""
        try:
            return self.__dict__["_cache"]
        except KeyError:
            return self.__dict__.setdefault("_cache", {})

    def clear_caches(self) -> None:
        """Drop every derived array (filter layout, filter index, single-query buffers); they are rebuilt
        on the next prediction. Needed only after changing fitted arrays in place."""
        self.__dict__["_cache"] = {}

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state.pop("_cache", None)            # buffers and indexes are rebuilt, not pickled
        return state

    def _derived(self, name: str, build):
        """``build()`` cached under ``name`` until ``class_embeddings_`` or ``alpha_`` is replaced."""
        cache = self._caches()
        cached = cache.get(name)
        if cached is None or cached[0] is not self.class_embeddings_ or cached[1] is not self.alpha_:
            cached = cache[name] = (self.class_embeddings_, self.alpha_, build())
        return cached[2]

    def filter_index(self):
        """The filter index searched instead of the exact scan from ``FILTER_INDEX_THRESHOLD`` classes on:
        the one set by :meth:`use_filter_index`, else an HNSW graph built on first use (beam
        :func:`default_graph_beam`; not saved); None below that many classes (the exact scan)."""
        if self.n_classes_ < FILTER_INDEX_THRESHOLD:
            return None
        from ..filters.graph import GraphFilterIndex

        return self._derived("index", lambda: GraphFilterIndex(ef_search=default_graph_beam(self.p)).fit(
            self.class_embeddings_, self.alpha_))

    def use_filter_index(self, index) -> None:
        """Search with the fitted ``index`` (built on these ``class_embeddings_`` / ``alpha_``, e.g.
        chosen on validation and saved with the model) until those arrays are replaced."""
        self._caches()["index"] = (self.class_embeddings_, self.alpha_, index)

    def embeddings_t(self) -> np.ndarray:
        """``class_embeddings_`` alpha-scaled and transposed to ``(d, C) float32``, the exact filter's layout
        (cached; rebuilt when either array is replaced)."""
        return self._derived("et", lambda: transpose_embeddings(self.class_embeddings_, self.alpha_))

    def byte_codes(self):
        """The byte codes of the exact filter's layout (:func:`.filter_codes.encode_classes`: the batch
        filter's prefilter), or None where they do not apply or did not pay (cached like the layout)."""
        return self._derived("codes", lambda: encode_classes(self.embeddings_t()))

    def filter_embedded(self, F: np.ndarray, p: int, cands: np.ndarray, dist: np.ndarray) -> None:
        """Filter step of query embeddings ``F (n, d) float32`` into ``cands (n, p) int64`` class indices
        and ``dist (n, p) float32``: the exact scan (a batch through the byte codes, the same lists; a batch
        whose codes left too many classes to refine turns them off for this model), or the filter index
        at many classes."""
        index = self.filter_index()
        if index is None:
            codes = self.byte_codes() if len(F) >= CODES_MIN_BATCH else None
            if codes is None:
                filter_batch_t(F, self.embeddings_t(), self.alpha_, p, cands, dist)
            elif not worth_it(filter_codes_batch(F, self.embeddings_t(), self.alpha_, codes, p, cands, dist),
                              self.n_classes_):
                self._caches()["codes"] = (self.class_embeddings_, self.alpha_, None)
        else:
            index.search(F, p, out_cls=cands, out_dist=dist)
