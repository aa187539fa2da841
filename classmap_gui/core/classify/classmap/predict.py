"""Filter-and-refine prediction of a fitted ClassMap against a classifier bank (the rich, public path).

:class:`FilterRefine` is the half of :class:`~.classmap.ClassMap` that classifies: given the fitted
state (``reference_``, ``alpha_``, ``class_embeddings_``, ``classes_``, ``threshold_`` and optionally a
kept reference bank ``reference_coef_`` / ``reference_intercept_``) and a bank, :meth:`predict_result`
returns a :class:`~.result.Prediction` with the top-p lists, the classifier evaluations each query cost
and the stage timings — what the Recogniser, the benches, the detector and the GUI read. The
scikit-learn methods (``predict``, ``predict_topk``, ``decision_function``) are built on it.

Derived arrays (the filter's transposed embeddings, a filter index, the per-thread single-query
buffers) live in one private cache dict (:class:`~.filter_step.FilterStep`), never saved, rebuilt when
the arrays they derive from are replaced; :meth:`~.filter_step.FilterStep.clear_caches` and
:meth:`FilterRefine.with_refine` are the public ways to drop or fork them.
"""
from __future__ import annotations

import copy
import threading
import time

import numpy as np

from ...errors import ConfigError, NotFittedError
from ...progress import StopFn, check_stop
from ..kernels import batch as BK
from .bank_view import bank_kind, classifier_outputs, linear_weights, n_classifiers
from .filter_step import FilterStep
from .refine import (ALL_PAIRS_VOTE, FIRST_ABOVE_THRESHOLD, KERNEL_MODE, refine_all_pairs_vote,
                     refine_ova_generic)
from ..result import Prediction
from .single_query import SingleQuery


