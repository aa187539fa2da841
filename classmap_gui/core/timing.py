"""Wall-clock timing helpers shared by the benchmarks and the measured speed-up training reports
(:func:`classmap_gui.core.evaluation.measure_latency_speedup`): medians of repeated runs after a
warm-up, so a number is not the first call's compile or cache miss."""
from __future__ import annotations

import time
from typing import Callable

import numpy as np


def time_per_item(fn: Callable, Q: np.ndarray, repeats: int = 5) -> float:
    """Median over ``repeats`` of the mean seconds of ``fn(x)`` over the rows of ``Q`` (after a warm-up)."""
    for x in Q[:20]:
        fn(x)
    runs = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for x in Q:
            fn(x)
        runs.append((time.perf_counter() - t0) / len(Q))
    return float(np.median(runs))


def median_time(fn: Callable, repeats: int = 5) -> float:
    """Median seconds of ``fn()`` over ``repeats`` runs after one warm-up run."""
    fn()
    ts = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return float(np.median(ts))


def best_of_threads(measure: Callable[[], float]) -> float:
    """The smaller of ``measure()`` run with one thread and with the default, for BLAS (brute force's
    GEMV/GEMM) and numba (ClassMap's batch kernels split queries over ``numba.get_num_threads()``) alike:
    one small GEMV does not gain from threads, a GEMM does, so each side of a comparison gets its better
    setting."""
    import numba
    from threadpoolctl import threadpool_limits

    out = []
    n_default = numba.get_num_threads()
    for limit in (1, None):
        with threadpool_limits(limit):
            numba.set_num_threads(1 if limit == 1 else n_default)
            try:
                out.append(measure())
            finally:
                numba.set_num_threads(n_default)
    return min(out)
