"""``classmap bench scale``: the ClassMap filter step at 10^4-10^5 classes, exact scans vs the IVF index.

Synthetic class embeddings shaped like ClassMap's (Athitsos et al. 2007, Eqs. 1-4 and 9): each of
the d coordinates of a class is a reference classifier's (median) response, so classes that look
alike respond alike. Classes get latent positions ``z (C, latent)``; a reference classifier's
response is ``tanh(1.5 z . w_i)`` plus 0.05 independent noise (bounded margins, correlated across
classifiers, intrinsic dimension ``latent`` < d). Boosting weights decay as AdaBoost's do:
``alpha_i = exp(-0.04 i) * U(0.5, 1.5)``. A query is its class's embedding plus Gaussian noise of
``noise`` times each coordinate's spread across classes (a pattern scatters around its class median).

For each class count, from one run:

* **selection on validation queries** (drawn apart from the measured ones): for each candidate
  ``nlist`` and re-rank factor the smallest candidate ``nprobe`` whose mean recall@p reaches
  ``target_recall``, then the pair whose pick is fastest on those validation queries (the
  ``selection`` object);
* **exact baselines** (``exact_ms``): ClassMap's one exact filter (``filter_one``; batch:
  ``exact_batch_filter``), its numpy twin, and faiss ``IndexFlat`` with ``METRIC_L1`` on 1 and 2
  threads where faiss is installed; ``exact_fastest`` names the fastest single-query one;
* the index's build time, single-query latency through :meth:`~classmap_gui.core.classify.filters.base.FilterIndex.search` (what ClassMap
  calls) and batch latency per query, recall@p against the exact top-p (mean, min);
* ``speedup_single``: per round, the fastest exact scan's mean single-query latency over the index's
  (``rounds``, ``median``, ``min``, ``max``, load before and after); ``speedup_batch`` likewise
  against the fastest exact batch (all threads).

The measured (test) queries are drawn with their own ``test_seed`` around the same class embeddings,
apart from the validation queries of ``seed``.

Exact and index timings are interleaved in rounds so background load hits both alike. A
single-query latency is the mean over the queries of each query's fastest round
(:func:`latency_ms`); a batch latency is the fastest round. The machine's load average is
recorded next to the figures.
"""
from __future__ import annotations

import os
import time

import numba as nb
import numpy as np

from ..core.classify.classmap.ops import filter_exact
from ..core.classify.kernels.exact_filter import filter_batch_t, filter_one, filter_scratch, transpose_embeddings
from ..core.errors import ConfigError
from ..core.progress import ProgressFn, StopFn, check_stop, report
from ..core.selection.splits import check_fresh, row_ids
from ..core.timing import load_average, ratio, rounds_of
from .ivf_selection import NPROBE_FRACTIONS, TIE, each_query as _each_query, exact_topp, latency_ms, recall_at_p, select_ivf  # noqa: F401 - the bench's API
from .common import LoadDuring
from .scale_real import REAL_D, REAL_OPTIONS

OPTIONS = {
    "classes": ("10000,100000", "class counts, comma separated"),
    "d": (45, "embedding dimension (reference classifiers)"),
    "p": (40, "candidates kept by the filter"),
    "queries": (300, "measured query embeddings per class count"),
    "val_queries": (1000, "validation query embeddings (for choosing nlist and nprobe), apart from the measured ones"),
    "target_recall": (0.99, "mean recall@p the chosen nlist/nprobe must reach on the validation queries"),
    "noise": (0.3, "query noise, in units of each coordinate's spread across classes"),
    "latent": (12, "intrinsic dimension of the class embeddings"),
    "nlist": (None, "IVF lists, comma separated candidates (default 3.2 sqrt(C) x 0.5, 1, 2)"),
    "nprobe": (None, "IVF lists scanned per query, comma separated candidates (default 1-50%% of nlist)"),
    "rerank": ("1.25,1.5,2", "IVF: candidates for the factor r, rerank r * p code-nearest classes exactly"),
    "sweep": ("", "also time these nprobe on the measured queries, comma separated (recall/latency curve)"),
    "rounds": (5, "interleaved timing rounds (per query the fastest round counts)"),
    "seed": (0, "random seed (class embeddings, validation queries)"),
    "test_seed": (1, "seed of the measured (test) queries, drawn apart around the same class embeddings; must "
                     "differ from seed"),
}
OPTIONS.update(REAL_OPTIONS)  # --data hand-pose: real class embeddings (scale_real)
#: nlist candidates as multiples of 3.2 sqrt(C) (when --nlist is not given)
NLIST_FACTORS = (0.5, 1.0, 2.0)


