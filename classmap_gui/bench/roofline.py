"""``classmap bench roofline``: where brute force and ClassMap sit against this machine's roofs.

Measures the machine's peak SGEMM rate (a square ``np.dot``, all threads and one) and its read bandwidth
(a numba sum over every thread: from memory, and from an array a quarter of the last-level cache), then,
per size ``C x D`` (synthetic linear bank, CM-RRC references: latency depends on neither), times in
interleaved rounds (:func:`.latency.brute_vs_classmap`) brute force and ClassMap one query at a time and
in a batch, and each stage of ClassMap's batch alone. Every row gets its flop and bytes per query (the
model below), the rate achieved, the roofline floor ``max(flop / peak, bytes / bandwidth)`` (bandwidth of
the level its working set fits in) and the share of that floor reached.

Bytes per query (float32; ``n`` the batch, ``G = ceil(d / 8)``): brute force one query ``4 C D`` (every
weight row), a batch ``4 C D / n + 4 D`` (the weights shared by the batch); ClassMap one query
``4 (d + p) D + 4 C d`` (its rows and the class embeddings), a batch ``4 D + 4 d D / 32`` (embedding:
reference rows per block of 32 queries) ``+ C d`` (filter: the embeddings per tile pass of four queries;
byte codes ``2 G C``, plus ``4 d`` per class refined exactly) ``+ 4 p D + 4 min(C, n p) D / n`` (refine:
one query row per pair, each candidate weight row once per batch). Flop: ``2 C D`` brute force; ClassMap
``2 (d + p) D`` dot products plus ``3 C d`` filter operations (the byte codes: ``3 d`` per class refined
exactly; the ``G C / 8`` psadbw instructions of a query's byte terms are no float work and are recorded apart,
``sad_instructions``, outside the floor). Where the byte codes run (a measured ``band``), both ClassMap rows
count them instead of the float32 filter: one query ``8 G C`` code bytes (a batch ``2 G C``) plus ``4 d`` bytes
and ``3 d`` flop per class refined exactly.

``docs``: a Markdown file whose roofline block (:mod:`.roofline_report`) is rewritten with the table.
"""
from __future__ import annotations

import time
from pathlib import Path

import numba as nb
import numpy as np

from ..core.progress import ProgressFn, StopFn, check_stop, report
from ..core.timing import threads
from .common import LoadDuring, machine
from .latency import ROUNDS, brute_vs_classmap, linear_bank, medians, op_limit, speedups
from .roofline_report import render, write_block

OPTIONS = {
    "sizes": ("2430x1764,2430x512", "comma-separated CxD sizes of the synthetic banks"),
    "d": (45, "reference classifiers"),
    "p": (15, "candidates"),
    "batch": (1000, "queries per batch"),
    "latency_queries": (300, "queries timed one at a time"),
    "rounds": (ROUNDS, "interleaved rounds"),
    "gemm_size": (2048, "side of the square SGEMM that measures the peak rate"),
    "dram_mb": (512, "MB read to measure the memory bandwidth"),
    "time": (True, "measure the roofs and the kernels (false: the operation and byte counts alone)"),
    "model": (None, "a folder saved by `bench classmap --set save_model=DIR`: its bank, ClassMap and test part "
                    "are timed too (accuracies checked), beside the synthetic sizes"),
    "docs": (None, "a Markdown file whose roofline block is rewritten with the table (none: no file)"),
    "seed": (0, "random seed"),
}


@nb.njit(nogil=True, fastmath=True, cache=True)
def _sum_range(a, reps, lo, hi):  # pragma: no cover - compiled
    """Sum of rows ``lo..hi`` of ``a (m, 64) float32``, ``reps`` times: 64 running sums, one vector add
    per 64 bytes read, so the loop waits on memory, not on a chain of additions."""
    acc = np.zeros(64, np.float32)
    for _ in range(reps):
        for i in range(lo, hi):
            for j in range(64):
                acc[j] += a[i, j]
    return acc.sum()


