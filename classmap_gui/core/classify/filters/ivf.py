"""The filter index: ClassMap's filter step (the ``p`` nearest classes by weighted L1) as a search.

The filter ranks classes by ``sum_i alpha_i |f_i - e_i|`` between the query embedding ``f (d,)``
and each class embedding ``e``. With ``alpha >= 0`` that is plain L1 between ``alpha * f`` and
``alpha * e``, so the index stores the alpha-scaled class embeddings once and any L1
nearest-neighbour search serves the filter (the paper's closing suggestion: a sublinear filter).

:class:`FilterIndexBase` is the one interface of the index types (``fit(embeddings, alpha)``,
``search(F, p, out_cls=, out_dist=)``, ``get_params``, ``method_``): the input checks, the ``p > C``
padding and the output arrays are there once; a type only says how it finds the ``k <= C`` nearest.
:class:`FilterIndex` picks the search by class count: the exact filter kernels (``filter_kernels``,
the same bits as ClassMap's own filter) below ``threshold`` classes, the IVF index (``filter_ivf``: uint8 codes, exact re-rank; no extra
dependency) from there on. ClassMap's default from ``DEFAULT_THRESHOLD`` classes is the HNSW graph of
``filter_graph`` (on real class embeddings the IVF lists do not prune: docs/scale.md); this IVF index, and
with one list the quantised exact scan, remain candidates ``bench scale --data hand-pose`` measures. The
speed-up and recall at 10^5 synthetic classes against the fastest exact scan (padded, 1 or 2 threads, faiss
``IndexFlat`` L1) are measured by ``classmap bench scale`` and reported in docs/scale.md.
"""
from __future__ import annotations

import math

import numpy as np

from ...errors import ConfigError, NotFittedError
from ..kernels.ivf_lists import IVFLists
from ..kernels.exact_filter import filter_batch_t

METHODS = ("auto", "exact", "ivf")


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
#: class count from which ``auto`` uses the IVF index: below it the fused exact scan is about as fast (bench
#: scale: ~3x at 10^4 classes). ClassMap's own filter from this count is an HNSW graph (``filter_step``,
#: ``filter_graph``): on real class embeddings the IVF lists did not prune (docs/scale.md)
DEFAULT_THRESHOLD = 20_000
#: default nprobe = this fraction of the lists: what ``bench scale`` chose on its validation queries at
#: 10^5 classes (71 of 1012 lists for recall@40 >= 0.99) ...
IVF_PROBE_FRACTION = 0.07
#: ... but at least enough lists to hold this many times p rows on average (small indexes probe more)
IVF_MIN_ROWS_PER_CANDIDATE = 50
#: IVF re-ranks exactly the ``rerank * p`` rows nearest by code (``bench scale``'s validation choice at 10^5
#: classes; 1.25 and 2 reach the same recall there, the partition and not the coding limits it)
DEFAULT_RERANK = 1.25


