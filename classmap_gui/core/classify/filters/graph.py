"""A graph filter index: ClassMap's filter (the ``p`` nearest classes by weighted L1) as an HNSW search.

At 10^5 real hand-pose classes the IVF index (``kernels.ivf_lists``) does not prune: a query's p nearest
class embeddings are spread over the whole k-means partition, so recall@p 0.99 needed every list
(docs/scale.md). A navigable small-world graph follows neighbourhoods instead of cells: each class
embedding links to its nearest others and a search walks the graph from an entry point, keeping the
``ef_search`` best seen. This wraps faiss ``IndexHNSWFlat`` with ``METRIC_L1`` (the library's HNSW;
writing our own in numba would only repeat it) over the alpha-scaled class embeddings, so its
distances are exactly ClassMap's ``sum_i alpha_i |f_i - e_i|`` (float32), and only membership of the
top p is approximate. ``bench scale --data hand-pose`` chooses ``ef_search`` on validation queries
by recall@p against the exact filter.

:class:`GraphFilterIndex` is a :class:`~.base.FilterIndex` (kind ``hnsw``). Its saved state is the graph as
faiss's own serialisation (a ``uint8`` buffer parsed by faiss, no pickle), so a loaded model searches the same
graph without rebuilding it. faiss (``faiss-cpu``) is a required dependency, carried by the installer; where it
is missing anyway, building or loading a graph raises one ``ConfigError`` saying so (:func:`require_faiss`),
and loading a saved model whose filter is a graph fails with that message instead of quietly searching
another index.

Two walks of the same graph (parameter ``walk``): ``faiss`` (faiss's own search over the float32 vectors)
and ``codes`` (:mod:`.graph_walk`: the same beam search in numba over uint8 codes stored next to each
node's links, then an exact float32 re-rank of the ``ef`` kept). At 10^5 real hand-pose classes both
reach the same recall@40 at the same beam, the codes walk in half the time or less: a faiss expansion
reads 64 vectors from 64 random places, the codes walk one contiguous block (docs/scale.md). Its block
costs ``C x 2m x Dc`` bytes of memory (615 MB at 10^5 classes, m = 32, d = 85), derived from the graph on
first use and never saved.
"""
from __future__ import annotations

from numbers import Integral

import numpy as np

from ...guards.constraints import Interval, StrOptions, validate_params
from ...errors import ConfigError
from .base import FilterIndex, checked_embeddings
from ..kernels.graph_walk import walk_arrays, walk_batch, walk_one

#: the ways to walk the graph (module docstring)
WALKS = ("codes", "faiss")


def _check_walk(walk) -> str:
    if walk not in WALKS:
        raise ConfigError(f"graph walk must be one of {', '.join(WALKS)}, got {walk!r}")
    return walk


def default_beam(p: int) -> int:
    """The search beam for ``p`` candidates when ``ef_search`` is unset: ``max(2p, 160)``, what reached
    recall@p 0.99 on validation queries of real hand-pose class embeddings at 10^4-10^5 classes for p from
    10 to 320 (2p at p = 320, 6p at p = 20; docs/scale.md)."""
    return max(2 * int(p), 160)


def require_faiss(what: str = "the graph (HNSW) filter index"):
    """The faiss module, or a ConfigError saying that ``what`` needs it and how to install it."""
    try:
        import faiss
    except ImportError:
        raise ConfigError(f"{what} needs the faiss library, which is not installed here: pip install faiss-cpu "
                          "(a dependency of classmap-studio; reinstalling classmap-studio brings it)") from None
    return faiss


