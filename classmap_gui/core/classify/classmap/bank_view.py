"""What ClassMap needs to know about a classifier bank, read from its attributes (no base class).

The bank interface (as OneVsAllBank documents it): ``classes_``; linear banks ``coef_ (K, D) float32`` +
``intercept_ (K,) float32`` (K = C for one-vs-all, row k is class k); an all-pairs bank also has
``pairs_ (K, 2) int64``, the class indices (i < j) of each row in lexicographic order, a response
> 0 favouring ``pairs_[k, 0]``. Non-linear banks (no ``coef_``) are reached through
``decision_function`` / ``decision_function_subset``. Nothing here changes the bank.

Any scikit-learn classifier with ``decision_function`` is a bank too (``ClassMap(estimator=
RidgeClassifier())``): a binary one has one row, ``coef_ (1, D)`` or ``(D,)`` and ``decision_function
(n,)``, the score of ``classes_[1]``; it is read as the two one-vs-all rows ``-w, w`` (class 0 wins
where the score is negative, as in scikit-learn's ``predict``). Without ``decision_function_subset``
the full scores are computed and the asked-for columns taken.
"""
from __future__ import annotations

import numpy as np

from .ops import pair_rows  # noqa: F401  (re-exported: part of the bank's row layout)


def bank_kind(bank) -> str:
    """``"pairs"`` for an all-pairs bank (it has ``pairs_``), else ``"ova"``."""
    return "pairs" if getattr(bank, "pairs_", None) is not None else "ova"


def linear_weights(bank) -> tuple[np.ndarray | None, np.ndarray | None]:
    """``(W (K, D) float32, b (K,) float32)`` C-contiguous for a linear bank, ``(None, None)`` otherwise."""
    W = getattr(bank, "coef_", None)
    if W is None:
        return None, None
    W = np.asarray(W, np.float32)
    W = W[None] if W.ndim == 1 else W
    b = np.broadcast_to(np.ravel(np.asarray(getattr(bank, "intercept_", 0.0), np.float32)), (W.shape[0],))
    if len(W) == 1 and len(bank.classes_) == 2 and bank_kind(bank) == "ova":  # one binary classifier
        W, b = np.concatenate([-W, W]), np.concatenate([-b, b])
    return np.ascontiguousarray(W), np.ascontiguousarray(b)


def all_scores(bank, X: np.ndarray) -> np.ndarray:
    """``decision_function(X)`` as ``(n, C) float32``: a binary classifier's ``(n,)`` score ``s`` is ``[-s, s]``."""
    S = np.asarray(bank.decision_function(X), np.float32)
    return np.stack([-S, S], axis=1) if S.ndim == 1 else S