class FilterIndexBase:
    """The interface of every filter index: nearest classes by weighted L1 over alpha-scaled class embeddings.

    A subclass lists its constructor parameters in ``_params``, fits ``alpha_ (d,)``, ``scaled_ (C, d)``,
    ``n_classes_`` and ``method_`` in ``fit(embeddings, alpha)``, and implements :meth:`_search`."""

    _params: tuple[str, ...] = ()

    def get_params(self) -> dict:
        """The constructor's parameters, as stored."""
        return {k: getattr(self, k) for k in self._params}

    def _search(self, F: np.ndarray, k: int, cls: np.ndarray, dist: np.ndarray) -> None:
        """The ``k <= C`` nearest classes of the C-contiguous unscaled queries ``F (n, d) float32`` into the
        C-contiguous ``cls (n, k) int64`` / ``dist (n, k) float32``, ascending."""
        raise NotImplementedError

    def search(self, F: np.ndarray, p: int, *, out_cls: np.ndarray | None = None,
               out_dist: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """The ``p`` nearest classes of each query embedding.

        F : ``(n, d) float32`` query embeddings (unscaled, as ClassMap computes them), or one ``(d,)``.
        Returns ``(classes (n, p) int64, distances (n, p) float32)``, ascending weighted L1 distance
        (exact distances for every method; an approximate index's membership is approximate). Optional
        ``out_*`` arrays are filled and returned. When ``p`` exceeds the class count the extra slots hold
        class -1 and distance +inf.
        """
        if not hasattr(self, "scaled_"):
            raise NotFittedError(f"the {type(self).__name__} is not built yet: call fit(embeddings, alpha)")
        F, p = checked_queries(F, self.scaled_.shape[1], p)
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


class FilterIndex(FilterIndexBase):
    """Nearest classes by weighted L1: an exact scan or an IVF index over alpha-scaled embeddings.

    Parameters (stored verbatim): ``method`` in ``auto|exact|ivf``; ``threshold`` class count from
    which ``auto`` uses IVF; IVF: ``nlist`` lists (``None``: 3.2 sqrt(C)), ``nprobe`` lists scanned
    per query (``None``: ``IVF_PROBE_FRACTION`` of the lists, and at least enough for
    ``IVF_MIN_ROWS_PER_CANDIDATE * p`` rows), ``rerank`` (the ``ceil(rerank * p)`` code-nearest rows
    are re-ranked exactly), ``n_iter`` k-means passes, ``random_state`` for k-means.

    Learned: ``alpha_ (d,) float32``, ``scaled_ (C, d) float32`` = embeddings * alpha (exact: also its
    transpose ``scaled_t_ (d, C)``, :func:`.filter_kernels.transpose_embeddings`'s layout),
    ``method_`` (``"exact"`` or ``"ivf"``), ``n_classes_``; IVF: ``lists_`` (:class:`IVFLists`:
    ``centroids (nlist, d)``, ``starts (nlist + 1,)``, ``ids (C,)``).
    """

    _params = ("method", "threshold", "nlist", "nprobe", "rerank", "n_iter", "random_state")

    def __init__(self, method: str = "auto", threshold: int = DEFAULT_THRESHOLD, nlist: int | None = None,
                 nprobe: int | None = None, rerank: float = DEFAULT_RERANK, n_iter: int = 15,
                 random_state: int | None = 0):
        self.method = method
        self.threshold = threshold
        self.nlist = nlist
        self.nprobe = nprobe
        self.rerank = rerank
        self.n_iter = n_iter
        self.random_state = random_state

    def fit(self, embeddings: np.ndarray, alpha: np.ndarray) -> "FilterIndex":
        """Index class embeddings ``(C, d) float32`` under weights ``alpha (d,) >= 0``."""
        if self.method not in METHODS:
            raise ConfigError(f"unknown filter index method {self.method!r}; choose one of {', '.join(METHODS)}")
        self.alpha_, self.scaled_ = checked_embeddings(embeddings, alpha)
        self.n_classes_ = C = self.scaled_.shape[0]
        self.method_ = self.method if self.method != "auto" else ("ivf" if C >= int(self.threshold) else "exact")
        if self.method_ == "ivf":
            nlist = int(self.nlist) if self.nlist is not None else int(round(3.2 * np.sqrt(C)))
            if (nlist < 1 or not float(self.rerank) >= 1 or int(self.n_iter) < 0
                    or (self.nprobe is not None and int(self.nprobe) < 1)):
                raise ConfigError(f"IVF needs nlist >= 1, nprobe >= 1, rerank >= 1, n_iter >= 0; got "
                                  f"{self.nlist}, {self.nprobe}, {self.rerank}, {self.n_iter}")
            rng = np.random.default_rng(self.random_state)
            self.lists_ = IVFLists.build(self.scaled_, nlist, int(self.n_iter), rng)
        else:
            self.scaled_t_ = np.ascontiguousarray(self.scaled_.T)   # the exact filter's (d, C) layout
        return self

    def nprobe_for(self, p: int) -> int:
        """Lists an IVF search for ``p`` candidates scans (``nprobe``, or the default rule)."""
        nlist = self.lists_.nlist
        if self.nprobe is not None:
            return max(1, min(int(self.nprobe), nlist))
        by_rows = -(-IVF_MIN_ROWS_PER_CANDIDATE * p * nlist // max(self.n_classes_, 1))
        return max(1, min(nlist, max(math.ceil(IVF_PROBE_FRACTION * nlist), by_rows)))

    def _search(self, F: np.ndarray, k: int, cls: np.ndarray, dist: np.ndarray) -> None:
        if self.method_ == "ivf":
            self.lists_.search(F, self.alpha_, k, self.nprobe_for(k), math.ceil(float(self.rerank) * k), cls, dist)
        else:
            filter_batch_t(F, self.scaled_t_, self.alpha_, k, cls, dist)
