"""A graph filter index: ClassMap's filter (the ``p`` nearest classes by weighted L1) as an HNSW search.

At 10^5 real hand-pose classes the IVF index (``filter_ivf``) does not prune: a query's p nearest
class embeddings are spread over the whole k-means partition, so recall@p 0.99 needed every list
(docs/scale.md). A navigable small-world graph follows neighbourhoods instead of cells: each class
embedding links to its nearest others and a search walks the graph from an entry point, keeping the
``ef_search`` best seen. This wraps faiss ``IndexHNSWFlat`` with ``METRIC_L1`` (the library's HNSW;
writing our own in numba would only repeat it) over the alpha-scaled class embeddings, so its
distances are exactly ClassMap's ``sum_i alpha_i |f_i - e_i|`` (float32), and only membership of the
top p is approximate. ``bench scale --data hand-pose`` chooses ``ef_search`` on validation queries
by recall@p against the exact filter.

:class:`GraphFilterIndex` is a :class:`~.ann_index.FilterIndexBase` like :class:`~.ann_index.FilterIndex`, so
``ClassMap.use_filter_index`` takes either. :meth:`GraphFilterIndex.to_state` /
:meth:`GraphFilterIndex.from_state` give the graph as plain arrays (faiss's own serialisation, a
``uint8`` buffer parsed by faiss, no pickle) for a saved model. faiss (``faiss-cpu``) is a required
dependency, carried by the installer; where it is missing anyway, building or restoring a graph raises
one ``ConfigError`` saying so (:func:`require_faiss`), and loading a saved model whose filter is a graph
fails with that message (``Recogniser.load``) instead of quietly searching another index.

Two walks of the same graph (parameter ``walk``): ``faiss`` (faiss's own search over the float32 vectors)
and ``codes`` (:mod:`.graph_walk`: the same beam search in numba over uint8 codes stored next to each
node's links, then an exact float32 re-rank of the ``ef`` kept). At 10^5 real hand-pose classes both
reach the same recall@40 at the same beam, the codes walk in half the time or less: a faiss expansion
reads 64 vectors from 64 random places, the codes walk one contiguous block (docs/scale.md). Its block
costs ``C x 2m x Dc`` bytes of memory (615 MB at 10^5 classes, m = 32, d = 85), derived from the graph on
first use and never saved.
"""
from __future__ import annotations

import numpy as np

from ...errors import ConfigError, NotFittedError
from .ivf import FilterIndexBase, checked_embeddings
from ..kernels.graph_walk import walk_arrays, walk_batch, walk_one

#: the ways to walk the graph (module docstring)
WALKS = ("codes", "faiss")


def _check_walk(walk) -> str:
    if walk not in WALKS:
        raise ConfigError(f"graph walk must be one of {', '.join(WALKS)}, got {walk!r}")
    return walk


def require_faiss(what: str = "the graph (HNSW) filter index"):
    """The faiss module, or a ConfigError saying that ``what`` needs it and how to install it."""
    try:
        import faiss
    except ImportError:
        raise ConfigError(f"{what} needs the faiss library, which is not installed here: pip install faiss-cpu "
                          "(a dependency of classmap-studio; reinstalling classmap-studio brings it)") from None
    return faiss