def synthetic_embeddings(n_classes: int, d: int = 45, *, n_queries: int = 200, noise: float = 0.3,
                         latent: int = 12, seed: int = 0):
    """``(E (C, d) float32, alpha (d,) float32, F (n_queries, d) float32, y (n_queries,) int64)``."""
    rng = np.random.default_rng(seed)
    Z = rng.standard_normal((n_classes, latent), dtype=np.float32)
    W = (rng.standard_normal((latent, d), dtype=np.float32) / np.float32(np.sqrt(latent)))
    E = np.tanh(1.5 * (Z @ W))
    E += 0.05 * rng.standard_normal((n_classes, d), dtype=np.float32)
    alpha = (np.exp(-0.04 * np.arange(d)) * rng.uniform(0.5, 1.5, d)).astype(np.float32)
    F, y = queries(E, n_queries, noise, rng)
    return E.astype(np.float32), alpha, F, y


def queries(E: np.ndarray, n: int, noise: float, rng) -> tuple[np.ndarray, np.ndarray]:
    """``(F (n, d) float32, y (n,) int64)``: query embeddings around the class embeddings ``E (C, d)``, drawn
    with ``rng`` (a Generator, or a seed: a fresh test part has its own)."""
    rng = np.random.default_rng(rng)
    y = rng.integers(0, len(E), n)
    F = E[y] + np.float32(noise) * E.std(axis=0) * rng.standard_normal((n, E.shape[1]), dtype=np.float32)
    return F.astype(np.float32), y.astype(np.int64)


def test_queries(E: np.ndarray, n: int, noise: float, test_seed: int) -> tuple[np.ndarray, np.ndarray]:
    """The measured (test) queries: :func:`queries` drawn with their own ``test_seed``."""
    return queries(E, n, noise, int(test_seed))


def _faiss():
    """The faiss module, or None where it is not installed (the faiss baselines are then left out)."""
    try:
        import faiss
    except ImportError:
        return None
    return faiss


def _parse_ints(value, flag: str) -> list[int]:
    if value is None or value == "":
        return []
    if isinstance(value, (int, np.integer)):
        return [int(value)]
    try:
        return [int(float(c)) for c in str(value).split(",") if c.strip()]
    except ValueError as exc:
        raise ConfigError(f"{flag} expects integers like 10000,100000, got {value!r}") from exc


def _parse_floats(value, flag: str) -> list[float]:
    try:
        out = [float(c) for c in str(value).split(",") if c.strip()]
    except ValueError as exc:
        raise ConfigError(f"{flag} expects numbers like 1.5,2, got {value!r}") from exc
    if not out or min(out) < 1:
        raise ConfigError(f"{flag} needs factors >= 1, got {value!r}")
    return out


def _parse_classes(classes) -> list[int]:
    out = _parse_ints(classes, "--classes")
    if not out or min(out) < 2:
        raise ConfigError(f"--classes needs class counts >= 2, got {classes!r}")
    return out


def _baselines(E, alpha, F, A, Qa, k, threads: int):
    """Exact single-query scans ``{name: (fn(i), n_queries)}``, each timed over queries ``0..n``: the app's
    one filter (``filter_one``), its numpy twin (``numpy``, what predict.py runs) and faiss."""
    faiss = _faiss()
    nq = len(F)
    topd, topc = np.empty(k, np.float32), np.empty(k, np.int64)
    ET, acc = transpose_embeddings(E, alpha), filter_scratch(E.shape[1])
    out = {"filter_one": (lambda i: filter_one(F[i], ET, alpha, k, acc, topd, topc), nq),
           "numpy": (lambda i: filter_exact(F[i:i + 1], E, alpha, k), min(nq, 50))}
    if faiss is not None:
        flat = faiss.IndexFlat(A.shape[1], faiss.METRIC_L1)
        flat.add(A)
        for t in (1, 2) if threads >= 2 else (1,):
            def one(i, t=t):
                faiss.omp_set_num_threads(t)
                flat.search(Qa[i:i + 1], k)
            out[f"faiss_flat_l1_{t}thread" + ("s" if t > 1 else "")] = (one, min(nq, 100))
    return out