class FilterRefine(FilterStep):
    """Mixin of :class:`~.classmap.ClassMap`: prediction from the fitted state and a bank."""

    def with_refine(self, refine: str) -> "FilterRefine":
        """A copy that shares the fitted references, weights and class embeddings but decides candidates
        with ``refine``; its threshold is kept only when both refines use one (else ``threshold_`` is None).
        The copy has its own caches."""
        other = copy.copy(self)
        other.clear_caches()
        other.set_params(refine=refine)
        if other.refine_strategy != FIRST_ABOVE_THRESHOLD or self.refine_strategy != FIRST_ABOVE_THRESHOLD:
            other.threshold_ = None
        return other

    # ------------------------------------------------------------------ checks
    def _require_fitted(self) -> None:
        if getattr(self, "reference_", None) is None:
            raise NotFittedError("ClassMap is not fitted: call fit(X, y) or fit_embedding(bank, X_embed, y_embed)")

    def bank_for(self, bank=None):
        """``bank``, or the bank this ClassMap was fitted with (``estimator_``), checked to fit the model."""
        self._require_fitted()
        if bank is None:
            bank = getattr(self, "estimator_", None)
            if bank is None:
                raise NotFittedError("this ClassMap holds no classifier bank (a loaded model): pass bank=")
        if len(bank.classes_) != self.n_classes_:
            raise ConfigError(f"ClassMap was built for {self.n_classes_} classes but the bank has "
                              f"{len(bank.classes_)}; call update_class_embeddings after adding classes")
        if bank_kind(bank) != self.bank_kind_ or int(self.reference_.max()) >= n_classifiers(bank):
            raise ConfigError("ClassMap was built for a different classifier bank (kind or size differ); "
                              "rebuild the embedding with fit_embedding()")
        return bank

    def expected_evaluations(self) -> int:
        """Upper bound of classifier evaluations per query: d + p (one-vs-all refines), d + p(p-1)/2 (vote)."""
        p = min(int(self.p), self.n_classes_)
        return len(self.reference_) + (p * (p - 1) // 2 if self.refine_strategy == ALL_PAIRS_VOTE else p)

    @property
    def threshold_value(self) -> float:
        """The refine's threshold as a number (``+inf`` when there is none: no candidate stops the scan)."""
        return float(self.threshold_) if self.threshold_ is not None else float("inf")

    # ------------------------------------------------------------------ the embedding
    def reference_positions(self, bank) -> np.ndarray:
        """``(K,) int64``: each classifier's position among the references, or -1 (all -1 when the
        references are a separate reference bank's classifiers: none of the bank's is evaluated twice)."""
        refpos = np.full(n_classifiers(bank), -1, np.int64)
        if getattr(self, "reference_coef_", None) is None:
            refpos[self.reference_] = np.arange(len(self.reference_))
        return refpos

    def embedding_weights(self, bank):
        """``(W, b, rows)``: the reference classifiers are rows ``rows`` of ``W (K, D)`` / ``b (K,)`` —
        the bank's own, or the kept reference bank's rows ``0..d-1``; ``(None, None, reference_)`` for a
        non-linear bank."""
        if getattr(self, "reference_coef_", None) is not None:
            return self.reference_coef_, self.reference_intercept_, np.arange(len(self.reference_), dtype=np.int64)
        W, b = linear_weights(bank)
        return W, b, self.reference_

    def reference_outputs(self, bank, X: np.ndarray) -> np.ndarray:
        """Outputs of the d reference classifiers on ``X (n, D)`` -> ``(n, d) float32`` (the query embedding)."""
        if getattr(self, "reference_coef_", None) is not None:
            return np.asarray(X, np.float32) @ self.reference_coef_.T + self.reference_intercept_
        return classifier_outputs(bank, X, self.reference_)

    # ------------------------------------------------------------------ predicting
    def filter(self, bank, X: np.ndarray, p: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """The filter step alone: ``(candidates (n, p) labels in filter order, distances (n, p)
        float32)`` for ``X (n, D) float32`` (costs d evaluations per query; for analysis and plots)."""
        bank = self.bank_for(bank)
        p = min(int(self.p if p is None else p), self.n_classes_)
        F = self.reference_outputs(bank, X)
        cands = np.empty((len(F), p), np.int64)
        dist = np.empty((len(F), p), np.float32)
        self.filter_embedded(F, p, cands, dist)
        return self.classes_[cands], dist

    def predict_result(self, X: np.ndarray, top: int | None = None, *, bank=None, batch_size: int = 1000,
                       should_stop: StopFn = None) -> Prediction:
        """Classify ``X (n, D) float32`` with filter-and-refine: a :class:`Prediction` whose ``top`` (<= p,
        default p) candidates per query are ``classes_`` labels, best first, with their scores, the
        classifier evaluations each query cost and the stage timings. ``bank``: the classifier bank
        (default ``estimator_``). Batches of ``batch_size`` queries.

        Changes neither the learned state nor the bank: each query's ``evaluations`` are counted from
        what was evaluated for it (d references + the refine's own)."""
        X = np.ascontiguousarray(X, np.float32)
        if X.ndim == 1:
            X = X[None, :]
        if len(X) == 1:
            one = self._cached_single(bank)
            if one is not None and X.shape[1] == one.W.shape[1]:
                return self._one_result(one, X[0], top)     # live video: checked when it was built
        bank = self.bank_for(bank)
        strategy = self.refine_strategy
        n = len(X)
        p = min(int(self.p), self.n_classes_)
        top = p if top is None else max(1, min(int(top), p))
        W, b = linear_weights(bank)
        if n == 1 and strategy != ALL_PAIRS_VOTE and W is not None:
            return self._one_result(self._single_for(bank), X[0], top)  # live video: the allocation-free path
        cls = np.empty((n, p), np.int64)
        score = np.empty((n, p), np.float32)
        evals = np.empty(n, np.int64)
        t_emb = t_ref = 0.0
        W_emb, b_emb, refs = self.embedding_weights(bank)
        refpos = self.reference_positions(bank)
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
            self.filter_embedded(F, p, cands, dist)
            t1 = time.perf_counter()
            if strategy == ALL_PAIRS_VOTE:
                c, s, e = refine_all_pairs_vote(bank, X[sl], F, cands, refpos, self.n_classes_)
                cls[sl], score[sl], evals[sl] = c, s, e + len(refs)
            elif W is not None:
                BK.refine_ova_batch(X[sl], W, b, F, refpos, cands, KERNEL_MODE[strategy], self.threshold_value,
                                    cls[sl], score[sl], evals[sl])
                evals[sl] += len(refs)
            else:
                c, s, e = refine_ova_generic(bank, X[sl], F, cands, refpos, strategy, self.threshold_value)
                cls[sl], score[sl], evals[sl] = c, s, e + len(refs)
            t_emb += t1 - t0
            t_ref += time.perf_counter() - t1
        top_classes = self.classes_[cls[:, :top]]
        return Prediction(labels=top_classes[:, 0].copy(), top_classes=top_classes,
                          top_scores=score[:, :top].copy(), evaluations=evals,
                          timings={"embedding+filter": t_emb, "refine": t_ref})

    # ------------------------------------------------------------------ single query
    def _one_result(self, one: SingleQuery, x: np.ndarray, top: int | None) -> Prediction:
        """:class:`Prediction` of the one query ``x (D,) float32`` through ``one``."""
        one(x)
        top = one.p if top is None else max(1, min(int(top), one.p))
        top_classes = self.classes_[one.top_classes[:top]][None, :]
        return Prediction(labels=top_classes[:, 0].copy(), top_classes=top_classes,
                          top_scores=one.top_scores[None, :top].copy(),
                          evaluations=np.array([one.evaluations], np.int64), timings=dict(one.timings))

    def _single_key(self, bank) -> tuple:
        """What a cached :class:`SingleQuery` was built from: rebuilt when any of it is replaced."""
        return (id(bank), id(getattr(bank, "coef_", None)), id(getattr(bank, "classes_", None)),
                id(self.class_embeddings_), id(self.reference_), self.p, self.refine, self.threshold_,
                id(getattr(self, "reference_coef_", None)), id(self.filter_index()))

    def _cached_single(self, bank) -> SingleQuery | None:
        """The calling thread's :class:`SingleQuery` when one was built (and so checked by :meth:`bank_for`)
        for ``bank`` (None: ``estimator_``) and this model as they are now; None otherwise. A live query
        then skips the checks and the bank's weight lookup (a third of its time at 2430 classes)."""
        cached = self.__dict__.get("_cache", {}).get("single", {}).get(threading.get_ident())
        if cached is None:
            return None
        bank = getattr(self, "estimator_", None) if bank is None else bank
        return cached[1] if bank is not None and cached[0] == self._single_key(bank) else None

    def _single_for(self, bank) -> SingleQuery:
        """The cached :class:`SingleQuery` for ``bank`` and the calling thread (its buffers are not
        shared between threads); rebuilt when the bank or the model changes."""
        key = self._single_key(bank)
        cache = self._caches()
        caches = cache.get("single")
        if caches is None:
            caches = cache["single"] = {}
        tid = threading.get_ident()
        cached = caches.get(tid)
        if cached is None or cached[0] != key:
            if len(caches) > 8:
                caches.clear()
            cached = caches[tid] = (key, self.single_query(bank))
        return cached[1]

    def single_query(self, bank=None) -> SingleQuery:
        """A preallocated one-query-at-a-time classifier (live video); see :class:`SingleQuery`."""
        bank = self.bank_for(bank)
        if self.refine_strategy == ALL_PAIRS_VOTE or linear_weights(bank)[0] is None:
            raise ConfigError("the single-query fast path needs a linear one-vs-all bank with refine best-response "
                              "(v2) or first-above-threshold (v3); use predict_result() for other models")
        return SingleQuery(self, bank)
