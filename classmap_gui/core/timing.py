"""The one timing module: wall-clock helpers of the benchmarks and the measured speed-up training reports
(:func:`classmap_gui.core.train.evaluation.measure_latency_speedup`).

Every latency or throughput *ratio* a benchmark reports comes from :func:`interleaved`: rounds that
alternate the methods on the same inputs (so background load hits both alike), summarised by
:func:`ratio` as the median ratio over rounds with its min and max and the load average before and
after (JSON keys ``rounds``, ``median``, ``min``, ``max``, ``load_before``, ``load_after``).
:func:`pinned` gives each method its faster thread setting first; :func:`wait_for_quiet` is
``--quiet-machine``. The older single-method helpers (:func:`time_per_item`, :func:`median_time`)
remain for absolute figures that are no ratio."""
from __future__ import annotations

import time
from contextlib import contextmanager, nullcontext
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


def interleaved(methods: dict[str, Callable[[], object]], rounds: int = 7, items: int = 1,
                settle_s: float = 0.0) -> dict:
    """Time every method once per round, the order rotated from round to round (A B, B A, A B, ...), after
    one untimed warm-up call each, so the methods share the machine's load.

    ``items``: queries (or images) one call handles, so times are per item. ``settle_s``: an untimed pause
    before every timed call, so that the thread pools the previous method woke (OpenBLAS and OpenMP
    workers spin for a while after a parallel call) are asleep again and each method starts on the machine
    a deployment gives it: timed straight after a 2-thread GEMM, a 30 ms faiss / numba batch ran at half
    speed. Returns ``{"rounds", "items", "settle_s", "load_before", "load_after", "ms": {name: [per-round ms
    per item]}}``; :func:`ratio` turns two of its methods into the reported ratio."""
    if rounds < 1 or not methods:
        raise ValueError("interleaved timing needs at least one round and one method")
    names = list(methods)
    load_before = load_average()
    for name in names:
        methods[name]()
    ms: dict[str, list[float]] = {n: [] for n in names}
    for r in range(rounds):
        for name in names[r % len(names):] + names[:r % len(names)]:  # AB, BA, ...; ABC, BCA, CAB, ...
            if settle_s > 0:
                time.sleep(settle_s)
            t0 = time.perf_counter()
            methods[name]()
            ms[name].append(1e3 * (time.perf_counter() - t0) / items)
    return {"rounds": rounds, "items": items, "settle_s": settle_s, "load_before": load_before,
            "load_after": load_average(), "ms": ms}


def ratio(timing: dict, numerator: str | list[str], denominator: str) -> dict:
    """The per-round ratio ``numerator / denominator`` of an :func:`interleaved` timing: ``{"rounds",
    "median", "min", "max", "load_before", "load_after", "numerator_ms", "denominator_ms"}`` (medians of
    ms per item). A list of numerators takes, round by round, the fastest of them (e.g. brute force's
    two paths)."""
    names = [numerator] if isinstance(numerator, str) else list(numerator)
    a = np.min([np.asarray(timing["ms"][n], np.float64) for n in names], axis=0)
    b = np.asarray(timing["ms"][denominator], np.float64)
    r = a / b
    return {"rounds": int(timing["rounds"]), "median": float(np.median(r)), "min": float(r.min()),
            "max": float(r.max()), "load_before": timing["load_before"], "load_after": timing["load_after"],
            "numerator": "fastest of " + ", ".join(names) if len(names) > 1 else names[0],
            "denominator": denominator, "numerator_ms": float(np.median(a)), "denominator_ms": float(np.median(b))}


def rounds_of(ms: dict[str, list[float]], load_before: list[float], items: int = 1) -> dict:
    """An :func:`interleaved`-shaped record of rounds timed elsewhere (``ms``: per-round ms per item of
    each method, the methods alternated within each round), for :func:`ratio`."""
    n = {len(v) for v in ms.values()}
    if len(n) != 1:
        raise ValueError("every method needs one time per round")
    return {"rounds": n.pop(), "items": items, "load_before": load_before, "load_after": load_average(), "ms": ms}


@contextmanager
def threads(limit: int | None, controller=None):
    """BLAS and numba limited to ``limit`` threads (None: their defaults) inside the block. ``controller``: a
    ``threadpoolctl.ThreadpoolController`` made beforehand; without one, entering the block scans every loaded
    library (4.5 ms with the benches' imports), so a timed call should be handed one."""
    import numba
    from threadpoolctl import threadpool_limits

    n_default = numba.get_num_threads()
    with (threadpool_limits(limit) if controller is None else controller.limit(limits=limit)):
        numba.set_num_threads(limit or n_default)
        try:
            yield
        finally:
            numba.set_num_threads(n_default)


_CONTROLLER = None


def blas_limit(limit: int | None):
    """A context with BLAS limited to ``limit`` threads (None: a no-op). One cached controller: a fresh
    ``threadpool_limits`` rescans the loaded libraries (~1 ms, measured), too slow for once a frame."""
    global _CONTROLLER
    if limit is None:
        return nullcontext()
    if _CONTROLLER is None:
        from threadpoolctl import ThreadpoolController

        _CONTROLLER = ThreadpoolController()
    return _CONTROLLER.limit(limits=int(limit), user_api="blas")


def pinned(fn: Callable[[], object]) -> Callable[[], None]:
    """``fn`` run under its faster thread setting (one thread or the default; one untimed pass each
    decides): one small GEMV does not gain from threads, a GEMM does, so each side of a comparison gets
    its better setting before the interleaved rounds. The thread pools are found once, here, not inside
    every timed call (that scan took 4.5 ms a call: a third of a 1000-query ClassMap batch at 2430 classes,
    15 us on each of 300 single queries)."""
    from threadpoolctl import ThreadpoolController

    fn()                                                    # any library it loads lazily is loaded now
    controller = ThreadpoolController()
    best, best_t = None, np.inf
    for limit in (1, None):
        with threads(limit, controller):
            t0 = time.perf_counter()
            fn()
            t = time.perf_counter() - t0
        if t < best_t:
            best, best_t = limit, t

    def run() -> None:
        with threads(best, controller):
            fn()

    run.threads = best or "default"
    return run