def subset_scores(bank, X: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Scores of classifiers ``rows (n, k) int64`` per query -> ``(n, k) float32``: the bank's own
    ``decision_function_subset``, or for any other classifier the columns of its full scores."""
    if hasattr(bank, "decision_function_subset"):
        return np.asarray(bank.decision_function_subset(X, rows), np.float32)
    return np.take_along_axis(all_scores(bank, X), np.asarray(rows, np.int64), axis=1)


def n_classifiers(bank) -> int:
    """Binary classifiers in the bank: K rows (C one-vs-all, C(C-1)/2 all-pairs)."""
    if bank_kind(bank) == "pairs":
        return len(bank.pairs_)
    return len(bank.classes_)


#: rows of ``X`` per GEMM in :func:`classifier_outputs` and :func:`output_blocks` (the same calls in both: BLAS
#: results depend on a call's shape, so a block recomputed by the other is bit for bit the same)
OUTPUT_CHUNK = 4096


def _linear_outputs(X: np.ndarray, W: np.ndarray, b: np.ndarray, start: int, out: np.ndarray) -> np.ndarray:
    """Rows ``start:start + len(out)`` of ``X @ W.T + b`` into ``out``: one block of :func:`classifier_outputs`."""
    np.dot(X[start:start + len(out)], W.T, out=out)
    out += b
    return out


def classifier_outputs(bank, X: np.ndarray, rows: np.ndarray | None = None, chunk: int = OUTPUT_CHUNK) -> np.ndarray:
    """Raw outputs of classifiers ``rows`` (default all) on ``X (n, D)`` -> ``(n, k) float32``."""
    W, b = linear_weights(bank)
    X = np.asarray(X, np.float32)
    if W is not None:
        if rows is not None:
            W, b = W[rows], b[rows]
        out = np.empty((len(X), W.shape[0]), np.float32)
        for i in range(0, len(X), chunk):
            _linear_outputs(X, W, b, i, out[i:i + chunk])
        return out
    if rows is None:
        if bank_kind(bank) == "pairs":
            rows = np.arange(len(bank.pairs_))
        else:
            return all_scores(bank, X)
    sel = np.broadcast_to(np.asarray(rows, np.int64), (len(X), len(rows)))
    return subset_scores(bank, X, sel)


def output_blocks(bank, X: np.ndarray):
    """:func:`classifier_outputs` of every classifier of a linear ``bank`` on ``X (n, D)``, block by block and
    recomputed on each reading: a function returning an iterator of ``(start, (m, K) float32 rows start:start + m)``,
    the very values ``classifier_outputs(bank, X)`` holds (the same GEMM per block), so a caller reads the
    outputs more than once without keeping the ``(n, K)`` matrix. None for a bank without weights."""
    W, b = linear_weights(bank)
    if W is None:
        return None
    X = np.asarray(X, np.float32)

    def blocks():
        buf = np.empty((min(len(X), OUTPUT_CHUNK), W.shape[0]), np.float32)
        for i in range(0, len(X), OUTPUT_CHUNK):
            yield i, _linear_outputs(X, W, b, i, buf[:min(OUTPUT_CHUNK, len(X) - i)])
    return blocks


class BruteForce:
    """The fastest honest brute force over ``bank``: every classifier scored, best class per query.

    ``__call__(X (n, D) float32 C-contiguous) -> (n,) int64`` class indices (columns of
    ``decision_function``; the same answer as ``decision_function(X).argmax(1)``). A linear bank is one
    GEMM over its stacked weights into a buffer kept between calls, plus the biases — the path a timed
    comparison must use: ``decision_function`` also pays scikit-learn's input validation per call,
    measured at ~90% of a 10-class query. An all-pairs bank adds its vote as two GEMMs over vote
    matrices built once; an RBF bank is its kernel + one GEMM; other banks go through
    ``decision_function``. The caller checks the input once (timing only: nothing is validated here).
    """

    def __init__(self, bank):
        self.bank = bank
        self.W, self.b = linear_weights(bank)
        self.M = self.base = None
        if self.W is not None and bank_kind(bank) == "pairs":
            C, P = len(bank.classes_), len(bank.pairs_)
            Ei = np.zeros((P, C), np.float32)
            Ej = np.zeros((P, C), np.float32)
            Ei[np.arange(P), bank.pairs_[:, 0]] = 1
            Ej[np.arange(P), bank.pairs_[:, 1]] = 1
            self.M = Ei - Ej                   # win @ M + colsum(Ej): votes; S @ M: the tie-break margin
            self.base = Ej.sum(0)
        self._out: np.ndarray | None = None

    def _buffer(self, n: int, k: int) -> np.ndarray:
        if self._out is None or self._out.shape != (n, k):
            self._out = np.empty((n, k), np.float32)
        return self._out

    def scores(self, X: np.ndarray) -> np.ndarray:
        """``(n, C) float32`` scores whose argmax is the brute-force answer (a reused buffer)."""
        bank = self.bank
        if self.W is not None:
            out = self._buffer(len(X), len(self.W))
            np.dot(X, self.W.T, out=out)
            out += self.b
            if self.M is None:
                return out
            conf = out @ self.M
            votes = (out > 0).astype(np.float32) @ self.M
            votes += self.base
            conf /= 3 * (np.abs(conf) + 1)
            votes += conf
            return votes
        if getattr(bank, "support_vectors_", None) is not None and hasattr(bank, "dual_coef_"):
            from ..banks.solvers import rbf_kernel

            out = rbf_kernel(X, bank.support_vectors_, bank.gamma_, bank.support_sq_norms()) @ bank.dual_coef_.T
            out += bank.intercept_
            return out
        return all_scores(bank, X)

    def __call__(self, X: np.ndarray) -> np.ndarray:
        return self.scores(X).argmax(1)
