"""A small thread pool for the compiled kernels: contiguous ranges of work run side by side.

Each kernel is a serial ``nogil`` numba function over a range of queries (or weight rows);
:func:`run_split` runs the ranges on ``numba.get_num_threads()`` threads (``numba.set_num_threads``
caps it). Not ``prange``: inside numba's parallel region the filter's L1 loop compiled without
vectorising (measured 4x slower at 2430 classes, one thread).
"""
from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import numba as nb
import numpy as np

_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


def run_split(fn, bounds, *args) -> None:
    """``fn(*args, lo, hi)`` for consecutive ``bounds`` pairs, one range per thread (``fn`` releases the GIL)."""
    global _pool
    ranges = [(int(bounds[i]), int(bounds[i + 1])) for i in range(len(bounds) - 1) if bounds[i + 1] > bounds[i]]
    if len(ranges) <= 1:
        for lo, hi in ranges:
            fn(*args, lo, hi)
        return
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(max_workers=max(2, nb.config.NUMBA_NUM_THREADS),
                                       thread_name_prefix="classmap-batch")
    futures = [_pool.submit(fn, *args, lo, hi) for lo, hi in ranges[1:]]
    fn(*args, *ranges[0])                                   # the calling thread takes the first range
    for f in futures:
        f.result()


def even_bounds(n: int, parts: int | None = None) -> np.ndarray:
    """``parts + 1`` bounds splitting ``n`` items into near-equal contiguous ranges (default: one per numba thread)."""
    parts = max(1, min(n, parts or nb.get_num_threads()))
    return (np.arange(parts + 1) * n) // parts