def read_gbs(nbytes: int, reps: int) -> float:
    """GB/s of summing a float32 array of ``nbytes`` ``reps`` times, split over numba's threads (best of 5)."""
    from ..core.classify.kernels.threads import even_bounds, run_split

    a = np.ones((max(1, nbytes // 256), 64), np.float32)
    bounds = even_bounds(len(a))
    run_split(_sum_range, bounds, a, 1)
    best = np.inf
    for _ in range(5):
        t0 = time.perf_counter()
        run_split(_sum_range, bounds, a, reps)
        best = min(best, time.perf_counter() - t0)
    return a.nbytes * reps / best / 1e9


def peak_gflops(n: int) -> float:
    """GFLOP/s of an ``n x n`` float32 ``np.dot`` (best of 5 after one warm-up)."""
    A = np.random.default_rng(0).standard_normal((n, n), dtype=np.float32)
    out = np.empty_like(A)
    np.dot(A, A, out=out)
    best = np.inf
    for _ in range(5):
        t0 = time.perf_counter()
        np.dot(A, A, out=out)
        best = min(best, time.perf_counter() - t0)
    return 2.0 * n ** 3 / best / 1e9


def llc_bytes() -> int:
    """The last-level cache's size in bytes (Linux sysfs), or 32 MB when unknown."""
    for index in sorted(Path("/sys/devices/system/cpu/cpu0/cache").glob("index*"), reverse=True):
        try:
            size = (index / "size").read_text().strip()
        except OSError:
            continue
        mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(size[-1:], 1)
        return int(size.rstrip("KMG")) * mult
    return 32 << 20


def measure_machine(gemm_size: int, dram_mb: int) -> dict:
    """The roofs: peak SGEMM GFLOP/s (the better of all threads and one; both recorded), read GB/s from
    memory and from the last-level cache."""
    llc = llc_bytes()
    out = {**machine(), "peak_gflops_all_threads": peak_gflops(gemm_size), "llc_mb": llc / 2 ** 20,
           "dram_gbs": read_gbs(int(dram_mb) << 20, 1), "llc_gbs": read_gbs(llc // 4, 20)}
    with threads(1):
        out["peak_gflops_one_thread"] = peak_gflops(gemm_size)
    # the roof is the best rate reached (on a loaded machine, threads that wait on each other can lose)
    out["peak_gflops"] = max(out["peak_gflops_all_threads"], out["peak_gflops_one_thread"])
    return out


def counts(C: int, D: int, d: int, p: int, n: int, band: float | None = None) -> dict:
    """``{(mode, method): (flop, bytes)}`` per query (the module docstring's model); ``band``: classes the
    byte codes left to refine per query (None: no codes row)."""
    G = (d + 7) // 8
    refine = (2.0 * p * D, 4.0 * p * D + 4.0 * min(C, n * p) * D / n)
    rows = {("single", "brute force"): (2.0 * C * D, 4.0 * C * D),
            ("batch", "brute force"): (2.0 * C * D, 4.0 * C * D / n + 4.0 * D),
            ("single", "ClassMap"): (2.0 * (d + p) * D + 3.0 * C * d, 4.0 * (d + p) * D + 4.0 * C * d),
            ("batch", "ClassMap"): (2.0 * (d + p) * D + 3.0 * C * d, 4.0 * D + 4.0 * d * D / 32 + C * d + refine[1]),
            ("batch", "stage: embedding"): (2.0 * d * D, 4.0 * D + 4.0 * d * D / 32),
            ("batch", "stage: filter, float32"): (3.0 * C * d, float(C * d)),
            ("batch", "stage: refine"): refine}
    if band is not None:
        codes = (3.0 * band * d, 2.0 * G * C + 4.0 * band * d)
        rows[("batch", "stage: filter, byte codes")] = codes
        # the filter both paths run: the byte codes (one query reads all of them, a batch a quarter per query)
        emb = rows[("batch", "stage: embedding")]
        rows[("single", "ClassMap")] = (2.0 * (d + p) * D + codes[0], 4.0 * (d + p) * D + 8.0 * G * C + 4.0 * band * d)
        rows[("batch", "ClassMap")] = (emb[0] + codes[0] + refine[0], emb[1] + codes[1] + refine[1])
    return rows


def _row(mode, method, flop, nbytes, ms, roofs, working_set) -> dict:
    peak = roofs.get("peak_gflops")
    bw = roofs.get("llc_gbs") if working_set <= roofs.get("llc_mb", 0) * 2 ** 20 else roofs.get("dram_gbs")
    row = {"mode": mode, "method": method, "flop": flop, "bytes": nbytes, "ms": ms}
    if peak and bw:
        t_c, t_m = flop / (peak * 1e9), nbytes / (bw * 1e9)
        row.update(floor_ms=1e3 * max(t_c, t_m), bound="compute" if t_c >= t_m else "memory")
        if ms:
            row.update(gflops=flop / (ms * 1e6), gbs=nbytes / (ms * 1e6), of_floor=row["floor_ms"] / ms)
    return row


def _median_ms(fn, reps: int = 7) -> float:
    fn()
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return 1e3 * float(np.median(ts))


def stage_times(cm, bank, X: np.ndarray) -> tuple[dict, float | None]:
    """ms per query of each stage of ClassMap's batch on ``X (n, D)`` alone (median of 7, default threads),
    and the mean number of classes the byte codes refined per query (None without codes)."""
    from ..core.classify.kernels import batch as BK
    from ..core.classify.kernels.codes import encode_classes, filter_codes_batch
    from ..core.classify.kernels.exact_filter import filter_batch_t
    from ..core.classify.classmap.refine import KERNEL_MODE

    n = len(X)
    W, b = bank.coef_, bank.intercept_
    W_emb, b_emb, refs = cm.embedding_weights(bank)
    refpos = cm.reference_positions(bank)
    p = min(int(cm.p), cm.n_classes_)
    F = np.empty((n, len(refs)), np.float32)
    cands, dist = np.empty((n, p), np.int64), np.empty((n, p), np.float32)
    cls, score, ev = np.empty((n, p), np.int64), np.empty((n, p), np.float32), np.empty(n, np.int64)
    ET = cm.current_filter().scaled_t_
    out = {"stage: embedding": _median_ms(lambda: BK.embed_batch(X, W_emb, b_emb, refs, F)) / n,
           "stage: filter, float32": _median_ms(lambda: filter_batch_t(F, ET, cm.alpha_, p, cands, dist)) / n}
    codes, band = encode_classes(ET), None
    if codes is not None:
        band = filter_codes_batch(F, ET, cm.alpha_, codes, p, cands, dist)
        out["stage: filter, byte codes"] = _median_ms(
            lambda: filter_codes_batch(F, ET, cm.alpha_, codes, p, cands, dist)) / n
    mode = KERNEL_MODE[cm.refine_strategy]
    out["stage: refine"] = _median_ms(lambda: BK.refine_ova_batch(X, W, b, F, refpos, cands, mode, cm.threshold_value,
                                                                  cls, score, ev)) / n
    return out, band


def counts_only(C: int, D: int, d: int, p: int, n: int) -> dict:
    """:func:`one_size`'s record without timings: the operation and byte counts per query alone."""
    d, p = min(d, C), min(p, C)
    rows = [_row(mode, method, flop, nbytes, None, {}, 0.0)
            for (mode, method), (flop, nbytes) in counts(C, D, d, p, n).items()]
    return {"C": C, "D": D, "d": d, "p": p, "batch": n, "op_limit": op_limit(C, D, d, p), "band": None,
            "speedup": None, "rows": rows}


def timed_size(bank, cm, X: np.ndarray, n: int, n_single: int, rounds: int, roofs: dict) -> dict:
    """The rows of one bank and ClassMap on the queries ``X``: latency rounds, stage times, counts, floors."""
    C, D = bank.coef_.shape
    t = brute_vs_classmap(bank, cm, X, n_single, batch=n, rounds=rounds)
    ms = {mode: medians(t[mode]) for mode in ("single", "batch")}
    XB = np.ascontiguousarray(X[:n] if len(X) >= n else np.resize(X, (n, D)))
    stages, band = stage_times(cm, bank, XB)
    d, p = len(cm.reference_), min(int(cm.p), C)
    rows = []
    for (mode, method), (flop, nbytes) in counts(C, D, d, p, n, band).items():
        if method == "brute force":
            got = min(ms[mode]["brute"], ms[mode]["kernel"])
        elif method == "ClassMap":
            got = ms[mode]["classmap"]
        else:
            got = stages.get(method)
        ws = 4.0 * C * D + (4.0 * n * D if mode == "batch" else 0.0)
        rows.append(_row(mode, method, flop, nbytes, got, roofs, ws))
        if method == "stage: filter, byte codes" or (method == "ClassMap" and band is not None):
            rows[-1]["sad_instructions"] = (d + 7) // 8 * C / 8
    return {"C": C, "D": D, "d": d, "p": p, "batch": n, "op_limit": op_limit(C, D, d, p), "band": band,
            "speedup": speedups(t), "threads": {m: t[m]["threads"] for m in t}, "rows": rows}


def one_size(C: int, D: int, d: int, p: int, n: int, n_single: int, rounds: int, roofs: dict, rng) -> dict:
    """:func:`timed_size` of a synthetic size (random bank, CM-RRC references, standard-normal queries)."""
    from ..core.classify.classmap.estimator import ClassMap

    bank = linear_bank(rng.standard_normal((C, D), np.float32), np.zeros(C, np.float32))
    cm = ClassMap(d=min(d, C), p=min(p, C), embedding="random", random_state=0).fit_embedding(
        bank, rng.standard_normal((C, D), np.float32), np.arange(C))
    X = rng.standard_normal((max(n, n_single), D), np.float32)
    return timed_size(bank, cm, X, n, n_single, rounds, roofs)


def model_size(path, n: int, n_single: int, rounds: int, roofs: dict) -> dict:
    """:func:`timed_size` of a saved benchmark model on its test part, with both accuracies on it."""
    from .latency_model import load_latency_model

    bank, cm, X, y, info = load_latency_model(path)
    brute = bank.classes_[np.argmax(bank.decision_function(X), axis=1)]
    acc = {"brute_force": float(np.mean(brute == y)),
           "classmap": float(np.mean(cm.predict_result(X, bank=bank).labels == y))}
    return {"model": str(path), "model_info": info, "test_queries": len(X), "accuracy": acc,
            **timed_size(bank, cm, X, n, min(n_single, len(X)), rounds, roofs)}


def parse_sizes(text: str) -> list[tuple[int, int]]:
    from ..core.errors import ConfigError

    try:
        return [tuple(int(v) for v in s.lower().split("x")) for s in str(text).split(",") if s.strip()]
    except ValueError:
        raise ConfigError(f"sizes expects comma-separated CxD pairs like 2430x1764, got {text!r}") from None


def run(*, progress: ProgressFn = None, should_stop: StopFn = None, **options) -> dict:
    """The roofline account (module docstring) as JSON; with ``docs`` the table is written there too."""
    opt = {k: v for k, (v, _) in OPTIONS.items()}
    opt.update(options)
    sizes = parse_sizes(opt["sizes"])
    rng = np.random.default_rng(int(opt["seed"]))
    timed = opt["time"] not in (False, "false", "False", "0", 0)
    report(progress, 0.0, "machine roofs")
    roofs = measure_machine(int(opt["gemm_size"]), int(opt["dram_mb"])) if timed else {}
    model = opt.get("model") not in (None, "", "none")
    result = {"bench": "roofline", "options": {k: opt[k] for k in OPTIONS if k != "docs"}, "machine": roofs,
              # no test part of its own: random queries (seed ``seed``) for the counts and timings, or the
              # saved bench-classmap model's own test part, whose seed that bench's JSON records
              "test_seed": None,
              "test_part": ("the saved model's test part (bench classmap's test_seed)" if model else
                            f"none: random queries of seed {int(opt['seed'])}, no data set"),
              "sizes": []}
    d, p, n = int(opt["d"]), int(opt["p"]), int(opt["batch"])
    with LoadDuring() as load:
        for i, (C, D) in enumerate(sizes):
            check_stop(should_stop)
            result["sizes"].append(one_size(C, D, d, p, n, int(opt["latency_queries"]), int(opt["rounds"]), roofs, rng)
                                   if timed else counts_only(C, D, d, p, n))
            report(progress, (i + 1) / (len(sizes) + 1), f"{C} x {D}")
            load.sample()
        if opt["model"] not in (None, "", "none") and timed:
            result["sizes"].append(model_size(opt["model"], n, int(opt["latency_queries"]), int(opt["rounds"]), roofs))
    result["load_during"] = load.record()
    result["markdown"] = render(result)
    if opt["docs"] not in (None, "", "none"):
        write_block(opt["docs"], result["markdown"])
    return result
