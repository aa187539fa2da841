"""Fitting ClassMap: class medians, reference classifiers, the v3 threshold.

Choosing ClassMap's reference classifiers: at random (CM-RRC) or by AdaBoost over triples (§6).

Weak triple classifier of a candidate reference R on a triple (X, L(X), Y != L(X)):

    h_R = |F_R(X) - F_R(Y)| - |F_R(X) - F_R(L(X))|        (> 0: X is nearer its own class)

AdaBoost (Schapire & Singer's confidence-rated form) picks R and alpha each round; the
distance of the final embedding is sum_i alpha_i |u_i - v_i| (Eq. 9), so the strong
classifier H is exactly "the query is nearer its own class than Y" (Eq. 5-9).

Vectorisation: the weak outputs of all candidate classifiers on all triples are computed once,
in float32 chunks, into ``H (K, T)`` scaled per row to [-1, 1]; a round is then one GEMV
``r = H @ w`` (the Schapire-Singer bound picks the candidate of largest r), followed by an
exact line search for alpha on the few best candidates. When ``T * K`` floats exceed the
memory budget a random subset of the candidate classifiers is used (fixed for the run).

The classifier outputs ``M (n, K)`` that :func:`boost_references` and :func:`learn_threshold` read may be given
as row blocks (:func:`.bank_view.output_blocks`: recomputed on each reading), so the caller can let the matrix go
before ``H`` is built: a hand model's M is 0.73 GB and its H 0.58 GB, never both held.
"""
from __future__ import annotations

import numpy as np

from ...errors import ConfigError, NoSignalError
from ...progress import ProgressFn, StopFn, check_stop, report
from ..kernels.exact_filter import filter_batch


def class_medians(M: np.ndarray, y: np.ndarray, n_classes: int, *, rows: np.ndarray | None = None,
                  chunk: int = 512) -> np.ndarray:
    """Per-class, per-column median of ``M (n, K) float32`` (or of its rows ``rows``, ``y`` then their
    classes, without copying them out) -> ``(n_classes, K) float32``.

    Classes without examples get NaN rows (the caller reports them). Rows are grouped by the
    number of examples of their class, so the work is a few reshaped ``np.median`` calls, not
    a loop over classes; at most ``chunk`` columns of a group are copied at a time.
    """
    y = np.asarray(y, np.int64)
    K = M.shape[1]
    out = np.full((n_classes, K), np.nan, np.float32)
    order = np.argsort(y, kind="stable")
    if rows is not None:
        order = np.asarray(rows, np.int64)[order]
    counts = np.bincount(y, minlength=n_classes)
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    for m in np.unique(counts[counts > 0]):
        cls = np.flatnonzero(counts == m)
        rows = order[(starts[cls][:, None] + np.arange(m)[None, :]).ravel()]
        for k0 in range(0, K, chunk):
            block = M[rows, k0:k0 + chunk].reshape(len(cls), m, -1)
            out[cls, k0:k0 + chunk] = np.median(block, axis=1)
    return out


def sample_triples(y: np.ndarray, n_triples: int, class_pool: np.ndarray, rng: np.random.Generator,
                   confusers: np.ndarray | None = None, hard_fraction: float = 0.0):
    """Triples (i, L(X_i), Y): example index ``i``, its class, and a class ``Y != L(X_i)``.

    ``Y`` is uniform over ``class_pool`` minus the true class, except a ``hard_fraction`` of
    triples drawing ``Y`` from the example's ``confusers (n, k)`` (classes whose classifiers
    respond most strongly to it) — random Y are mostly trivially far, and a filter that keeps
    40 of 2430 classes lives or dies on the near ones.
    """
    n = len(y)
    idx = rng.integers(0, n, n_triples)
    pos = y[idx]
    pool = np.asarray(class_pool, np.int64)
    neg = pool[rng.integers(0, len(pool), n_triples)]
    clash = neg == pos
    while clash.any():
        neg[clash] = pool[rng.integers(0, len(pool), int(clash.sum()))]
        clash = neg == pos
        if len(pool) < 2:
            raise ConfigError("ClassMap needs at least two classes to build an embedding")
    if confusers is not None and hard_fraction > 0:
        n_hard = int(round(hard_fraction * n_triples))
        which = rng.integers(0, confusers.shape[1], n_hard)
        hard = confusers[idx[:n_hard], which]
        ok = hard != pos[:n_hard]
        neg[:n_hard][ok] = hard[ok]
    return idx, pos, neg


def row_blocks(M):
    """``M``'s rows as :func:`.bank_view.output_blocks` gives them: ``M`` itself when it is such a function, else one
    block, the whole array."""
    return M if callable(M) else (lambda: iter(((0, M),)))


