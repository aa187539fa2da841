"""ClassMap (Athitsos et al., ICCV 2007): joint embedding of patterns and classes, filter and refine.

Given a trained classifier bank (one-vs-all or all-pairs), a query is embedded by the outputs
of d *reference* classifiers, every class by the per-dimension median of those outputs over
its examples; the filter ranks classes by weighted L1 distance to the query and keeps the top
p; the refine step evaluates only the candidates' classifiers. Per query that is about d + p
classifier evaluations instead of C (brute force).

Typical use::

    cm = ClassMap(d=45, p=40, embedding="boosted", refine="v2").fit(bank, X_embed, y_embed)
    res = cm.predict(bank, X_test)          # res.labels, res.top_classes, res.evaluations
    one = cm.single_query(bank)             # live video: preallocated, one query at a time
    label = one(x)

The bank interface used (see docs/CONTRACTS.md): ``classes_``; linear banks ``coef_ (K, D)
float32`` + ``intercept_ (K,) float32`` (K = C for one-vs-all, row k is class k); an
all-pairs bank also has ``pairs_ (K, 2) int64`` = the class indices (i < j) of each row,
in lexicographic order, response > 0 favouring ``pairs_[k, 0]``. Non-linear banks (no
``coef_``) go through ``decision_function`` / ``decision_function_subset``.

This module is the estimator (fit, predict, store hooks); the bank interface is read in
:mod:`.bank_view`, the refine strategies live in :mod:`.refine`, the one-query fast path in
:mod:`.single_query`, and the result type in :mod:`.result`.
"""
from __future__ import annotations

import threading
import time

import numpy as np
from sklearn.base import BaseEstimator

from ..checks import check_array
from ..errors import ConfigError, DataError, NotFittedError
from ..progress import ProgressFn, StopFn, check_stop, report, sub_progress
from . import _batch_kernels as BK
from .filter_step import FILTER_INDEX_THRESHOLD, FilterStep
from .bank_view import bank_kind, classifier_outputs, linear_weights, n_classifiers, pair_rows
from .classmap_boost import (boost_references, class_medians, cross_fit_medians, learn_threshold,
                             random_references, sample_triples)
from .refine import (ALIASES as REFINE_ALIASES, ALL_PAIRS_VOTE, BEST_RESPONSE, KERNEL_MODE,
                     REFINES as REFINE_STRATEGIES, canonical as canonical_refine, refine_all_pairs_vote,
                     refine_ova_generic)
from .result import ClassMapResult, Prediction
from .single_query import SingleQuery

__all__ = ["ClassMap", "ClassMapResult", "EMBEDDINGS", "FILTER_INDEX_THRESHOLD", "Prediction", "REFINES",
           "SingleQuery", "bank_kind", "class_medians", "classifier_outputs", "cross_fit_medians",
           "learn_threshold", "pair_rows"]

EMBEDDINGS = ("boosted", "random")
MAX_TRIPLES = 5_000_000
MAX_MEMORY_MB = 65_536
#: every accepted ``refine`` value: the descriptive names and the paper's aliases
REFINES = (*REFINE_STRATEGIES, *REFINE_ALIASES)


