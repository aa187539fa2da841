"""k-means for the patch dictionary of ``KMeansFeatures``: full-batch Lloyd with GEMM distances (default)
and scikit-learn's MiniBatchKMeans, both stoppable and reporting progress per pass."""
from __future__ import annotations

import numpy as np

from ..progress import ProgressFn, StopFn, check_stop, report


def inertia(P: np.ndarray, C: np.ndarray, block: int = 8192) -> float:
    """Mean squared distance of the rows of P (m, D) to their nearest centroid in C (K, D)."""
    cc = np.einsum("ij,ij->i", C, C)
    total = 0.0
    for a in range(0, P.shape[0], block):
        X = P[a:a + block]
        d = X @ (-2.0 * C.T) + cc
        total += float(np.maximum(d.min(axis=1) + np.einsum("ij,ij->i", X, X), 0).sum())
    return total / P.shape[0]


def assign(P: np.ndarray, C: np.ndarray, block: int = 8192) -> np.ndarray:
    """Index of the nearest centroid of each row of P (m, D): blocked ``|c|^2 - 2 x.c`` GEMM + argmin."""
    ct = np.ascontiguousarray(-2.0 * C.T, dtype=np.float32)
    cc = np.einsum("ij,ij->i", C, C).astype(np.float32)
    labels = np.empty(P.shape[0], dtype=np.intp)
    buf = np.empty((min(block, P.shape[0]), C.shape[0]), dtype=np.float32)
    for a in range(0, P.shape[0], block):
        b = min(P.shape[0], a + block)
        G = np.matmul(P[a:b], ct, out=buf[: b - a])
        G += cc
        labels[a:b] = G.argmin(axis=1)
    return labels


def lloyd(P: np.ndarray, k: int, n_iter: int, rng, progress: ProgressFn, should_stop: StopFn) -> np.ndarray:
    """Full-batch k-means of the rows of P (m, D) float32 -> centroids (k, D) float32.

    Starts from k distinct random patches; each iteration assigns all patches with one blocked GEMM
    and recomputes the means; an emptied centroid is moved to a random patch. Replaces
    ``sklearn.cluster.MiniBatchKMeans`` because MiniBatchKMeans' per-step overhead (its OpenMP
    threads competing on a busy machine) dominates at K=1600, while the same passes as GEMMs take a
    fraction of that: on 200 000 whitened 6x6 Fashion-MNIST patches, 10 passes each, Lloyd was about
    4x faster and reached a lower mean squared distance (10.08 against 10.51).
    """
    m, d = P.shape
    C = P[rng.choice(m, size=k, replace=False)].copy()
    for it in range(n_iter):
        check_stop(should_stop)
        labels = assign(P, C)
        counts = np.bincount(labels, minlength=k)
        sums = np.empty((k, d), dtype=np.float64)
        for j in range(d):
            sums[:, j] = np.bincount(labels, weights=P[:, j], minlength=k)
        nonempty = counts > 0
        C[nonempty] = (sums[nonempty] / counts[nonempty, None]).astype(np.float32)
        empty = np.flatnonzero(~nonempty)
        if len(empty):
            C[empty] = P[rng.choice(m, size=len(empty), replace=False)]
        report(progress, (it + 1) / n_iter, "")
    return C


def minibatch(P: np.ndarray, k: int, n_epochs: int, batch: int, rng, progress: ProgressFn,
               should_stop: StopFn) -> np.ndarray:
    """scikit-learn's MiniBatchKMeans over ``n_epochs`` shuffled passes, stoppable between steps."""
    from sklearn.cluster import MiniBatchKMeans

    m = P.shape[0]
    km = MiniBatchKMeans(n_clusters=k, batch_size=batch, n_init=1, random_state=rng, compute_labels=False)
    n_batches = int(np.ceil(m / batch))
    total = n_epochs * n_batches
    step = 0
    for _ in range(n_epochs):
        order = rng.permutation(m)
        for b in range(n_batches):
            # the first call initialises (k-means++) and needs at least K patches
            km.partial_fit(P[order[b * batch:(b + 1) * batch] if step else order[:max(batch, 3 * k)]])
            step += 1
            if step % 8 == 0:
                check_stop(should_stop)
                report(progress, step / total, "")
    return km.cluster_centers_.astype(np.float32)
