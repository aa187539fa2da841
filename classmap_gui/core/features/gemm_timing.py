"""Benchmark timing of the k-means encoder against its distance GEMM (``classmap bench features``).

Kept out of :mod:`.kmeans` because no user path needs it: it answers "how close is encoding to the
cost of the one GEMM it cannot avoid" (the benchmark's ``gemm_ratio``).
"""
from __future__ import annotations

import numpy as np
from joblib import Parallel, delayed, effective_n_jobs

from ..timing import blas_limit


def distance_gemm_timing(fm, X, *, rounds: int = 3) -> dict:
    """Time the encoder of a fitted :class:`~.kmeans.KMeansFeatures` ``fm`` and its distance GEMM alone on the
    same images, chunks and threads, in alternating rounds (:func:`..timing.interleaved`).

    ``X``: uint8 images as :meth:`KMeansFeatures.transform` takes them. ``"encode"`` is ``fm.transform(X)``;
    ``"gemm"`` runs only the ``(block x D) @ (D x K)`` products of every block, on patches prepared
    beforehand (not timed). Their ratio (:func:`..timing.ratio`) says how close the encoder is to the cost
    of its GEMM. Times are ms per image.
    """
    from ..timing import interleaved

    patches, ct, block = fm.distance_gemm(X)
    k = ct.shape[1]
    n_jobs = min(effective_n_jobs(fm.n_jobs), len(patches))

    def gemm_block(P):
        buf = np.empty((block, k), dtype=np.float32)
        for r0 in range(0, P.shape[0], block):
            r1 = min(P.shape[0], r0 + block)
            np.matmul(P[r0:r1], ct, out=buf[: r1 - r0])

    def gemm():
        with blas_limit(1 if n_jobs > 1 else None):    # the encoder's own setting, through the same cached controller
            Parallel(n_jobs=n_jobs, backend="threading")(delayed(gemm_block)(P) for P in patches)

    return interleaved({"encode": lambda: fm.transform(X), "gemm": gemm}, rounds=rounds, items=len(X))
