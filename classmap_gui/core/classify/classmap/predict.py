"""Filter-and-refine prediction of a fitted ClassMap against a classifier bank: the batch path and the cached
single-query one (functions of :class:`~.estimator.ClassMap`, which calls them from ``predict_result``).

:func:`predict_batch` embeds a block of queries (the compiled batch kernels over the reference rows), searches
the model's filter index and refines the candidates (one-vs-all: grouped compiled refine; all-pairs vote and
non-linear banks: :mod:`.refine`). One query goes through a :class:`~.single_query.SingleQuery` kept per thread
(:func:`single_for`), rebuilt when the bank or the model changes.
"""
from __future__ import annotations

import threading
import time

import numpy as np

from ...progress import StopFn, check_stop
from ..kernels import batch as BK
from ..result import Prediction
from .bank_view import classifier_outputs, linear_weights
from .refine import ALL_PAIRS_VOTE, KERNEL_MODE, refine_all_pairs_vote, refine_ova_generic
from .single_query import SingleQuery


def predict_batch(cm, bank, X: np.ndarray, top: int | None, batch_size: int, should_stop: StopFn) -> Prediction:
    """``cm.predict_result`` for ``X (n, D) float32`` (C-contiguous) against the checked ``bank``."""
    strategy = cm.refine_strategy
    n = len(X)
    p = min(int(cm.p), cm.n_classes_)
    top = p if top is None else max(1, min(int(top), p))
    W, b = linear_weights(bank)
    cls = np.empty((n, p), np.int64)
    score = np.empty((n, p), np.float32)
    evals = np.empty(n, np.int64)
    t_emb = t_ref = 0.0
    W_emb, b_emb, refs = cm.embedding_weights(bank)
    refpos = cm.reference_positions(bank)
    flt = cm.current_filter()
    for i in range(0, n, batch_size):
        check_stop(should_stop)
        sl = slice(i, min(n, i + batch_size))
        t0 = time.perf_counter()
        if W_emb is not None:
            F = np.empty((sl.stop - sl.start, len(refs)), np.float32)
            BK.embed_batch(X[sl], W_emb, b_emb, refs, F)    # the single path's arithmetic, blocked
        else:
            F = classifier_outputs(bank, X[sl], refs)
        cands = np.empty((len(F), p), np.int64)
        dist = np.empty((len(F), p), np.float32)
        flt.search(F, p, out_cls=cands, out_dist=dist)
        t1 = time.perf_counter()
        if strategy == ALL_PAIRS_VOTE:
            c, s, e = refine_all_pairs_vote(bank, X[sl], F, cands, refpos, cm.n_classes_)
            cls[sl], score[sl], evals[sl] = c, s, e + len(refs)
        elif W is not None:
            BK.refine_ova_batch(X[sl], W, b, F, refpos, cands, KERNEL_MODE[strategy], cm.threshold_value,
                                cls[sl], score[sl], evals[sl])
            evals[sl] += len(refs)
        else:
            c, s, e = refine_ova_generic(bank, X[sl], F, cands, refpos, strategy, cm.threshold_value)
            cls[sl], score[sl], evals[sl] = c, s, e + len(refs)
        t_emb += t1 - t0
        t_ref += time.perf_counter() - t1
    top_classes = cm.classes_[cls[:, :top]]
    return Prediction(labels=top_classes[:, 0].copy(), top_classes=top_classes,
                      top_scores=score[:, :top].copy(), evaluations=evals,
                      timings={"embedding+filter": t_emb, "refine": t_ref})


def one_result(cm, one: SingleQuery, x: np.ndarray, top: int | None) -> Prediction:
    """:class:`Prediction` of the one query ``x (D,) float32`` through ``one``."""
    one(x)
    top = one.p if top is None else max(1, min(int(top), one.p))
    top_classes = cm.classes_[one.top_classes[:top]][None, :]
    return Prediction(labels=top_classes[:, 0].copy(), top_classes=top_classes,
                      top_scores=one.top_scores[None, :top].copy(),
                      evaluations=np.array([one.evaluations], np.int64), timings=dict(one.timings))


def _single_key(cm, bank) -> tuple:
    """What a cached :class:`SingleQuery` was built from: rebuilt when any of it is replaced."""
    return (id(bank), id(getattr(bank, "coef_", None)), id(getattr(bank, "classes_", None)),
            id(cm.class_embeddings_), id(cm.reference_), cm.p, cm.refine, cm.threshold_,
            id(getattr(cm, "reference_coef_", None)), id(cm.current_filter()))


def cached_single(cm, bank) -> SingleQuery | None:
    """The calling thread's :class:`SingleQuery` when one was built (and so checked by :meth:`bank_for`)
    for ``bank`` (None: ``estimator_``) and this model as they are now; None otherwise. A live query
    then skips the checks and the bank's weight lookup (a third of its time at 2430 classes)."""
    cached = cm.cache().get("single", {}).get(threading.get_ident())
    if cached is None:
        return None
    bank = getattr(cm, "estimator_", None) if bank is None else bank
    return cached[1] if bank is not None and cached[0] == _single_key(cm, bank) else None


def single_for(cm, bank) -> SingleQuery:
    """The cached :class:`SingleQuery` for ``bank`` and the calling thread (its buffers are not
    shared between threads); rebuilt when the bank or the model changes."""
    key = _single_key(cm, bank)
    cache = cm.cache()
    caches = cache.get("single")
    if caches is None:
        caches = cache["single"] = {}
    tid = threading.get_ident()
    cached = caches.get(tid)
    if cached is None or cached[0] != key:
        if len(caches) > 8:
            caches.clear()
        cached = caches[tid] = (key, cm.single_query(bank))
    return cached[1]


def scores(cm, res: Prediction) -> np.ndarray:
    """``cm.decision_function``'s ``(n, C) float32`` class scores from a prediction: the refine's score where it
    evaluated a class, ``-inf`` elsewhere; two classes: ``(n,)`` score of ``classes_[1]`` minus ``classes_[0]``."""
    cols = np.searchsorted(cm.classes_, res.top_classes)
    S = np.full((len(res), cm.n_classes_), -np.inf, np.float32)
    np.put_along_axis(S, cols, np.where(np.isnan(res.top_scores), -np.inf, res.top_scores), axis=1)
    if cm.n_classes_ == 2:
        with np.errstate(invalid="ignore"):
            return S[:, 1] - S[:, 0]
    return S
