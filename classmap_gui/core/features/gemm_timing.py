"""Benchmark timing of the k-means encoder against its distance GEMM (``classmap bench features``).

Kept out of :mod:`.kmeans` because no user path needs it: it answers "how close is encoding to the
cost of the one GEMM it cannot avoid" (the benchmark's ``gemm_ratio``).
"""
from __future__ import annotations

import time

import numpy as np
from joblib import Parallel, delayed, effective_n_jobs
from threadpoolctl import threadpool_limits



def distance_gemm_seconds(fm, X, *, repeat: int = 1) -> tuple[float, float]:
    """Time the encoder of a fitted :class:`~.kmeans.KMeansFeatures` ``fm`` and its distance GEMM alone on the same images, same chunks and threads.

    ``X``: uint8 images as :meth:`KMeansFeatures.transform` takes them. Returns ``(encode_seconds,
    gemm_seconds)``, the best of ``repeat`` runs each: the first is ``fm.transform(X)``; the second
    runs only the ``(block x D) @ (D x K)`` products of every block, on patches prepared beforehand
    (not timed). Their ratio says how close the encoder is to the cost of its GEMM.
    """
    patches, ct, block = fm.distance_gemm(X)
    k = ct.shape[1]
    n_jobs = min(effective_n_jobs(fm.n_jobs), len(patches))

    def gemm(P):
        buf = np.empty((block, k), dtype=np.float32)
        for r0 in range(0, P.shape[0], block):
            r1 = min(P.shape[0], r0 + block)
            np.matmul(P[r0:r1], ct, out=buf[: r1 - r0])

    best_enc = best_gemm = np.inf
    for _ in range(repeat):
        t0 = time.perf_counter()
        fm.transform(X)
        best_enc = min(best_enc, time.perf_counter() - t0)
        with threadpool_limits(limits=1 if n_jobs > 1 else None, user_api="blas"):
            t0 = time.perf_counter()
            Parallel(n_jobs=n_jobs, backend="threading")(delayed(gemm)(P) for P in patches)
            best_gemm = min(best_gemm, time.perf_counter() - t0)
    return best_enc, best_gemm
