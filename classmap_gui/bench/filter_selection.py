"""Choosing ClassMap's filter index on validation queries among kinds that search differently, each
measured for recall@p against the exact filter and single-query time (``bench scale --data hand-pose
--set filter=auto``, the default):

* ``hnsw``: faiss HNSW graphs in ClassMap's weighted L1 (:class:`..core.classify.filters.graph.GraphFilterIndex`),
  one per ``(m, ef_construction)`` of ``hnsw_grid``, each walked both ways (``walks``: faiss's own search
  and the numba walk over codes stored with the links), each with its smallest ``ef_search`` reaching the
  target (:func:`.graph_selection.select_graph`);
* ``scan``: the quantised exact scan, the floor a pruning index has to beat: every class's uint8 code
  scanned (one ``psadbw`` per 16 bytes) and the ``rerank * p`` nearest codes re-ranked in float32 (the IVF
  kernel with one list, so it is saved and restored like an IVF index); the smallest ``rerank`` of
  :data:`SCAN_RERANKS` reaching the target;
* ``ivf``: the product's own IVF index (:func:`.ivf_selection.select_ivf`, ``nlist = 3.2 sqrt(C)``);
* ``exact``: the exact float32 scan (recall 1), the reference.

Rule: among the candidates reaching the target recall on the validation queries, the fastest there
(per query the best of 3 passes over up to 200 queries); within ``TIE`` of it the one that builds
fastest. The test queries are never seen here.
"""
from __future__ import annotations

import copy
import math
import time

import numpy as np

from ..core.classify.filters.base import FilterIndex
from ..core.classify.filters.exact import ExactFilter
from ..core.classify.filters.ivf import IVFFilter
from ..core.classify.filters.graph import WALKS, GraphFilterIndex
from ..core.errors import ConfigError
from ..core.progress import StopFn, check_stop
from .graph_selection import select_graph
from .ivf_selection import (REACHES, TIE, each_query, fastest_reaching, first_reaching, latency_ms, recall_at_p,
                            recall_entry, recall_of, select_ivf)

KINDS = ("hnsw", "scan", "ivf", "exact")
#: re-rank pools of the quantised scan, as multiples of p
SCAN_RERANKS = (1.25, 1.5, 2, 3, 4, 6, 8, 12, 16)


def _timed(index, Fs: np.ndarray, p: int) -> float:
    index.search(Fs[:2], p)
    return latency_ms([each_query(lambda q: index.search(q[None], p), Fs) for _ in range(3)])


def _scan(E, alpha, Fv, exact_v, p: int, target: float, Fs, should_stop) -> tuple[FilterIndex, dict]:
    t = time.perf_counter()
    index = IVFFilter(nlist=1, nprobe=1, n_iter=0).fit(E, alpha)
    build_s = time.perf_counter() - t
    curve = []
    for r in SCAN_RERANKS:
        index.rerank = r
        curve.append({"rerank": r, **recall_entry(recall_at_p(index.search(Fv, p)[0], exact_v), target)})
        check_stop(should_stop)
        if curve[-1]["reaches_target"]:
            break
    pick = first_reaching(curve)
    index.rerank = pick["rerank"]
    return index, {"kind": "scan", "params": {"rerank": pick["rerank"]}, **recall_of(pick),
                   "index_ms": _timed(index, Fs, p), "build_s": round(build_s, 2), "rerank_curve": curve}


