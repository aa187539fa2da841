"""Choosing and measuring the IVF filter index on validation queries: recall of an index's top p against
the exact filter, single-query latency, and the (nlist, rerank, nprobe) choice. Shared by the synthetic
scale bench (``scale.py``) and the real 10^5-class one (``scale_real.py``)."""
from __future__ import annotations

import time

import numpy as np

from ..core.classify.filters.ivf import IVFFilter
from ..core.classify.kernels.exact_filter import filter_batch_t
from ..core.progress import StopFn, check_stop

#: nprobe candidates as fractions of nlist (when --nprobe is not given)
NPROBE_FRACTIONS = (0.02, 0.03, 0.04, 0.05, 0.06, 0.07, 0.08, 0.09, 0.1, 0.12, 0.15, 0.2, 0.3, 0.5)
#: validation latencies within this fraction of the fastest count as equal (then the faster build wins)
TIE = 0.05
#: a setting reaches the target recall when its validation mean does less this many standard errors of the
#: mean: a beam whose validation mean just reached 0.99 (0.9913) gave 0.9899 on the fresh test queries
RECALL_SE = 2.0
#: the rule's words, for the selection records
REACHES = f"mean recall@p less {RECALL_SE:g} standard errors (over the validation queries) reaches the target"


def recall_entry(rec: np.ndarray, target: float) -> dict:
    """``{"recall_mean", "recall_min", "recall_bound", "reaches_target"}`` of per-query recalls ``rec``: the bound
    is the mean less :data:`RECALL_SE` standard errors, what the target is held to."""
    rec = np.asarray(rec, np.float64)
    se = float(rec.std(ddof=1) / np.sqrt(len(rec))) if len(rec) > 1 else 0.0
    bound = float(rec.mean()) - RECALL_SE * se
    return {"recall_mean": float(rec.mean()), "recall_min": float(rec.min()), "recall_bound": bound,
            "reaches_target": bool(bound >= target)}


def recall_of(entry: dict) -> dict:
    """The :func:`recall_entry` keys of a curve entry (what a candidate reports of its pick)."""
    return {k: entry[k] for k in ("recall_mean", "recall_min", "recall_bound", "reaches_target")}


def fastest_reaching(candidates: list[dict]) -> int:
    """Index of the candidate to keep: the fastest (``index_ms``) of those reaching the target (all, when none
    does); within :data:`TIE` of it, the one that builds fastest (``build_s``)."""
    ok = [i for i, c in enumerate(candidates) if c["reaches_target"]] or list(range(len(candidates)))
    fastest = min(candidates[i]["index_ms"] for i in ok)
    return min((i for i in ok if candidates[i]["index_ms"] <= (1 + TIE) * fastest),
               key=lambda i: (candidates[i]["build_s"], candidates[i]["index_ms"]))


def first_reaching(curve: list[dict]) -> dict:
    """The first entry of a curve (cheapest first) that reaches the target, else the one with the best bound."""
    return next((c for c in curve if c["reaches_target"]), max(curve, key=lambda c: c["recall_bound"]))


def each_query(fn, Q) -> np.ndarray:
    """Wall-clock seconds of each call ``fn(q)``, ``(len(Q),) float64``."""
    out = np.empty(len(Q))
    clock = time.perf_counter
    for i, q in enumerate(Q):
        t = clock()
        fn(q)
        out[i] = clock() - t
    return out


def latency_ms(rounds: list[np.ndarray]) -> float:
    """Single-query latency from repeated passes over the same queries: the mean over queries of each
    query's fastest pass, in ms. A pass in which the scheduler parked us mid-call (on a shared machine
    most of the spread) then counts for nothing unless it hit that query in every pass."""
    return float(np.min(np.stack(rounds), axis=0).mean() * 1e3)


