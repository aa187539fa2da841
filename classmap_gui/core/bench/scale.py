"""``classmap bench scale``: the ClassMap filter step at 10^4-10^5 classes, exact vs the L1 index.

Synthetic class embeddings shaped like ClassMap's (Athitsos et al. 2007, Eqs. 1-4 and 9): each of
the d coordinates of a class is a reference classifier's (median) response, so classes that look
alike respond alike. Classes get latent positions ``z (C, latent)``; a reference classifier's
response is ``tanh(1.5 z . w_i)`` plus 0.05 independent noise (bounded margins, correlated across
classifiers, intrinsic dimension ``latent`` < d). Boosting weights decay as AdaBoost's do:
``alpha_i = exp(-0.04 i) * U(0.5, 1.5)``. A query is its class's embedding plus Gaussian noise of
``noise`` times each coordinate's spread across classes (a pattern scatters around its class median).

For each class count it reports, from one run on the same queries:
* exact filter latency: numba fused scan (this package's, and ClassMap's own kernel when
  present), and numpy vectorised ``abs(A - q).sum(1)`` over a preallocated ``(C, d)`` float32 buffer;
* index build time, single-query and batch latency of :class:`FilterIndex` (``--method ivf``, the
  default: numba IVF on uint8 codes with exact re-rank; or ``hnsw``: faiss HNSW, L1);
* recall@p: the fraction of the exact filter's top-p classes that the index returns (mean, min);
* ``speedup`` = fastest exact single-query latency / index single-query latency (same run).

Exact and index timings are interleaved in rounds so background load hits both alike; the
machine's load average is recorded next to the figures.
"""
from __future__ import annotations

import os
import time

import numpy as np

from ..classify.ann_index import FilterIndex, _scan_batch, _scan_top, exact_filter_numpy, have_faiss
from ..errors import ConfigError
from ..progress import ProgressFn, StopFn, check_stop, report

OPTIONS = {
    "classes": ("10000,100000", "class counts, comma separated"),
    "d": (45, "embedding dimension (reference classifiers)"),
    "p": (40, "candidates kept by the filter"),
    "queries": (200, "query embeddings per class count"),
    "noise": (0.3, "query noise, in units of each coordinate's spread across classes"),
    "latent": (12, "intrinsic dimension of the class embeddings"),
    "method": ("ivf", "index to measure: ivf (numba, no extra) or hnsw (faiss)"),
    "nlist": (None, "IVF lists (default 3.2 sqrt(C))"),
    "nprobe": (None, "IVF lists scanned per query (default 8% of the lists)"),
    "rerank": (2, "IVF: rerank * p code-nearest classes re-ranked exactly"),
    "M": (24, "HNSW graph degree"),
    "ef_construction": (80, "HNSW build beam width"),
    "ef_search": (None, "HNSW search beam width (default max(64, 1.6p))"),
    "sweep": ("", "also time these nprobe (ivf) or search beam widths (hnsw), comma separated (recall/latency)"),
    "rounds": (3, "interleaved timing rounds (the best round is reported)"),
    "seed": (0, "random seed"),
}


def synthetic_embeddings(n_classes: int, d: int = 45, *, n_queries: int = 200, noise: float = 0.3,
                         latent: int = 12, seed: int = 0):
    """``(E (C, d) float32, alpha (d,) float32, F (n_queries, d) float32, y (n_queries,) int64)``."""
    rng = np.random.default_rng(seed)
    Z = rng.standard_normal((n_classes, latent), dtype=np.float32)
    W = (rng.standard_normal((latent, d), dtype=np.float32) / np.float32(np.sqrt(latent)))
    E = np.tanh(1.5 * (Z @ W))
    E += 0.05 * rng.standard_normal((n_classes, d), dtype=np.float32)
    alpha = (np.exp(-0.04 * np.arange(d)) * rng.uniform(0.5, 1.5, d)).astype(np.float32)
    y = rng.integers(0, n_classes, n_queries)
    F = E[y] + np.float32(noise) * E.std(axis=0) * rng.standard_normal((n_queries, d), dtype=np.float32)
    return E.astype(np.float32), alpha, F.astype(np.float32), y.astype(np.int64)


def _classmap_kernel():
    """ClassMap's own fused filter kernel ``(fq, E, alpha, p, topd, topc)`` if that module exists."""
    try:
        from ..classify import _classmap_kernels as K
    except ImportError:
        return None
    return getattr(K, "_filter_top", None)


def _per_query(fn, Q) -> float:
    t = time.perf_counter()
    for q in Q:
        fn(q)
    return (time.perf_counter() - t) / len(Q)


def _parse_ints(value, flag: str) -> list[int]:
    if value is None:
        return []
    if isinstance(value, (int, np.integer)):
        return [int(value)]
    try:
        return [int(float(c)) for c in str(value).split(",") if c.strip()]
    except ValueError as exc:
        raise ConfigError(f"{flag} expects integers like 10000,100000, got {value!r}") from exc


def _parse_classes(classes) -> list[int]:
    out = _parse_ints(classes, "--classes")
    if not out or min(out) < 2:
        raise ConfigError(f"--classes needs class counts >= 2, got {classes!r}")
    return out