class GraphFilterIndex(FilterIndexBase):
    """Nearest classes by weighted L1 through an HNSW graph (faiss ``IndexHNSWFlat``, ``METRIC_L1``).

    Parameters (stored verbatim): ``m`` links per node (faiss ``M``), ``ef_construction`` the build's
    beam, ``ef_search`` the search beam (at least ``p`` is used: a beam narrower than the answer
    cannot hold it), ``walk`` ``codes`` or ``faiss`` (module docstring). Learned: ``alpha_ (d,) float32``, ``scaled_ (C, d) float32`` = embeddings *
    alpha, ``n_classes_``, ``index_`` (the faiss index), ``method_ = "hnsw"``.
    """

    _params = ("m", "ef_construction", "ef_search", "walk")

    def __init__(self, m: int = 32, ef_construction: int = 80, ef_search: int = 128, walk: str = "codes"):
        self.m = m
        self.ef_construction = ef_construction
        self.ef_search = ef_search
        self.walk = walk

    def fit(self, embeddings: np.ndarray, alpha: np.ndarray) -> "GraphFilterIndex":
        """Index class embeddings ``(C, d) float32`` under weights ``alpha (d,) >= 0``."""
        a, scaled = checked_embeddings(embeddings, alpha, at_least_one=True)
        if int(self.m) < 2 or int(self.ef_construction) < 1 or int(self.ef_search) < 1:
            raise ConfigError(f"HNSW needs m >= 2, ef_construction >= 1, ef_search >= 1; got {self.m}, "
                              f"{self.ef_construction}, {self.ef_search}")
        _check_walk(self.walk)
        faiss = require_faiss()
        self.alpha_, self.scaled_ = a, scaled
        self.n_classes_ = len(scaled)
        index = faiss.IndexHNSWFlat(scaled.shape[1], int(self.m), faiss.METRIC_L1)
        index.hnsw.efConstruction = int(self.ef_construction)
        index.add(self.scaled_)
        self.index_ = index
        self.method_ = "hnsw"
        return self

    def _search(self, F: np.ndarray, k: int, cls: np.ndarray, dist: np.ndarray) -> None:
        """The graph walk (exact L1 distances of what it finds; membership approximate)."""
        if not hasattr(self, "index_"):
            raise NotFittedError("the graph filter index is not built yet: call fit(embeddings, alpha)")
        ef = max(int(self.ef_search), k)
        if _check_walk(self.walk) == "codes":
            walk = walk_one if len(F) == 1 else walk_batch
            walk(F[0] if len(F) == 1 else F, self.alpha_, *self._codes_walk(), ef, cls, dist)
            return
        cached = self.__dict__.get("_faiss_params")  # one faiss parameter object per beam (its creation costs ~5 us a query)
        if cached is None or cached[0] != ef:
            cached = self.__dict__["_faiss_params"] = (ef, require_faiss().SearchParametersHNSW(efSearch=ef))
        # faiss writes straight into the (C-contiguous int64 / float32) outputs
        self.index_.search(F * self.alpha_, k, params=cached[1], D=dist, I=cls)
        if cls[:, -1].min() < 0:  # fewer than k found (-1 slots at the end): only in a disconnected graph
            dist[cls < 0] = np.inf

    def _codes_walk(self) -> tuple:
        """The arguments of the codes walk after alpha (derived from the graph once, then kept; not saved)."""
        args = self.__dict__.get("_walk_args")
        if args is None:
            args = self.__dict__["_walk_args"] = walk_arrays(require_faiss(), self.index_, self.scaled_)
        return args

    # ---------------------------------------------------------------- saved-model state
    def to_state(self) -> dict:
        """The built graph as JSON numbers and arrays (``graph``: faiss's serialisation as ``uint8``)."""
        if not hasattr(self, "index_"):
            raise NotFittedError("the graph filter index is not built yet")
        return {"kind": "hnsw", **{k: v if k == "walk" else int(v) for k, v in self.get_params().items()},
                "graph": np.asarray(require_faiss().serialize_index(self.index_), np.uint8)}

    @classmethod
    def from_state(cls, state: dict, embeddings: np.ndarray, alpha: np.ndarray) -> "GraphFilterIndex":
        """Rebuild from :meth:`to_state` for these class embeddings / alpha; raises ``ConfigError`` when the
        saved graph does not hold exactly these alpha-scaled embeddings (L1, same shape and values)."""
        faiss = require_faiss()
        try:
            self = cls(m=int(state["m"]), ef_construction=int(state["ef_construction"]),
                       ef_search=int(state["ef_search"]), walk=_check_walk(state.get("walk", "faiss")))
            buf = np.ascontiguousarray(state["graph"], np.uint8)
        except (KeyError, TypeError, ValueError) as e:
            raise ConfigError(f"saved graph filter index is incomplete: {e}") from None
        if state.get("kind") != "hnsw" or buf.ndim != 1:
            raise ConfigError("saved filter index is not an HNSW graph")
        E = np.asarray(embeddings, np.float32)
        a = np.asarray(alpha, np.float32)
        try:
            index = faiss.deserialize_index(buf)
        except RuntimeError as e:
            raise ConfigError(f"saved graph filter index is unreadable: {e}") from None
        scaled = np.ascontiguousarray(E * a)
        if (not isinstance(index, faiss.IndexHNSWFlat) or index.metric_type != faiss.METRIC_L1
                or index.ntotal != len(E) or index.d != E.shape[1]):
            raise ConfigError("saved graph filter index does not match the class embeddings")
        stored = index.reconstruct_n(0, index.ntotal)
        if not np.array_equal(stored, scaled):
            raise ConfigError("saved graph filter index was built for other class embeddings")
        self.alpha_, self.scaled_, self.n_classes_, self.index_, self.method_ = a.copy(), scaled, len(E), index, "hnsw"
        return self


__all__ = ["WALKS", "GraphFilterIndex", "require_faiss"]
