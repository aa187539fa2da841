"""ClassMap's refine strategies: how the p candidates the filter kept are ranked.

Each strategy has a name that says what it does; the paper's names stay as aliases (and are what
models saved before the names existed hold):

* ``"all-pairs-vote"`` (paper v1): the all-pairs classifiers among the candidates vote; ties by
  summed margin. Needs an all-pairs bank.
* ``"best-response"`` (paper v2): every candidate's one-vs-all classifier is evaluated; the best
  response wins.
* ``"first-above-threshold"`` (paper v3): candidates are evaluated in filter order and the scan
  stops at the first whose response reaches the threshold; unevaluated ones score NaN.

Linear one-vs-all banks run the compiled kernels (``kernels.single``, mode 2 / 3); non-linear
banks and the vote run here in numpy. Every function returns ``(classes (n, p) int64 indices best
first, scores (n, p) float32, evaluations (n,) int64)`` — evaluations made *here*, a reference
classifier whose output the embedding already computed is not evaluated twice.
"""
from __future__ import annotations

import numpy as np

from ..kernels.batch import eval_rows
from .bank_view import linear_weights, subset_scores
from .ops import pair_rows, rank_by_response, vote_among_candidates, with_reference_outputs

from .refine_kinds import ALIASES, ALL_PAIRS_VOTE, BEST_RESPONSE, FIRST_ABOVE_THRESHOLD, REFINES  # noqa: F401
#: the compiled kernels' mode numbers
KERNEL_MODE = {BEST_RESPONSE: 2, FIRST_ABOVE_THRESHOLD: 3}


def canonical(name: str) -> str | None:
    """The strategy ``name`` (or its paper alias) stands for; None when it is neither."""
    name = ALIASES.get(name, name)
    return name if name in REFINES else None


def refine_ova_generic(bank, X, F, cands, refpos, strategy: str, threshold: float):
    """Best-response / first-above-threshold for a non-linear one-vs-all bank.

    ``X (n, D)`` queries, ``F (n, d)`` their reference outputs, ``cands (n, p)`` class indices in
    filter order, ``refpos (K,)`` position of a classifier among the references or -1. The
    candidates' responses come from ``bank_view.subset_scores``.
    """
    known = refpos[cands]
    R = with_reference_outputs(subset_scores(bank, X, cands), known, F)
    cls, score, done = rank_by_response(R, cands, threshold if strategy == FIRST_ABOVE_THRESHOLD else None)
    return cls, score, np.sum(done & (known < 0), axis=1)


def refine_all_pairs_vote(bank, X, F, cands, refpos, n_classes: int, chunk: int = 256):
    """All-pairs vote among the candidates: ``p(p-1)/2`` pair classifiers per query.

    Arguments as :func:`refine_ova_generic`; scores are the candidates' votes. A linear bank's pair
    classifiers are evaluated grouped by row (``kernels.batch.eval_rows``: each pair row read once
    per chunk of queries, the same arithmetic for one query or many).
    """
    n, p = cands.shape
    ia, ib = np.triu_indices(p, 1)
    W, b = linear_weights(bank)
    cls = np.empty((n, p), np.int64)
    score = np.empty((n, p), np.float32)
    evals = np.empty(n, np.int64)
    for i in range(0, n, chunk):
        sl = slice(i, min(n, i + chunk))
        ca, cb = cands[sl][:, ia], cands[sl][:, ib]
        rows = pair_rows(ca, cb, n_classes)                               # (m, P)
        if W is not None:
            R = eval_rows(X[sl], W, b, rows, F[sl], refpos)
        else:
            R = subset_scores(bank, X[sl], rows)
        known = refpos[rows]
        R = with_reference_outputs(R, known, F[sl])
        evals[sl] = np.sum(known < 0, axis=1)
        cls[sl], score[sl] = vote_among_candidates(R, ca, cands[sl], ia, ib)
    return cls, score, evals