def run(*, progress: ProgressFn = None, should_stop: StopFn = None, **options) -> dict:
    """Run the benchmark (options: ``OPTIONS``); returns the JSON-ready result."""
    o = {k: v for k, (v, _) in OPTIONS.items()}
    o.update(options)
    if o.get("data"):  # real class embeddings: hand-pose at 10^4-10^5 classes
        from .scale_real import run_real

        if "val_queries" in options:
            o["real_val_queries"] = options["val_queries"]
        if "d" not in options:  # 10^5 real classes need more references than the synthetic default
            o["d"] = REAL_D
        out = run_real(o, progress, should_stop)
        return {"benchmark": "scale", "options": {k: o[k] for k in OPTIONS}, "load_average": list(os.getloadavg()),
                "cpu_count": os.cpu_count(), "threads": min(2, nb.config.NUMBA_NUM_THREADS),
                "selection": {"split": "validation", **out["selection"]}, "real": out["real"]}
    counts = _parse_classes(o["classes"])
    d, p, nq, nv = int(o["d"]), int(o["p"]), int(o["queries"]), int(o["val_queries"])
    target, rounds = float(o["target_recall"]), int(o["rounds"])
    if p < 1 or nq < 1 or d < 1 or nv < 1 or rounds < 1:
        raise ConfigError("d, p, queries, val_queries and rounds must be >= 1")
    check_fresh({"seed": o["test_seed"]}, validation={"seed": o["seed"]})
    if not 0 < target <= 1:
        raise ConfigError(f"--target-recall must be in (0, 1], got {target}")
    faiss = _faiss()
    threads = min(2, nb.config.NUMBA_NUM_THREADS)
    rows, selections = [], []
    for ci, C in enumerate(counts):
        base, step = ci / len(counts), 1 / len(counts)
        report(progress, base, f"{C} classes: data")
        # validation queries from the seed's draw, the measured (test) queries from their own seed
        E, alpha, Fv, _ = synthetic_embeddings(C, d, n_queries=nv, noise=float(o["noise"]),
                                               latent=int(o["latent"]), seed=int(o["seed"]))
        F = np.ascontiguousarray(test_queries(E, nq, float(o["noise"]), int(o["test_seed"]))[0])
        check_fresh({"rows": row_ids(F)}, validation={"rows": row_ids(Fv)})   # the parts' rows, not only seeds
        k = min(p, C)
        A = np.ascontiguousarray(E * alpha)
        Qa = np.ascontiguousarray(F * alpha)
        exact_v, exact_cls = exact_topp(Fv * alpha, A, k), exact_topp(Qa, A, k)

        report(progress, base + 0.05 * step, f"{C} classes: choosing nlist/nprobe on validation queries")
        nlists = _parse_ints(o["nlist"], "--nlist") or sorted({max(1, int(round(f * 3.2 * np.sqrt(C))))
                                                               for f in NLIST_FACTORS})
        t = time.perf_counter()
        index, selection = select_ivf(E, alpha, Fv, exact_v, k, nlists=nlists,
                                      nprobes=_parse_ints(o["nprobe"], "--nprobe") or None, target=target,
                                      reranks=_parse_floats(o["rerank"], "--rerank"), seed=int(o["seed"]),
                                      should_stop=should_stop)
        select_s = time.perf_counter() - t
        build_s = next(c["build_s"] for c in selection["candidates"] if c["nlist"] == selection["chosen"]["nlist"])
        selections.append({"classes": C, **selection})

        baselines = _baselines(E, alpha, F, A, Qa, k, threads)
        timings: dict[str, list[float]] = {name: [] for name in (*baselines, "index", "exact_batch_filter",
                                                                 "exact_batch_faiss_flat_l1", "index_batch")}
        ET = transpose_embeddings(E, alpha)
        bc, bd = np.empty((nq, k), np.int64), np.empty((nq, k), np.float32)
        flat = None
        if faiss is not None:
            flat = faiss.IndexFlat(d, faiss.METRIC_L1)
            flat.add(A)
        for fn, _ in baselines.values():  # compile / load every kernel before timing
            fn(0)
        index.search(F[:1], k)
        load_before = load_average()
        with LoadDuring() as load:
            for r in range(rounds):
                report(progress, base + (0.5 + 0.5 * r / rounds) * step, f"{C} classes: timing")
                for name, (fn, n) in baselines.items():
                    timings[name].append(_each_query(fn, range(n)))
                timings["index"].append(_each_query(lambda f: index.search(f[None], k), F))
                nb.set_num_threads(nb.config.NUMBA_NUM_THREADS)
                t = time.perf_counter()
                filter_batch_t(F, ET, alpha, k, bc, bd)
                timings["exact_batch_filter"].append((time.perf_counter() - t) / nq)
                if flat is not None:
                    faiss.omp_set_num_threads(os.cpu_count() or 1)
                    t = time.perf_counter()
                    flat.search(Qa, k)
                    timings["exact_batch_faiss_flat_l1"].append((time.perf_counter() - t) / nq)
                t = time.perf_counter()
                got, _ = index.search(F, k)
                timings["index_batch"].append((time.perf_counter() - t) / nq)
                check_stop(should_stop)
                load.sample()
        nb.set_num_threads(nb.config.NUMBA_NUM_THREADS)
        per_round = rounds_of({key: [1e3 * float(np.mean(x)) for x in v] for key, v in timings.items() if v},
                              load_before)
        best = {key: (latency_ms(v) if isinstance(v[0], np.ndarray) else min(v) * 1e3)
                for key, v in timings.items() if v}
        exact_ms = {name: best[name] for name in baselines}
        fastest = min(exact_ms, key=exact_ms.get)
        batch_names = [n for n in ("exact_batch_filter", "exact_batch_faiss_flat_l1") if n in best]
        hits = recall_at_p(got, exact_cls)
        sweep = []
        chosen = index.nprobe
        for nprobe in _parse_ints(o["sweep"], "--sweep"):
            index.nprobe = max(nprobe, 1)
            t_ms = latency_ms([_each_query(lambda f: index.search(f[None], k), F) for _ in range(rounds)])
            rec = recall_at_p(index.search(F, k)[0], exact_cls)
            sweep.append({"nprobe": nprobe, "recall_at_p": float(rec.mean()), "recall_min": float(rec.min()),
                          "index_ms": t_ms})  # no ratio: the sweep is not timed in rounds with the exact scans
            check_stop(should_stop)
        index.nprobe = chosen
        rows.append({
            "classes": C, "d": d, "p": k, "queries": nq, "method": "ivf",
            "nlist": len(index.centroids_), "nprobe": index.nprobe_for(k), "rerank": index.rerank,
            "build_s": build_s, "selection_s": round(select_s, 1),
            "exact_ms": exact_ms, "exact_fastest": {"name": fastest, "ms": exact_ms[fastest]},
            "exact_batch_ms_per_query": {n: best[n] for n in batch_names},
            "index_ms": {"single": best["index"], "batch_per_query": best["index_batch"]},
            "recall_at_p": {"mean": float(hits.mean()), "min": float(hits.min())},
            "speedup_single": ratio(per_round, list(baselines), "index"),
            "speedup_batch": ratio(per_round, batch_names, "index_batch"),
            "sweep": sweep, "load_during": load.record(),
        })
        report(progress, base + step, f"{C} classes: done")
    return {"benchmark": "scale", "options": {k: o[k] for k in OPTIONS}, "load_average": list(os.getloadavg()),
            "cpu_count": os.cpu_count(), "threads": threads, "faiss": faiss is not None,
            "selection": {"split": "validation", "by_classes": selections}, "results": rows}
