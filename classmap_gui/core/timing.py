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


def load_average() -> list[float]:
    """The 1, 5 and 15-minute load averages (``os.getloadavg``)."""
    import os

    return [round(v, 2) for v in os.getloadavg()]


def wait_for_quiet(max_wait_s: float = 600.0, threshold: float = 1.0, poll_s: float = 10.0,
                   should_stop: Callable[[], bool] | None = None) -> dict:
    """Wait (at most ``max_wait_s``) for the 1-minute load average to fall below ``threshold``:
    ``{"quiet": reached, "waited_s", "threshold", "load": at the end}`` (``--quiet-machine``)."""
    import os

    from .progress import check_stop

    t0 = time.monotonic()
    while os.getloadavg()[0] >= threshold and time.monotonic() - t0 < max_wait_s:
        check_stop(should_stop)
        time.sleep(min(poll_s, max(0.0, max_wait_s - (time.monotonic() - t0))))
    load = load_average()
    return {"quiet": load[0] < threshold, "waited_s": round(time.monotonic() - t0, 1), "threshold": threshold,
            "load": load}


def interleaved(methods: dict[str, Callable[[], object]], rounds: int = 7, items: int = 1) -> dict:
    """Time every method once per round, the order rotated from round to round (A B, B A, ...), after
    one untimed warm-up call each, so the methods share the machine's load.

    ``items``: queries (or images) one call handles, so times are per item. Returns ``{"rounds",
    "items", "load_before", "load_after", "ms": {name: [per-round ms per item]}}``; :func:`ratio` turns
    two of its methods into the reported ratio."""
    if rounds < 1 or not methods:
        raise ValueError("interleaved timing needs at least one round and one method")
    names = list(methods)
    load_before = load_average()
    for name in names:
        methods[name]()
    ms: dict[str, list[float]] = {n: [] for n in names}
    for r in range(rounds):
        order = names[r % len(names):] + names[:r % len(names)]
        for name in (order if r % 2 == 0 else order[::-1]):
            t0 = time.perf_counter()
            methods[name]()
            ms[name].append(1e3 * (time.perf_counter() - t0) / items)
    return {"rounds": rounds, "items": items, "load_before": load_before, "load_after": load_average(), "ms": ms}


def ratio(timing: dict, numerator: str, denominator: str) -> dict:
    """The per-round ratio ``numerator / denominator`` of an :func:`interleaved` timing: ``{"rounds",
    "median", "min", "max", "load_before", "load_after", "<name>_ms": median ms per item of each}``."""
    a, b = np.asarray(timing["ms"][numerator]), np.asarray(timing["ms"][denominator])
    r = a / b
    return {"rounds": int(timing["rounds"]), "median": float(np.median(r)), "min": float(r.min()),
            "max": float(r.max()), "load_before": timing["load_before"], "load_after": timing["load_after"],
            f"{numerator}_ms": float(np.median(a)), f"{denominator}_ms": float(np.median(b))}