def recall_at_p(got: np.ndarray, exact: np.ndarray) -> np.ndarray:
    """Per query, the fraction of the exact top-p ``exact (n, p)`` found in ``got (n, p)``."""
    return (got[:, :, None] == exact[:, None, :]).any(axis=2).sum(axis=1) / exact.shape[1]


def exact_topp(Q: np.ndarray, A: np.ndarray, p: int) -> np.ndarray:
    """The exact top-p rows ``(n, p) int64`` of scaled queries ``Q`` among scaled rows ``A`` (the app's batch
    filter, weights 1)."""
    cls = np.empty((len(Q), p), np.int64)
    filter_batch_t(np.ascontiguousarray(Q, np.float32), np.ascontiguousarray(A.T, np.float32),
                   np.ones(A.shape[1], np.float32), p, cls, np.empty((len(Q), p), np.float32))
    return cls


def select_ivf(E, alpha, Fv, exact_v, p: int, *, nlists: list[int], nprobes: list[int] | None, target: float,
               reranks: list[float], seed: int, should_stop: StopFn = None) -> tuple[IVFFilter, dict]:
    """Choose ``nlist``, ``rerank`` and ``nprobe`` on validation queries ``Fv (m, d)`` (exact top-p ``exact_v``).

    Per ``(nlist, rerank)``: the smallest ``nprobe`` (candidates ``nprobes``, default
    ``NPROBE_FRACTIONS`` of nlist) whose mean recall@p reaches ``target`` (else the best recall);
    then the pair whose pick has the lowest single-query latency on the validation queries
    (:func:`latency_ms` of 5 passes over up to 200 of them) or, within ``TIE`` of it, the one that
    builds fastest (latencies that close are noise on a shared machine; build time is not).
    Returns the chosen index (``nprobe`` and ``rerank`` set) and the ``selection`` record.
    """
    candidates, indexes = [], []
    Fs = Fv[:200]
    for nlist in nlists:
        t = time.perf_counter()
        index = IVFFilter(nlist=nlist, random_state=seed).fit(E, alpha)
        build_s = time.perf_counter() - t
        nl = len(index.centroids_)
        grid = sorted({max(1, min(nl, int(np.ceil(f * nl)))) for f in NPROBE_FRACTIONS} | {nl}) \
            if nprobes is None else sorted({max(1, min(nl, n)) for n in nprobes})
        index.search(Fs[:1], p)
        for rerank in reranks:
            index.rerank = rerank
            curve = []
            for nprobe in grid:
                index.nprobe = nprobe
                curve.append({"nprobe": nprobe, **recall_entry(recall_at_p(index.search(Fv, p)[0], exact_v), target)})
                if curve[-1]["reaches_target"]:
                    break
                check_stop(should_stop)
            pick = first_reaching(curve)
            index.nprobe = pick["nprobe"]
            ms = latency_ms([each_query(lambda f: index.search(f[None], p), Fs) for _ in range(5)])
            entry = {"nlist": nl, "rerank": rerank, "nprobe": pick["nprobe"], **recall_of(pick),
                     "index_ms": ms, "build_s": round(build_s, 2), "nprobe_curve": curve}
            candidates.append(entry)
            indexes.append(index)
            check_stop(should_stop)
    pick = fastest_reaching(candidates)  # within TIE of the fastest, the one that builds fastest (fewer lists)
    index, entry = indexes[pick], candidates[pick]
    index.nprobe, index.rerank = entry["nprobe"], entry["rerank"]
    selection = {"split": "validation", "queries": int(len(Fv)), "timed_queries": int(len(Fs)), "target_recall": target,
                 "rule": f"per (nlist, rerank) the smallest nprobe whose {REACHES} on validation queries; "
                         "then the pair whose pick is fastest there (single queries; per query the best of 5 passes), "
                         f"or within {TIE:.0%} of it the one that builds fastest",
                 "chosen": {"nlist": entry["nlist"], "rerank": entry["rerank"], "nprobe": entry["nprobe"]},
                 "candidates": candidates}
    return index, selection