def run(*, progress: ProgressFn = None, should_stop: StopFn = None, **options) -> dict:
    o = {k: v for k, (v, _) in OPTIONS.items()}
    o.update(options)
    counts = _parse_classes(o["classes"])
    d, p, nq = int(o["d"]), int(o["p"]), int(o["queries"])
    if p < 1 or nq < 1 or d < 1:
        raise ConfigError("d, p and queries must be >= 1")
    method = str(o["method"])
    if method not in ("ivf", "hnsw"):
        raise ConfigError(f"--method must be ivf or hnsw, got {method!r}")
    if method == "hnsw" and not have_faiss():
        raise ConfigError("bench scale --method hnsw measures the faiss index: pip install 'classmap-studio[ann]'")
    knob = "nprobe" if method == "ivf" else "ef_search"
    cm_kernel = _classmap_kernel()
    rows = []
    for ci, C in enumerate(counts):
        base = ci / len(counts)
        step = 1 / len(counts)
        report(progress, base, f"{C} classes: data")
        E, alpha, F, _ = synthetic_embeddings(C, d, n_queries=nq, noise=float(o["noise"]),
                                              latent=int(o["latent"]), seed=int(o["seed"]))
        k = min(p, C)
        A = np.ascontiguousarray(E * alpha)
        Qa = np.ascontiguousarray(F * alpha)
        report(progress, base + 0.1 * step, f"{C} classes: building the index")
        t = time.perf_counter()
        opt = lambda key: None if o[key] in (None, "") else int(o[key])  # noqa: E731
        index = FilterIndex(method=method, M=int(o["M"]), ef_construction=int(o["ef_construction"]),
                            ef_search=opt("ef_search"), nlist=opt("nlist"), nprobe=opt("nprobe"),
                            rerank=int(o["rerank"])).fit(E, alpha)
        build_s = time.perf_counter() - t
        check_stop(should_stop)

        # Exact reference answer (numba fused scan == numpy; checked in the tests).
        exact_cls = np.empty((nq, k), np.int64)
        exact_d = np.empty((nq, k), np.float32)
        _scan_batch(Qa, A, k, exact_cls, exact_d)
        topd, topc = np.empty(k, np.float32), np.empty(k, np.int64)
        buf = np.empty_like(A)
        n_np = min(nq, 50)

        timings: dict[str, list[float]] = {key: [] for key in
                                           ("exact_numba", "exact_classmap", "exact_numpy", "index",
                                            "exact_numba_batch", "index_batch")}
        for r in range(int(o["rounds"])):
            report(progress, base + (0.5 + 0.5 * r / int(o["rounds"])) * step, f"{C} classes: timing")
            timings["exact_numba"].append(_per_query(lambda q: _scan_top(q, A, k, topd, topc), Qa))
            if cm_kernel is not None:
                timings["exact_classmap"].append(_per_query(lambda f: cm_kernel(f, E, alpha, k, topd, topc), F))
            timings["exact_numpy"].append(_per_query(lambda q: exact_filter_numpy(q[None], A, k, buf), Qa[:n_np]))
            timings["index"].append(_per_query(lambda f: index.search(f[None], k), F))
            t = time.perf_counter()
            _scan_batch(Qa, A, k, exact_cls, exact_d)
            timings["exact_numba_batch"].append((time.perf_counter() - t) / nq)
            t = time.perf_counter()
            got, _ = index.search(F, k)
            timings["index_batch"].append((time.perf_counter() - t) / nq)
            check_stop(should_stop)
        best = {key: (min(v) * 1e3 if v else None) for key, v in timings.items()}
        exact_single = min(v for v in (best["exact_numba"], best["exact_classmap"], best["exact_numpy"]) if v)
        sweep = []
        for ef in _parse_ints(o["sweep"], "--sweep"):
            probe = getattr(index, knob)
            setattr(index, knob, max(ef, 1))
            t_ms = min(_per_query(lambda f: index.search(f[None], k), F) for _ in range(int(o["rounds"]))) * 1e3
            c, _ = index.search(F, k)
            setattr(index, knob, probe)
            rec = (c[:, :, None] == exact_cls[:, None, :]).any(axis=2).sum(axis=1) / k
            sweep.append({knob: ef, "recall_at_p": float(rec.mean()), "recall_min": float(rec.min()), "index_ms": t_ms,
                          "speedup_single": exact_single / t_ms})
            check_stop(should_stop)
        # recall@p of the index's candidates against the exact filter's, per query
        hits = (got[:, :, None] == exact_cls[:, None, :]).any(axis=2).sum(axis=1) / k
        rows.append({
            "classes": C, "d": d, "p": k, "queries": nq, "method": index.method_,
            "nlist": int(index.ivf_centroids_.shape[0]) if index.method_ == "ivf" else None,
            "nprobe": index._ivf_nprobe(k) if index.method_ == "ivf" else None,
            "build_s": round(build_s, 2),
            "exact_ms": {"numba": best["exact_numba"], "classmap_numba": best["exact_classmap"],
                         "numpy": best["exact_numpy"], "numba_batch_per_query": best["exact_numba_batch"]},
            "index_ms": {"single": best["index"], "batch_per_query": best["index_batch"]},
            "recall_at_p": {"mean": float(hits.mean()), "min": float(hits.min())},
            "speedup_single": exact_single / best["index"],
            "speedup_batch": best["exact_numba_batch"] / best["index_batch"],
            "sweep": sweep,
        })
        report(progress, base + step, f"{C} classes: done")
    return {"benchmark": "scale", "options": {k: o[k] for k in OPTIONS}, "load_average": list(os.getloadavg()),
            "cpu_count": os.cpu_count(), "results": rows}