class ClassMap(FilterStep, BaseEstimator):
    """Filter-and-refine recognition among many classes with a ClassMap embedding.

    Parameters
    ----------
    d : number of reference classifiers (embedding dimensions). For "boosted" AdaBoost runs
        until it has chosen ``d`` distinct classifiers (fewer if none beats chance).
    p : candidates kept by the filter and evaluated by the refine step.
    embedding : "boosted" (CM-Boosted, AdaBoost over weak triple classifiers, §6) or
        "random" (CM-RRC, ``d`` random classifiers with weight 1).
    refine : "all-pairs-vote" (paper "v1": vote of the all-pairs classifiers among the top p;
        needs an all-pairs bank), "best-response" ("v2": best one-vs-all response among the top
        p) or "first-above-threshold" ("v3": stop at the first candidate, in filter order, whose
        one-vs-all response >= t). See :mod:`.refine`.
    n_triples : training triples for AdaBoost. Their weak outputs for every candidate
        classifier are held as one float32 matrix, so memory is ``n_triples * K * 4`` bytes
        capped by ``max_memory_mb`` (candidates are sub-sampled beyond that). 60 000 with 2430
        classifiers is ~0.6 GB and a few seconds per 45 dimensions on 2 cores.
    hard_fraction : share of triples whose wrong class is one of the example's strongest
        confusers (top classifier responses) instead of a uniformly random class.
    threshold : v3 threshold; None learns it (the paper's rule: the smallest value that raises
        the error on the embedding examples by at most 0.05 points over v2; exact, and
        cross-fitted so an example never meets an embedding built from itself).
    reference_penalty : 1 takes the references from the bank itself; a factor f > 1 asks the trainer
        for a second bank with f times the penalty whose classifiers become the references
        (``fit(reference_bank=...)``): smoother outputs keep the similarity between classes.
    random_state : seed for triple sampling / random references.

    Learned attributes
    ------------------
    reference_ (d,) int64 classifier rows; alpha_ (d,) float32 L1 weights;
    class_embeddings_ (C, d) float32; threshold_ float or None (v3); n_classes_ int;
    bank_kind_ "ova" | "pairs"; classes_ (C,) int64 bank class labels.
    """

    def __init__(self, d: int = 45, p: int = 40, embedding: str = "boosted", refine: str = "v2",
                 n_triples: int = 60_000, hard_fraction: float = 0.5, threshold: float | None = None,
                 max_memory_mb: float = 600.0, reference_penalty: float = 1.0, random_state: int | None = 0):
        self.d = d
        self.p = p
        self.embedding = embedding
        self.refine = refine
        self.n_triples = n_triples
        self.hard_fraction = hard_fraction
        self.threshold = threshold
        self.max_memory_mb = max_memory_mb
        self.reference_penalty = reference_penalty
        self.random_state = random_state

    # ------------------------------------------------------------------ fitting

    @property
    def refine_strategy(self) -> str:
        """The refine strategy's descriptive name (``refine`` may hold the paper's alias)."""
        strategy = canonical_refine(self.refine)
        if strategy is None:
            raise ConfigError(f"ClassMap refine must be one of {', '.join(REFINES)}, got {self.refine!r}")
        return strategy

    def _check_params(self, bank) -> None:
        if self.embedding not in EMBEDDINGS:
            raise ConfigError(f"ClassMap embedding must be one of {', '.join(EMBEDDINGS)}, got {self.embedding!r}")
        strategy = self.refine_strategy
        if not (isinstance(self.d, (int, np.integer)) and self.d >= 1):
            raise ConfigError(f"ClassMap d must be a positive integer, got {self.d!r}")
        if not (isinstance(self.p, (int, np.integer)) and self.p >= 1):
            raise ConfigError(f"ClassMap p must be a positive integer, got {self.p!r}")
        # bounds that keep a typo from exhausting memory (triples are sampled and scored up front)
        if not (isinstance(self.n_triples, (int, float, np.integer)) and not isinstance(self.n_triples, bool)
                and float(self.n_triples).is_integer() and 1 <= self.n_triples <= MAX_TRIPLES):
            raise ConfigError(f"ClassMap n_triples must be a whole number from 1 to {MAX_TRIPLES}, got {self.n_triples!r}")
        if not (isinstance(self.max_memory_mb, (int, float)) and 0 < self.max_memory_mb <= MAX_MEMORY_MB):
            raise ConfigError(f"ClassMap max_memory_mb must lie in (0, {MAX_MEMORY_MB}], got {self.max_memory_mb!r}")
        if not (isinstance(self.hard_fraction, (int, float)) and 0 <= self.hard_fraction <= 1):
            raise ConfigError(f"ClassMap hard_fraction must lie between 0 and 1, got {self.hard_fraction!r}")
        kind = bank_kind(bank)
        if strategy == ALL_PAIRS_VOTE and kind != "pairs":
            raise ConfigError(f"ClassMap refine {self.refine} (all-pairs vote) needs an all-pairs classifier bank; "
                              "use refine best-response (v2) or first-above-threshold (v3) with a one-vs-all bank")
        if strategy != ALL_PAIRS_VOTE and kind != "ova":
            raise ConfigError(f"ClassMap refine {self.refine} needs a one-vs-all classifier bank; "
                              "use refine all-pairs-vote (v1) with an all-pairs bank")

    def _class_index(self, classes: np.ndarray, y) -> np.ndarray:
        y = np.asarray(y)
        idx = np.searchsorted(classes, y)
        idx = np.clip(idx, 0, len(classes) - 1)
        bad = classes[idx] != y
        if bad.any():
            raise DataError(f"ClassMap: labels {sorted(set(y[bad].tolist()))[:10]} are not classes of the bank")
        return idx.astype(np.int64)

    def fit(self, bank, X_embed: np.ndarray, y_embed: np.ndarray, *, train_classes=None, reference_bank=None,
            progress: ProgressFn = None, should_stop: StopFn = None) -> "ClassMap":
        """Choose the references and embed every class.

        ``X_embed (n, D) float32`` / ``y_embed (n,)``: labelled examples *held out from the
        bank's training* (the paper's embedding split). Class embeddings are the per-dimension
        median of the reference outputs over each class's held-out examples: outputs on the
        classifiers' own training examples are optimistic (margins a query never gets), so
        embeddings built on them sit too far from where test queries land. Every class needs
        at least one held-out example. With a strongly penalised ``reference_bank`` that bias is
        small and adding the bank's training examples can pay: ``bench classmap`` passes the
        embedding and training parts (``embedding_examples``; measured on its validation part).

        ``train_classes`` (labels): if given, AdaBoost's triples and the candidate references
        use only these classes (the paper's unseen-classes experiment, Fig. 5); the other
        classes are still embedded from their held-out examples and classified among all.

        ``reference_bank``: a linear one-vs-all bank over the same classes, trained on the same data
        with a stronger penalty, whose classifiers become the references (kept as
        ``reference_coef_ (d, D)`` / ``reference_intercept_ (d,)``); ``bank`` still refines. Smoother
        classifiers keep more of the similarity between classes that the embedding relies on, while
        the refine keeps the sharper bank's accuracy; a query then costs d + p evaluations (the
        references are not the bank's own classifiers, so none is reused by the refine).
        """
        self._check_params(bank)
        check_stop(should_stop)
        classes = np.asarray(bank.classes_)
        C = len(classes)
        kind = bank_kind(bank)
        yi = self._class_index(classes, y_embed)
        X = np.ascontiguousarray(X_embed, np.float32)
        if X.ndim != 2 or len(X) != len(yi):
            raise DataError(f"ClassMap.fit: X_embed must be (n, D) with n = len(y_embed); got {X.shape} and {len(yi)}")
        rng = np.random.default_rng(self.random_state)

        if train_classes is None:
            tc = np.arange(C)
        else:
            tc = np.unique(self._class_index(classes, train_classes))
        if kind == "pairs":
            in_tc = np.zeros(C, bool)
            in_tc[tc] = True
            cand = np.flatnonzero(in_tc[bank.pairs_[:, 0]] & in_tc[bank.pairs_[:, 1]])
        else:
            cand = tc.copy()
        thresholded = self.refine_strategy not in (ALL_PAIRS_VOTE, BEST_RESPONSE)
        need_all = self.embedding == "boosted" or (thresholded and self.threshold is None)
        if reference_bank is not None and (linear_weights(reference_bank)[0] is None or kind != "ova"
                                           or not np.array_equal(np.asarray(reference_bank.classes_), classes)):
            raise ConfigError("ClassMap: reference_bank must be a linear one-vs-all bank over the bank's classes")
        ref_bank = bank if reference_bank is None else reference_bank
        refs = None
        if self.embedding == "random":
            refs, alpha = random_references(cand, int(self.d), rng)

        report(progress, 0.0, "embedding: classifier outputs")
        # outputs of every classifier (boosting, v3 threshold) or only of the random references
        M = classifier_outputs(ref_bank, X, None if need_all else refs)      # (n, K) or (n, d)
        check_stop(should_stop)
        E_all = class_medians(M, yi, C)                                      # (C, K) or (C, d)
        missing = np.flatnonzero(np.isnan(E_all[:, 0]))
        if len(missing):
            raise DataError(f"ClassMap: classes {classes[missing[:10]].tolist()}"
                            f"{' ...' if len(missing) > 10 else ''} have no held-out examples to embed them; "
                            "give every class at least one example outside the bank's training set")
        fold = E2 = None
        if need_all:
            fold, E2 = cross_fit_medians(M, yi, C, E_all)
        report(progress, 0.1, "embedding: classifier outputs")

        if self.embedding == "boosted":
            sub = sub_progress(progress, 0.1, 0.85)
            keep = np.isin(yi, tc)
            confusers = None
            if kind == "ova" and self.hard_fraction > 0 and len(tc) > 2:
                k = min(10, len(tc) - 1)
                Mt = M[keep][:, tc]
                confusers = tc[np.argpartition(-Mt, k, axis=1)[:, :k + 1]]
                del Mt
            idx, pos, neg = sample_triples(yi[keep], int(self.n_triples), tc, rng, confusers, self.hard_fraction)
            Mk = M[keep] if not keep.all() else M
            # each triple compares X with class medians of the other fold (E2 rows shifted by C)
            shift = C * fold[keep][idx]
            refs, alpha = boost_references(Mk, E2, idx, pos + shift, neg + shift, int(self.d), cand,
                                           max_memory_mb=self.max_memory_mb, rng=rng,
                                           progress=sub, should_stop=should_stop)
        self.reference_ = refs.astype(np.int64)
        self.alpha_ = alpha.astype(np.float32)
        self.class_embeddings_ = np.ascontiguousarray(E_all[:, refs] if need_all else E_all, np.float32)
        self.classes_ = classes.astype(np.int64)
        self.n_classes_ = int(C)
        self.bank_kind_ = kind
        self.reference_coef_ = self.reference_intercept_ = None
        if reference_bank is not None:
            Wr, br = linear_weights(reference_bank)
            self.reference_coef_, self.reference_intercept_ = np.ascontiguousarray(Wr[refs]), br[refs].copy()
        self.threshold_ = None
        if thresholded:
            report(progress, 0.9, "embedding: threshold")
            self.threshold_ = (float(self.threshold) if self.threshold is not None
                               else learn_threshold(M, yi, refs, self.alpha_, self.class_embeddings_,
                                                    min(int(self.p), C), fold=fold, E2=E2,
                                                    R=None if reference_bank is None
                                                    else classifier_outputs(bank, X)))
        report(progress, 1.0, "embedding: done")
        return self

    def update_class_embeddings(self, bank, X: np.ndarray, y: np.ndarray) -> "ClassMap":
        """(Re)embed the classes in ``y`` from held-out examples ``X`` — e.g. classes added to the
        bank after the embedding was built (the references stay; the paper's Fig. 5 shows
        such classes are still found). Grows ``class_embeddings_`` if the bank grew."""
        self._require_fitted()
        classes = np.asarray(bank.classes_)
        yi = self._class_index(classes, y)
        F = self._reference_outputs(bank, X)
        E_new = class_medians(F, yi, len(classes))
        E = np.full((len(classes), len(self.reference_)), np.nan, np.float32)
        E[:self.n_classes_] = self.class_embeddings_
        got = ~np.isnan(E_new[:, 0])
        E[got] = E_new[got]
        missing = np.flatnonzero(np.isnan(E[:, 0]))
        if len(missing):
            raise DataError(f"ClassMap: classes {classes[missing[:10]].tolist()} have no examples to embed them")
        self.class_embeddings_ = np.ascontiguousarray(E)
        self.classes_ = classes.astype(np.int64)
        self.n_classes_ = len(classes)
        return self

    # ------------------------------------------------------------------ store hooks

    def _validate_state(self) -> None:
        refs = check_array("reference_", self.reference_, dtype=np.int64, ndim=1)
        d = len(refs)
        check_array("alpha_", self.alpha_, dtype=np.float32, shape=(d,))
        C = int(self.n_classes_)
        check_array("class_embeddings_", self.class_embeddings_, dtype=np.float32, shape=(C, d))
        check_array("classes_", self.classes_, dtype=np.int64, shape=(C,))
        if d < 1 or refs.min() < 0:
            raise ValueError("reference_ must hold at least one non-negative classifier index")
        if self.bank_kind_ not in ("ova", "pairs"):
            raise ValueError(f"bank_kind_ must be 'ova' or 'pairs', got {self.bank_kind_!r}")
        if getattr(self, "reference_coef_", None) is not None:
            Wr = check_array("reference_coef_", self.reference_coef_, dtype=np.float32, ndim=2)
            if len(Wr) != d:
                raise ValueError("reference_coef_ must hold one row per reference")
            check_array("reference_intercept_", self.reference_intercept_, dtype=np.float32, shape=(d,))
        if self.threshold_ is not None and not isinstance(self.threshold_, (int, float)):
            raise ValueError(f"threshold_ must be a number or null, got {self.threshold_!r}")

    # ------------------------------------------------------------------ predicting

    def _require_fitted(self) -> None:
        if getattr(self, "reference_", None) is None:
            raise NotFittedError("ClassMap is not fitted: call fit(bank, X_embed, y_embed) first")

    def _check_bank(self, bank) -> None:
        self._require_fitted()
        if len(bank.classes_) != self.n_classes_:
            raise ConfigError(f"ClassMap was built for {self.n_classes_} classes but the bank has "
                              f"{len(bank.classes_)}; call update_class_embeddings after adding classes")
        if bank_kind(bank) != self.bank_kind_ or int(self.reference_.max()) >= n_classifiers(bank):
            raise ConfigError("ClassMap was built for a different classifier bank (kind or size differ); "
                              "rebuild the embedding with fit()")

    def expected_evaluations(self) -> int:
        """Upper bound of classifier evaluations per query: d + p (one-vs-all refines), d + p(p-1)/2 (vote)."""
        p = min(int(self.p), self.n_classes_)
        return len(self.reference_) + (p * (p - 1) // 2 if self.refine_strategy == ALL_PAIRS_VOTE else p)

    def filter(self, bank, X: np.ndarray, p: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """The filter step alone: ``(candidates (n, p) int64 labels in filter order, distances (n, p)
        float32)`` for ``X (n, D) float32`` (costs d evaluations per query; for analysis and plots)."""
        self._check_bank(bank)
        p = min(int(self.p if p is None else p), self.n_classes_)
        F = self._reference_outputs(bank, X)
        cands = np.empty((len(F), p), np.int64)
        dist = np.empty((len(F), p), np.float32)
        self._filter(F, p, cands, dist)
        return self.classes_[cands], dist

    def predict(self, bank, X: np.ndarray, top: int | None = None, *, batch_size: int = 1000,
                should_stop: StopFn = None) -> Prediction:
        """Classify ``X (n, D) float32`` with filter-and-refine; ``top`` (<= p, default p)
        candidates per query are returned best first. Batches of ``batch_size`` queries.

        Changes neither this object's learned state nor the bank: each query's ``evaluations``
        are counted from what was evaluated for it (d references + the refine's own)."""
        self._check_bank(bank)
        strategy = self.refine_strategy
        X = np.ascontiguousarray(X, np.float32)
        if X.ndim == 1:
            X = X[None, :]
        n = len(X)
        p = min(int(self.p), self.n_classes_)
        top = p if top is None else max(1, min(int(top), p))
        W, b = linear_weights(bank)
        if n == 1 and strategy != ALL_PAIRS_VOTE and W is not None and self._filter_index() is None:
            one = self._single_for(bank)                   # live video: the allocation-free path
            label = one(X[0])
            return Prediction(labels=np.array([label], np.int64),
                              top_classes=self.classes_[one.top_classes[:top]][None, :],
                              top_scores=one.top_scores[None, :top].copy(),
                              evaluations=np.array([one.evaluations], np.int64), timings=dict(one.timings))
        cls = np.empty((n, p), np.int64)
        score = np.empty((n, p), np.float32)
        evals = np.empty(n, np.int64)
        t_emb = t_ref = 0.0
        W_emb, b_emb, refs = self._embedding_weights(bank)
        refpos = self._refpos(bank)
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
            self._filter(F, p, cands, dist)
            t1 = time.perf_counter()
            if strategy == ALL_PAIRS_VOTE:
                c, s, e = refine_all_pairs_vote(bank, X[sl], F, cands, refpos, self.n_classes_)
                cls[sl], score[sl], evals[sl] = c, s, e + len(refs)
            elif W is not None:
                BK.refine_ova_batch(X[sl], W, b, F, refpos, cands, KERNEL_MODE[strategy], self._t(),
                                    cls[sl], score[sl], evals[sl])
                evals[sl] += len(refs)
            else:
                c, s, e = refine_ova_generic(bank, X[sl], F, cands, refpos, strategy, self._t())
                cls[sl], score[sl], evals[sl] = c, s, e + len(refs)
            t_emb += t1 - t0
            t_ref += time.perf_counter() - t1
        top_classes = self.classes_[cls[:, :top]]
        return Prediction(labels=top_classes[:, 0].copy(), top_classes=top_classes,
                          top_scores=score[:, :top].copy(), evaluations=evals,
                          timings={"embedding+filter": t_emb, "refine": t_ref})

    def _t(self) -> float:
        return float(self.threshold_) if self.threshold_ is not None else float("inf")

    def _refpos(self, bank) -> np.ndarray:
        """``(K,) int64``: each classifier's position among the references, or -1 (all -1 when the
        references are a separate reference bank's classifiers: none of the bank's is evaluated twice)."""
        refpos = np.full(n_classifiers(bank), -1, np.int64)
        if getattr(self, "reference_coef_", None) is None:
            refpos[self.reference_] = np.arange(len(self.reference_))
        return refpos

    def _embedding_weights(self, bank):
        """``(W, b, rows)``: the reference classifiers are rows ``rows`` of ``W (K, D)`` / ``b (K,)`` —
        the bank's own, or the kept reference bank's rows ``0..d-1``; ``(None, None, reference_)`` for a
        non-linear bank."""
        if getattr(self, "reference_coef_", None) is not None:
            return self.reference_coef_, self.reference_intercept_, np.arange(len(self.reference_), dtype=np.int64)
        W, b = linear_weights(bank)
        return W, b, self.reference_

    def _reference_outputs(self, bank, X: np.ndarray) -> np.ndarray:
        """Outputs of the d reference classifiers on ``X (n, D)`` -> ``(n, d) float32``."""
        if getattr(self, "reference_coef_", None) is not None:
            return np.asarray(X, np.float32) @ self.reference_coef_.T + self.reference_intercept_
        return classifier_outputs(bank, X, self.reference_)

    # ------------------------------------------------------------------ single query

    def _single_for(self, bank) -> "SingleQuery":
        """The cached :class:`SingleQuery` for ``bank`` and the calling thread (its buffers are not
        shared between threads); rebuilt when the bank or the model changes."""
        key = (id(bank), id(bank.coef_), id(self.class_embeddings_), id(self.reference_), self.p, self.refine,
               self.threshold_, id(getattr(self, "reference_coef_", None)))
        caches = self.__dict__.setdefault("_single_cache", {})
        tid = threading.get_ident()
        cached = caches.get(tid)
        if cached is None or cached[0] != key:
            if len(caches) > 8:
                caches.clear()
            cached = caches[tid] = (key, self.single_query(bank))
        return cached[1]

    def single_query(self, bank) -> "SingleQuery":
        """A preallocated one-query-at-a-time classifier (live video); see :class:`SingleQuery`."""
        self._check_bank(bank)
        if self.refine_strategy == ALL_PAIRS_VOTE or linear_weights(bank)[0] is None:
            raise ConfigError("the single-query fast path needs a linear one-vs-all bank with refine best-response "
                              "(v2) or first-above-threshold (v3); use predict() for other models")
        return SingleQuery(self, bank)

