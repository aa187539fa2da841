"""ClassMap's filter and refine steps on plain arrays (numpy only).

The app's refine for non-linear banks and its all-pairs vote run these; the compiled kernels
(``kernels.single``) do the same for linear one-vs-all banks and are tested equal to them; and
:mod:`classmap_gui.core.export.predictor` inlines this module into the standalone ``predict.py``, so the
exported predictor cannot drift from the app. Conventions: ``cands (n, p) int64`` class indices
in filter order; ``F (n, d)`` the queries' reference classifier outputs; ``known (n, k)`` each
evaluated classifier's position among the references or -1 (its output is then taken from ``F``,
not evaluated twice).
"""
from __future__ import annotations

import numpy as np


def pair_rows(a: np.ndarray, b: np.ndarray, C: int) -> np.ndarray:
    """Row of the all-pairs classifier for classes ``a != b`` (lexicographic i < j order)."""
    i, j = np.minimum(a, b).astype(np.int64), np.maximum(a, b).astype(np.int64)
    return i * (2 * C - i - 1) // 2 + (j - i - 1)


def filter_distances(F: np.ndarray, E: np.ndarray, alpha: np.ndarray) -> np.ndarray:
    """Weighted L1 from each query to each class, ``(n, C) float32``: ``F (n, d)`` query embeddings,
    ``E (C, d)`` class embeddings, ``alpha (d,) >= 0``. The compiled filter's arithmetic term for term
    (:mod:`..kernels.exact_filter`): ``|alpha_j f_j - alpha_j E[c, j]|`` added in ``j`` order from 0 in float32,
    so the distances are bit-identical to the app's. Memory ``n * C`` floats: callers chunk queries."""
    alpha = np.asarray(alpha, np.float32)
    FS = np.asarray(F, np.float32) * alpha                            # (n, d) the scaled queries
    ET = np.asarray(E, np.float32).T * alpha[:, None]                 # (d, C) the scaled embeddings
    dist = np.zeros((len(FS), ET.shape[1]), np.float32)
    for j in range(len(alpha)):
        dist += np.abs(FS[:, j, None] - ET[j][None, :])
    return dist


def filter_exact(F: np.ndarray, E: np.ndarray, alpha: np.ndarray, p: int) -> np.ndarray:
    """The ``p`` classes nearest each query in weighted L1 (:func:`filter_distances`), ``(n, p) int64``
    nearest first; ties rank the lower class first, as the compiled filter."""
    return np.argsort(filter_distances(F, E, alpha), axis=1, kind="stable")[:, :p]


def with_reference_outputs(R: np.ndarray, known: np.ndarray, F: np.ndarray) -> np.ndarray:
    """``R`` with each entry whose classifier is a reference (``known >= 0``) replaced by its output in ``F``."""
    return np.where(known >= 0, np.take_along_axis(F, np.maximum(known, 0), axis=1), R)


def rank_by_response(R: np.ndarray, cands: np.ndarray, threshold: float | None):
    """Best-response (``threshold`` None) or first-above-threshold ranking of the candidates.

    ``R (n, p)``: the candidates' one-vs-all responses in filter order. With a threshold, a query's
    scan stops at the first candidate whose response reaches it; later candidates are not evaluated.
    Returns ``(classes (n, p) int64 best first, scores (n, p) float32 — NaN for unevaluated ones,
    which follow in filter order —, evaluated (n, p) bool in filter order)``.
    """
    n, p = cands.shape
    stop = np.full(n, p)
    if threshold is not None:
        hit = R >= threshold
        stop = np.where(hit.any(1), hit.argmax(1) + 1, p)
    done = np.arange(p)[None, :] < stop[:, None]
    key = np.where(done, R, -np.inf)
    order = np.argsort(-key, axis=1, kind="stable")
    cls = np.take_along_axis(cands, order, axis=1)
    score = np.where(np.take_along_axis(done, order, axis=1), np.take_along_axis(R, order, axis=1), np.nan)
    return cls, score.astype(np.float32), done


def vote_among_candidates(R: np.ndarray, ca: np.ndarray, cands: np.ndarray, ia: np.ndarray, ib: np.ndarray):
    """All-pairs vote among each query's candidates; ties by summed margin, then filter order.

    ``R (n, P)``: responses of the classifier of each candidate pair (positions ``ia[j] < ib[j]``,
    classes ``ca = cands[:, ia]`` and ``cands[:, ib]``), > 0 favouring the pair's lower class index.
    Returns ``(classes (n, p) int64 best first, votes (n, p) float32)``.
    """
    n, p = cands.shape
    lo = np.minimum(ca, cands[:, ib])
    r_lo = np.where(ca == lo, R, -R)                                # > 0 favours ca
    votes = np.zeros((n, p), np.float32)
    margin = np.zeros((n, p), np.float32)
    rr = np.arange(n)[:, None]
    np.add.at(votes, (rr, np.broadcast_to(ia, R.shape)), (r_lo > 0).astype(np.float32))
    np.add.at(votes, (rr, np.broadcast_to(ib, R.shape)), (r_lo <= 0).astype(np.float32))
    np.add.at(margin, (rr, np.broadcast_to(ia, R.shape)), r_lo)
    np.add.at(margin, (rr, np.broadcast_to(ib, R.shape)), -r_lo)
    order = np.lexsort((np.arange(p)[None, :].repeat(n, 0), -margin, -votes), axis=1)
    return np.take_along_axis(cands, order, axis=1), np.take_along_axis(votes, order, axis=1)