class GraphFilterIndex(FilterIndex):
    """Nearest classes by weighted L1 through an HNSW graph (faiss ``IndexHNSWFlat``, ``METRIC_L1``).

    Parameters: ``m`` links per node (faiss ``M``), ``ef_construction`` the build's beam, ``ef_search`` the
    search beam (None: :func:`default_beam` of the p searched for; at least ``p`` is used: a beam narrower
    than the answer cannot hold it), ``walk`` ``codes`` or ``faiss`` (module docstring). Learned (saved):
    ``alpha_ (d,) float32``, ``n_classes_``, ``graph_`` (faiss's serialisation as ``uint8``: links and the
    alpha-scaled embeddings); the faiss index and the codes walk's block are derived from it.
    """

    kind = "hnsw"
    _parameter_constraints: dict = {
        "m": [Interval(Integral, 2, 256, closed="both")],
        "ef_construction": [Interval(Integral, 1, 100_000, closed="both")],
        "ef_search": [Interval(Integral, 1, 100_000, closed="both"), None],
        "walk": [StrOptions(set(WALKS))],
    }

    def __init__(self, m: int = 32, ef_construction: int = 80, ef_search: int | None = None, walk: str = "codes"):
        self.m = m
        self.ef_construction = ef_construction
        self.ef_search = ef_search
        self.walk = walk

    def fit(self, embeddings: np.ndarray, alpha: np.ndarray) -> "GraphFilterIndex":
        """Index class embeddings ``(C, d) float32`` under weights ``alpha (d,) >= 0``."""
        validate_params(self)
        a, scaled = checked_embeddings(embeddings, alpha, at_least_one=True)
        faiss = require_faiss()
        index = faiss.IndexHNSWFlat(scaled.shape[1], int(self.m), faiss.METRIC_L1)
        index.hnsw.efConstruction = int(self.ef_construction)
        index.add(scaled)
        self.alpha_, self.n_classes_ = a, len(scaled)
        self.graph_ = np.asarray(faiss.serialize_index(index), np.uint8)
        self._derive(index, scaled)
        return self

    def extend(self, embeddings: np.ndarray, alpha: np.ndarray) -> "GraphFilterIndex":
        """Insert the classes after the indexed ones as new nodes (faiss ``add``: each linked to its nearest
        nodes by the same beam as the build), no rebuild of the rest of the graph."""
        a, scaled = checked_embeddings(embeddings[self.n_classes_:], alpha)
        index = self.__dict__.get("_index")
        if index is None or not np.array_equal(a, self.alpha_):
            return self.fit(embeddings, alpha)
        index.add(scaled)
        self.n_classes_ = int(index.ntotal)
        self.graph_ = np.asarray(require_faiss().serialize_index(index), np.uint8)
        self._derive(index, np.vstack([self.scaled(), scaled]))
        return self

    def _derive(self, index, scaled: np.ndarray) -> None:
        for key in ("_walk_args", "_faiss_params"):
            self.__dict__.pop(key, None)
        self.__dict__["_index"], self.__dict__["_scaled"] = index, scaled

    def validate_state(self) -> None:
        g = np.asarray(self.graph_)
        if g.dtype != np.uint8 or g.ndim != 1:
            raise ValueError("GraphFilterIndex: graph_ must be a uint8 buffer")

    def after_load(self) -> None:
        """The faiss index from ``graph_``; a ConfigError where faiss is missing (:func:`require_faiss`: the
        model needs a library this install lacks), a ValueError where the buffer is not an L1 HNSW graph of
        ``n_classes_`` rows of ``len(alpha_)`` dimensions."""
        faiss = require_faiss("this model's filter index (an HNSW graph)")
        try:
            index = faiss.deserialize_index(np.ascontiguousarray(self.graph_, np.uint8))
        except RuntimeError as e:
            raise ValueError(f"the saved graph filter index is unreadable: {str(e)[:120]}") from None
        if (not isinstance(index, faiss.IndexHNSWFlat) or index.metric_type != faiss.METRIC_L1
                or index.ntotal != int(self.n_classes_) or index.d != len(self.alpha_)):
            raise ValueError("the saved graph filter index does not match its class count and dimensions")
        self._check_fitted_arrays(int(index.ntotal), int(index.d))
        self._derive(index, index.reconstruct_n(0, index.ntotal))

    def scaled(self) -> np.ndarray:
        return self.__dict__["_scaled"]

    def _search(self, F: np.ndarray, k: int, cls: np.ndarray, dist: np.ndarray) -> None:
        """The graph walk (exact L1 distances of what it finds; membership approximate)."""
        ef = max(int(self.ef_search) if self.ef_search is not None else default_beam(k), k)
        if _check_walk(self.walk) == "codes":
            walk = walk_one if len(F) == 1 else walk_batch
            walk(F[0] if len(F) == 1 else F, self.alpha_, *self._codes_walk(), ef, cls, dist)
            return
        cached = self.__dict__.get("_faiss_params")  # one faiss parameter object per beam (its creation costs ~5 us a query)
        if cached is None or cached[0] != ef:
            cached = self.__dict__["_faiss_params"] = (ef, require_faiss().SearchParametersHNSW(efSearch=ef))
        # faiss writes straight into the (C-contiguous int64 / float32) outputs
        self.__dict__["_index"].search(F * self.alpha_, k, params=cached[1], D=dist, I=cls)
        if cls[:, -1].min() < 0:  # fewer than k found (-1 slots at the end): only in a disconnected graph
            dist[cls < 0] = np.inf

    def _codes_walk(self) -> tuple:
        """The arguments of the codes walk after alpha (derived from the graph once, then kept; not saved)."""
        args = self.__dict__.get("_walk_args")
        if args is None:
            args = self.__dict__["_walk_args"] = walk_arrays(require_faiss(), self.__dict__["_index"], self.scaled())
        return args


__all__ = ["WALKS", "GraphFilterIndex", "default_beam", "require_faiss"]