def select_filter(E, alpha, Fv, exact_v, p: int, *, target: float, kinds=KINDS, hnsw_grid=((32, 80),),
                  walks=WALKS, seed: int = 0, should_stop: StopFn = None) -> tuple[object, dict]:
    """Measure every kind of ``kinds`` on validation query embeddings ``Fv (m, d)`` (exact top-p ``exact_v``)
    over class embeddings ``E (C, d)`` / ``alpha`` and choose one (module docstring). Returns the chosen
    index (fitted on ``E``) and the ``selection`` record: ``chosen`` = ``{"method", ...its parameters}``,
    ``candidates`` = every measured candidate's recall, time and build seconds."""
    bad = [k for k in kinds if k not in KINDS]
    if bad or not kinds:
        raise ConfigError(f"filter kinds must be among {', '.join(KINDS)}, got {list(kinds)!r}")
    Fs = Fv[:200]
    candidates, indexes = [], []
    for kind in kinds:
        if kind == "hnsw":
            for m, efc in hnsw_grid:
                t = time.perf_counter()
                graph = GraphFilterIndex(m=int(m), ef_construction=int(efc)).fit(E, alpha)
                build_s = time.perf_counter() - t
                for walk in walks:  # one graph, walked both ways
                    index, sel = select_graph(E, alpha, Fv, exact_v, p, target=target, walk=walk, build_s=build_s,
                                              index=copy.copy(graph), should_stop=should_stop)
                    pick = next(c for c in sel["ef_curve"] if c["ef_search"] == index.ef_search)
                    candidates.append({"kind": "hnsw",
                                       "params": {k: v for k, v in sel["chosen"].items() if k != "method"},
                                       **recall_of(pick), "index_ms": _timed(index, Fs, p), "build_s": sel["build_s"],
                                       "ef_curve": sel["ef_curve"]})
                    indexes.append(index)
        elif kind == "scan":
            index, entry = _scan(E, alpha, Fv, exact_v, p, target, Fs, should_stop)
            candidates.append(entry)
            indexes.append(index)
        elif kind == "ivf":
            nlist = max(1, int(round(3.2 * math.sqrt(len(E)))))
            index, sel = select_ivf(E, alpha, Fv, exact_v, p, nlists=[nlist], nprobes=None, target=target,
                                    reranks=[1.25], seed=seed, should_stop=should_stop)
            c = sel["candidates"][0]
            candidates.append({"kind": "ivf", "params": dict(sel["chosen"]), **recall_of(c),
                               "index_ms": _timed(index, Fs, p), "build_s": c["build_s"],
                               "nprobe_curve": c["nprobe_curve"]})
            indexes.append(index)
        else:
            t = time.perf_counter()
            index = ExactFilter().fit(E, alpha)
            candidates.append({"kind": "exact", "params": {}, "recall_mean": 1.0, "recall_min": 1.0,
                               "recall_bound": 1.0, "reaches_target": True, "index_ms": _timed(index, Fs, p),
                               "build_s": round(time.perf_counter() - t, 2)})
            indexes.append(index)
        check_stop(should_stop)
    pick = fastest_reaching(candidates)
    entry = candidates[pick]
    selection = {"split": "validation", "queries": int(len(Fv)), "timed_queries": int(len(Fs)), "target_recall": target,
                 "p": int(p), "rule": f"every candidate kind with its smallest setting whose {REACHES} on validation "
                                      "queries (recall@p against the exact filter); then the fastest of those "
                                      "there (single queries, per query the best of 3 passes), or within "
                                      f"{TIE:.0%} of it the one that builds fastest",
                 "chosen": {"method": entry["kind"], **entry["params"]}, "candidates": candidates}
    return indexes[pick], selection


def build_chosen(chosen: dict, E, alpha, seed: int = 0):
    """The index ``chosen`` (a :func:`select_filter` record) fitted on the final class embeddings ``E`` / ``alpha``."""
    kind = chosen["method"]
    if kind == "hnsw":
        return GraphFilterIndex(m=chosen["m"], ef_construction=chosen["ef_construction"],
                                ef_search=chosen["ef_search"], walk=chosen.get("walk", "faiss")).fit(E, alpha)
    if kind == "scan":
        return IVFFilter(nlist=1, nprobe=1, n_iter=0, rerank=chosen["rerank"]).fit(E, alpha)
    if kind == "ivf":
        return IVFFilter(nlist=chosen["nlist"], nprobe=chosen["nprobe"], rerank=chosen["rerank"],
                         random_state=seed).fit(E, alpha)
    return ExactFilter().fit(E, alpha)


__all__ = ["KINDS", "SCAN_RERANKS", "build_chosen", "select_filter"]