def boost_references(M, E: np.ndarray, idx: np.ndarray, pos: np.ndarray, neg: np.ndarray,
                     d: int, candidates: np.ndarray, *, max_rounds: int | None = None,
                     max_memory_mb: float = 600.0, rng: np.random.Generator,
                     progress: ProgressFn = None, should_stop: StopFn = None):
    """AdaBoost over weak triple classifiers. Returns ``(refs (d',) int64, alpha (d',) float32)``.

    ``M (n, K)``: outputs of every classifier on the held-out examples (an array, or its row blocks:
    :func:`row_blocks`); ``E (C, K)``: class medians of those outputs; ``idx/pos/neg (T,)``: triples (``idx``:
    rows of M); ``candidates``: classifier indices AdaBoost may choose. Stops when ``d`` distinct references are
    chosen (d' = d) or no candidate beats chance (d' < d). A reference chosen again adds to its alpha.
    """
    T = len(idx)
    cand = np.asarray(candidates, np.int64)
    budget = int(max_memory_mb * 2**20 / 4 / max(T, 1))
    if budget < len(cand):
        cand = np.sort(rng.choice(cand, size=max(budget, 4 * d), replace=False))
    Kc = len(cand)
    H = np.empty((Kc, T), np.float32)          # row k: weak outputs of candidate k on all triples
    chunk = max(1, int(2**22 // Kc))
    every = Kc == E.shape[1] and np.array_equal(cand, np.arange(Kc))
    Ec = np.ascontiguousarray(E if every else E[:, cand])   # M's columns are gathered per chunk, never copied whole
    by_row = np.argsort(idx, kind="stable")                 # the triples block by block of M's rows
    sorted_idx, done = idx[by_row], 0
    for start, B in row_blocks(M)():
        ends = np.searchsorted(sorted_idx, [start, start + len(B)])
        for t0 in range(ends[0], ends[1], chunk):
            check_stop(should_stop)
            t = by_row[t0:min(t0 + chunk, ends[1])]
            Mx = B[idx[t] - start] if every else B[idx[t] - start][:, cand]
            a = np.abs(Mx - Ec[neg[t]])
            a -= np.abs(Mx - Ec[pos[t]])
            H[:, t] = a.T
            done += len(t)
            report(progress, 0.3 * done / T, "embedding: triples")
    del Ec
    scale = np.maximum(H.max(axis=1), -H.min(axis=1))       # max |H| per row, without an |H| beside H
    scale[scale == 0] = 1.0
    H *= (1.0 / scale)[:, None]

    w = np.full(T, 1.0 / T, np.float32)
    alphas: dict[int, float] = {}
    order: list[int] = []
    max_rounds = max_rounds or 6 * d
    for rnd in range(max_rounds):
        check_stop(should_stop)
        r = np.dot(H, w)  # np.dot, not @: numpy's matmul holds the GIL for matrix-vector products (a frozen window)
        best = np.argsort(-r)[:4]
        best = best[r[best] > 1e-6]
        if len(best) == 0:
            break
        z_best, a_best, k_best = np.inf, 0.0, -1
        for k in best:
            a, z = _line_search(H[k], w, float(r[k]))
            if z < z_best:
                z_best, a_best, k_best = z, a, int(k)
        if a_best <= 0:
            break
        w *= np.exp(-a_best * H[k_best])
        w /= w.sum()
        ref = int(cand[k_best])
        if ref not in alphas:
            order.append(ref)
            alphas[ref] = 0.0
        alphas[ref] += a_best / float(scale[k_best])
        report(progress, 0.3 + 0.7 * len(order) / d, "embedding: boosting")
        if len(order) >= d:
            break
    if not order:
        raise NoSignalError("ClassMap: no reference classifier separates the triples better than chance; "
                          "the classifier bank or the held-out examples look degenerate")
    return np.array(order, np.int64), np.array([alphas[k] for k in order], np.float32)


def _line_search(h: np.ndarray, w: np.ndarray, r: float) -> tuple[float, float]:
    """alpha > 0 minimising Z(alpha) = sum w exp(-alpha h) (convex): Newton from the bound's optimum."""
    r = min(r, 0.999)
    a = 0.5 * np.log((1 + r) / (1 - r))
    h64 = h.astype(np.float64)
    w64 = w.astype(np.float64)
    for _ in range(10):
        e = w64 * np.exp(-a * h64)
        g = -np.dot(e, h64)  # np.dot releases the GIL; 1-D @ holds it
        hess = np.dot(e, h64 * h64)
        if hess <= 0:
            break
        step = g / hess
        a_new = max(a - step, 0.0)
        if abs(a_new - a) < 1e-7:
            a = a_new
            break
        a = a_new
    z = float(np.dot(w64, np.exp(-a * h64)))
    return float(a), z


def random_references(candidates: np.ndarray, d: int, rng: np.random.Generator):
    """CM-RRC: ``d`` distinct classifiers drawn uniformly, alpha = 1."""
    cand = np.asarray(candidates, np.int64)
    if d > len(cand):
        raise ConfigError(f"ClassMap: d={d} references requested but only {len(cand)} classifiers to choose from")
    refs = rng.choice(cand, size=d, replace=False).astype(np.int64)
    return refs, np.ones(d, np.float32)


def cross_fit_medians(M: np.ndarray, yi: np.ndarray, C: int, E_all: np.ndarray):
    """Two-fold class medians so that no example meets a class embedding built from itself.

    Examples alternate between folds within each class. Returns ``fold (n,) int64`` and
    ``E2 (2C, K) float32``: rows ``[:C]`` are medians over fold 1 (to use with fold-0
    examples), rows ``[C:]`` over fold 0; a class absent from a fold falls back to ``E_all``.
    With 10 held-out examples per class, an example's own output moves its class median
    enough to make the filter look far better on the embedding split than on new queries.
    """
    order = np.argsort(yi, kind="stable")
    counts = np.bincount(yi, minlength=C)
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    rank = np.empty(len(yi), np.int64)
    rank[order] = np.arange(len(yi)) - np.repeat(starts, counts)
    fold = rank % 2
    E2 = np.empty((2 * C, M.shape[1]), np.float32)
    for f in (0, 1):
        rows = np.flatnonzero(fold == 1 - f)
        Ef = class_medians(M, yi[rows], C, rows=rows)
        bad = np.isnan(Ef[:, 0])
        Ef[bad] = E_all[bad]
        E2[f * C:(f + 1) * C] = Ef
    return fold, E2


def learn_threshold(M, yi, refs, alpha, E, p, tol=0.0005, fold=None, E2=None, R=None) -> float:
    """Smallest t whose v3 error on the embedding examples exceeds v2's by at most ``tol``.

    ``M (n, K)`` OVA outputs, ``yi (n,)`` class indices, ``E (C, d)`` class embeddings; with
    ``fold``/``E2`` (see :func:`cross_fit_medians`) each example is filtered against class
    embeddings built without it. Exact, without trying thresholds one by one: with responses
    ``R_i`` of the candidates in filter order and ``P_i = max(R_0..R_{i-1})``, v3 answers
    candidate i exactly for t in (P_i, R_i]; above every R it answers as v2. So the extra
    error is a sum of interval indicators, evaluated at every record value with two
    ``searchsorted`` calls. Returns ``inf`` (never stop early) if no value qualifies.
    ``R``: when the references come from another bank, the refining bank's outputs as a function of
    candidates ``(n, p) int64 -> (n, p)`` (default: those columns of ``M[:, :C]``), so no ``(n, C)``
    matrix beside ``M`` is needed. ``M`` may be given as row blocks (:func:`row_blocks`).
    """
    blocks = row_blocks(M)
    n = len(yi)
    F = np.empty((n, len(refs)), np.float32)
    for start, B in blocks():
        F[start:start + len(B)] = B[:, refs]
    C = len(E)
    cands = np.empty((n, p), np.int64)
    dist = np.empty((n, p), np.float32)
    if fold is None:
        filter_batch(F, E, alpha, p, cands, dist)
    else:
        for f in (0, 1):
            rows = np.flatnonzero(fold == f)
            c_f, d_f = cands[rows], dist[rows]
            filter_batch(np.ascontiguousarray(F[rows]), np.ascontiguousarray(E2[f * C:(f + 1) * C][:, refs]),
                           alpha, p, c_f, d_f)
            cands[rows] = c_f
    if R is None:
        R = np.empty((n, p), np.float32)
        for start, B in blocks():
            R[start:start + len(B)] = np.take_along_axis(B[:, :C], cands[start:start + len(B)], axis=1)
    else:
        R = R(cands)
    R = R.astype(np.float64)                                 # filter order
    wrong = cands != yi[:, None]
    v2_wrong = wrong[np.arange(n), R.argmax(1)]
    P = np.empty_like(R)
    P[:, 0] = -np.inf
    P[:, 1:] = np.maximum.accumulate(R, axis=1)[:, :-1]
    rec = R > P                                            # v3 can stop at candidate i
    c = (wrong.astype(np.int64) - v2_wrong[:, None])[rec]  # extra error while it does
    lo, hi = P[rec], R[rec]
    keep = c != 0
    c, lo, hi = c[keep], lo[keep], hi[keep]
    o1, o2 = np.argsort(lo), np.argsort(hi)
    cum_lo = np.concatenate([[0], np.cumsum(c[o1])])
    cum_hi = np.concatenate([[0], np.cumsum(c[o2])])
    ts = np.unique(R[rec])
    # extra(t) = sum c over intervals with lo < t <= hi
    extra = (cum_lo[np.searchsorted(lo[o1], ts, "left")] - cum_hi[np.searchsorted(hi[o2], ts, "left")])
    ok = extra <= tol * n + 1e-9
    return float(ts[np.argmax(ok)]) if ok.any() else float("inf")


__all__ = ["boost_references", "class_medians", "cross_fit_medians", "learn_threshold", "random_references",
           "row_blocks", "sample_triples"]
