"""ClassMap (Athitsos et al., ICCV 2007): joint embedding of patterns and classes, filter and refine.

Given a trained classifier bank (one-vs-all or all-pairs), a query is embedded by the outputs
of d *reference* classifiers, every class by the per-dimension median of those outputs over
its examples; the filter ranks classes by weighted L1 distance to the query and keeps the top
p; the refine step evaluates only the candidates' classifiers. Per query that is about d + p
classifier evaluations instead of C (brute force).

A scikit-learn meta-estimator in the manner of ``OneVsRestClassifier`` / ``CalibratedClassifierCV``::

    cm = ClassMap(OneVsAllRidge(), d=45, p=40).fit(X, y)   # clones and fits the bank,
    cm.predict(X_test)                                                    # then the embedding
    cm.predict_topk(X_test, 5); cm.decision_function(X_test)
    ClassMap(FrozenEstimator(bank)).fit(X_embed, y_embed)                 # a prefit bank: embedding only

so it goes into ``Pipeline``, ``clone`` and ``GridSearchCV``. The app's path, with the bank trained
and held by the caller (the Recogniser, the benches)::

    cm = ClassMap(d=45, p=40).fit_embedding(bank, X_embed, y_embed)
    res = cm.predict_result(X_test, bank=bank)   # Prediction: labels, top-p lists, evaluations, timings
    one = cm.single_query(bank)                   # live video: preallocated, one query at a time

The bank interface it reads (``classes_``, ``coef_`` / ``intercept_``, an all-pairs bank's ``pairs_``, or
``decision_function`` / ``decision_function_subset``) is documented in :mod:`.bank_view`.

One class: this module is the estimator; the work of its longer methods is in functions beside it — the
embedding's fitting in :mod:`.embedding` (over :mod:`.boost`), batch prediction in :mod:`.predict`, the
one-query fast path in :mod:`.single_query`, the refine strategies in :mod:`.refine`, the bank interface in
:mod:`.bank_view`; the filter is a fitted index of :mod:`..filters` (the ``filter`` parameter), saved with the
model, and kept current with the class embeddings by :class:`.filter_state.FilterState`. Derived arrays
(single-query buffers) live in one cache dict (:meth:`cache`), never saved.
"""
from __future__ import annotations

import copy

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, MetaEstimatorMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from ...guards.constraints import validate_params
from ...errors import ConfigError, NotFittedError
from ...progress import ProgressFn, StopFn, check_stop
from ..filters.base import FilterIndex
from ..result import ClassMapResult, Prediction
from . import predict as P
from .bank_view import bank_kind, classifier_outputs, linear_weights, n_classifiers
from .embedding import check_fitted, drop_class, embed, fit_estimator, reembed
from .filter_state import FilterState
from .params import (EMBEDDING_EXAMPLES, EMBEDDINGS, FILTERS, MAX_MEMORY_MB, MAX_TRIPLES,  # noqa: F401
                     PARAMETER_CONSTRAINTS, REFINE_VALUES)
from .refine import (ALL_PAIRS_VOTE, FIRST_ABOVE_THRESHOLD, canonical as canonical_refine)
from .single_query import SingleQuery

__all__ = ["ClassMap", "ClassMapResult", "EMBEDDINGS", "EMBEDDING_EXAMPLES", "FILTERS", "Prediction", "REFINE_VALUES",
           "SingleQuery"]


class ClassMap(FilterState, ClassifierMixin, MetaEstimatorMixin, BaseEstimator):
    """Filter-and-refine recognition among many classes with a ClassMap embedding (Athitsos et al., 2007).

    A scikit-learn meta-estimator: ``fit(X, y)`` clones ``estimator``, trains it on part of each class and
    embeds the classes from the rest by ``d`` reference classifiers. The *filter* ranks the classes by
    weighted L1 distance to the query's embedding and the *refine* scores the ``p`` nearest: ``d + p``
    classifier evaluations instead of one per class (batch and single query alike, bit for bit).

    Parameters
    ----------
    estimator : estimator or None, default=None
        The bank ``fit`` clones and trains (None: a one-vs-all ridge
        :class:`~classmap_gui.core.classify.OneVsAllRidge`); a ``FrozenEstimator(bank)`` is used as it is,
        and all of ``fit``'s examples then build the embedding.
    d : int, default=45
        Reference classifiers (embedding dimensions); ``"boosted"`` stops early if none beats chance.
    p : int, default=40
        Candidates the filter keeps and the refine evaluates.
    embedding : {"boosted", "random"}, default="boosted"
        CM-Boosted (AdaBoost over weak triple classifiers, the paper's section 6) or CM-RRC (``d`` random
        classifiers with weight 1).
    refine : {"v2", "v1", "v3", "best-response", "all-pairs-vote", "first-above-threshold"}, default="v2"
        v2 ``"best-response"``: the best one-vs-all response among the top p; v1 ``"all-pairs-vote"``: the
        all-pairs classifiers' vote among them (an all-pairs bank); v3 ``"first-above-threshold"``: the
        first candidate in filter order whose response reaches the threshold.
    n_triples : int, default=60000
        AdaBoost's training triples; their weak outputs are one ``n_triples * K`` float32 matrix, capped by
        ``max_memory_mb`` (candidates are sub-sampled beyond it).
    hard_fraction : float, default=0.5
        Share of triples whose wrong class is one of the example's strongest confusers.
    threshold : float or None, default=None
        The v3 threshold; None learns it (the paper's rule, cross-fitted: at most 0.05 points over v2).
    max_memory_mb : float, default=600.0
        Memory for the boosted embedding's weak outputs.
    reference_penalty : float, default=1.0
        A factor f > 1 trains a second bank with f times the penalty whose smoother classifiers become the
        references; 1 takes them from the bank (for a frozen bank pass one to :meth:`fit_embedding`).
    embedding_examples : {"embedding", "embedding+training"}, default="embedding"
        Which examples embed the classes: the held-out embedding part, or with the bank's training part too
        (class embeddings averaged over more images).
    filter : {"auto", "exact", "ivf", "hnsw"}, default="auto"
        The filter index (:data:`..filters.INDEXES`), fitted with the class embeddings and saved with the model;
        "auto": the exact scan below 20 000 classes, the HNSW graph from there on.
    filter_params : dict or None, default=None
        The filter kind's parameters (e.g. ``{"ef_search": 200}`` for "hnsw"); None: its defaults.
    embedding_fraction : float, default=0.25
        Share of each class held out of the bank's training to embed the classes.
    random_state : int or None, default=0
        Seed for the split, the triple sampling and random references.

    Attributes
    ----------
    estimator_ : estimator
        The fitted bank (a saved model keeps it once, in the Recogniser).
    reference_ : ndarray of shape (d,), int64
        The bank rows used as references; ``reference_coef_`` (d, D) / ``reference_intercept_`` (d,)
        float32 hold a separate reference bank's instead (else None).
    alpha_ : ndarray of shape (d,), float32
        The filter's L1 weights.
    class_embeddings_ : ndarray of shape (C, d), float32
        Every class's embedding.
    filter_ : FilterIndex
        The fitted filter index over them (:mod:`..filters`), the kind ``filter`` names.
    threshold_ : float or None
        The v3 threshold in use.
    classes_ : ndarray of shape (C,)
        The labels ``predict`` returns (``n_classes_`` of them; ``bank_kind_`` "ova" or "pairs").

    Examples
    --------
    >>> from sklearn.datasets import load_digits
    >>> from classmap_gui import ClassMap
    >>> from classmap_gui.core.classify import OneVsAllRidge
    >>> X, y = load_digits(return_X_y=True)
    >>> cm = ClassMap(OneVsAllRidge(), d=6, p=4, n_triples=3000).fit(X[:1500], y[:1500])
    >>> cm.class_embeddings_.shape
    (10, 6)
    >>> float((cm.predict(X[1500:]) == y[1500:]).mean()) > 0.8
    True
    >>> int(cm.predict_result(X[1500:]).evaluations.max())   # d + p classifier evaluations, not one per class
    10
    """

    #: the bank is saved by its owner (the Recogniser), not a second time inside the ClassMap
    store_exclude = ("estimator_",)
    _parameter_constraints: dict = PARAMETER_CONSTRAINTS

    def __init__(self, estimator=None, *, d: int = 45, p: int = 40, embedding: str = "boosted", refine: str = "v2",
                 n_triples: int = 60_000, hard_fraction: float = 0.5, threshold: float | None = None,
                 max_memory_mb: float = 600.0, reference_penalty: float = 1.0, embedding_fraction: float = 0.25,
                 embedding_examples: str = "embedding", filter: str = "auto", filter_params: dict | None = None,
                 random_state: int | None = 0):
        self.estimator = estimator
        self.d = d
        self.p = p
        self.embedding = embedding
        self.refine = refine
        self.n_triples = n_triples
        self.hard_fraction = hard_fraction
        self.threshold = threshold
        self.max_memory_mb = max_memory_mb
        self.reference_penalty = reference_penalty
        self.embedding_fraction = embedding_fraction
        self.embedding_examples = embedding_examples
        self.filter = filter
        self.filter_params = filter_params
        self.random_state = random_state

    # ------------------------------------------------------------------ fitting

    @property
    def refine_strategy(self) -> str:
        """The refine strategy's descriptive name (``refine`` may hold the paper's alias)."""
        strategy = canonical_refine(self.refine)
        if strategy is None:
            raise ConfigError(f"ClassMap refine must be one of {', '.join(REFINE_VALUES)}, got {self.refine!r}")
        return strategy

    def check_params(self, bank) -> None:
        """ConfigError for a setting that cannot work with ``bank`` (a caller checks before any fitting)."""
        validate_params(self)
        self._check_bank(bank)

    def _check_bank(self, bank) -> None:
        """The refine needs a bank of its kind (one parameter's value against the bank's shape)."""
        strategy = self.refine_strategy
        kind = bank_kind(bank)
        if strategy == ALL_PAIRS_VOTE and kind != "pairs":
            raise ConfigError(f"ClassMap refine {self.refine} (all-pairs vote) needs an all-pairs classifier bank; "
                              "use refine best-response (v2) or first-above-threshold (v3) with a one-vs-all bank")
        if strategy != ALL_PAIRS_VOTE and kind != "ova":
            raise ConfigError(f"ClassMap refine {self.refine} needs a one-vs-all classifier bank; "
                              "use refine all-pairs-vote (v1) with an all-pairs bank")

    def fit_embedding(self, bank, X_embed: np.ndarray, y_embed: np.ndarray, *, X_train=None, y_train=None,
                      train_classes=None, reference_bank=None, progress: ProgressFn = None,
                      should_stop: StopFn = None) -> "ClassMap":
        """Choose the references and embed every class of the fitted ``bank`` (kept as ``estimator_``), then
        fit the filter index on the class embeddings.

        ``X_embed (n, D) float32`` / ``y_embed (n,)``: labelled examples *held out from the bank's training*
        (the paper's embedding split), at least one per class; with ``embedding_examples=
        "embedding+training"`` the bank's training examples ``X_train`` / ``y_train`` join them.
        ``train_classes`` (labels): AdaBoost's triples and candidate references use only these (the paper's
        Fig. 5). ``reference_bank``: a smoother linear one-vs-all bank over the same classes whose classifiers
        become the references (``bank`` still refines; a query then costs d + p evaluations). Why each
        choice: :func:`.embedding.embed`.
        """
        validate_params(self)
        self._check_bank(bank)
        check_stop(should_stop)
        embed(self, bank, X_embed, y_embed, X_train=X_train, y_train=y_train, train_classes=train_classes,
              reference_bank=reference_bank, progress=progress, should_stop=should_stop)
        self._fit_filter()
        return self

    def update_class_embeddings(self, bank, X: np.ndarray, y: np.ndarray) -> "ClassMap":
        """(Re)embed the classes in ``y`` from held-out examples ``X`` — e.g. classes added to the
        bank after the embedding was built (the references stay; the paper's Fig. 5 shows
        such classes are still found). Grows ``class_embeddings_`` if the bank grew; new classes only are
        appended to the filter index (the graph inserts nodes, no rebuild), re-embedded ones refit it."""
        self._require_fitted()
        before = self.class_embeddings_
        reembed(self, bank, X, y)
        self._refresh_filter(before)
        return self

    def remove_class(self, label) -> "ClassMap":
        """Take class ``label`` out (undoing an added class, after the bank's ``remove_class``): its embedding goes,
        the classes after it move down by one and the filter index is refitted (an HNSW graph cannot drop a node:
        at 2431 classes a rebuild costs tens of milliseconds, growing about as C log C). A reference class cannot
        be removed (ConfigError)."""
        self._require_fitted()
        drop_class(self, label)
        self._fit_filter()
        return self

    def set_class_embeddings(self, embeddings: np.ndarray) -> "ClassMap":
        """Replace ``class_embeddings_`` (``(C, d)``, e.g. means over more examples) and refit the filter on them."""
        self.class_embeddings_ = np.ascontiguousarray(embeddings, np.float32)
        self._fit_filter()
        return self

    def with_refine(self, refine: str) -> "ClassMap":
        """A copy that shares the fitted references, weights and class embeddings but decides candidates
        with ``refine``; its threshold is kept only when both refines use one (else ``threshold_`` is None).
        The copy has its own caches."""
        other = copy.copy(self)
        other.__dict__["_cache"] = {"filter_on": self.cache().get("filter_on")}
        other.set_params(refine=refine)
        if other.refine_strategy != FIRST_ABOVE_THRESHOLD or self.refine_strategy != FIRST_ABOVE_THRESHOLD:
            other.threshold_ = None
        return other

    # ------------------------------------------------------------------ store hooks

    def validate_state(self) -> None:
        """The fitted attributes' dtypes and shapes (the store calls it on a loaded model)."""
        check_fitted(self)

    def after_load(self) -> None:
        """A model saved without a filter index (an older version), or with one that is not over its class
        embeddings, gets its ``filter`` fitted now."""
        self.__dict__.pop("filter_index_", None)      # an older version's index state: refitted below
        index = getattr(self, "filter_", None)
        if isinstance(index, FilterIndex) and index.matches(self.class_embeddings_, self.alpha_):
            self._filter_is_current()
        else:
            self._fit_filter()

    # ------------------------------------------------------------------ predicting
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

    def candidates(self, bank, X: np.ndarray, p: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """The filter step alone: ``(candidates (n, p) labels in filter order, distances (n, p)
        float32)`` for ``X (n, D) float32`` (costs d evaluations per query; for analysis and plots)."""
        bank = self.bank_for(bank)
        p = min(int(self.p if p is None else p), self.n_classes_)
        F = self.reference_outputs(bank, X)
        cands = np.empty((len(F), p), np.int64)
        dist = np.empty((len(F), p), np.float32)
        self.current_filter().search(F, p, out_cls=cands, out_dist=dist)
        return self.classes_[cands], dist

    def predict_result(self, X: np.ndarray, top: int | None = None, *, bank=None, batch_size: int = 1000,
                       should_stop: StopFn = None) -> Prediction:
        """Classify ``X (n, D) float32`` with filter-and-refine: a :class:`Prediction` whose ``top`` (<= p,
        default p) candidates per query are ``classes_`` labels, best first, with their scores, the
        classifier evaluations each query cost and the stage timings. ``bank``: the classifier bank
        (default ``estimator_``). Batches of ``batch_size`` queries (:func:`.predict.predict_batch`); one row
        through the allocation-free single-query path.

        Changes neither the learned state nor the bank: each query's ``evaluations`` are counted from
        what was evaluated for it (d references + the refine's own)."""
        X = np.ascontiguousarray(X, np.float32)
        if X.ndim == 1:
            X = X[None, :]
        if len(X) == 1:
            one = P.cached_single(self, bank)
            if one is not None and X.shape[1] == one.W.shape[1]:
                return P.one_result(self, one, X[0], top)     # live video: checked when it was built
        bank = self.bank_for(bank)
        if len(X) == 1 and self.refine_strategy != ALL_PAIRS_VOTE and linear_weights(bank)[0] is not None:
            return P.one_result(self, P.single_for(self, bank), X[0], top)  # live video: the allocation-free path
        return P.predict_batch(self, bank, X, top, batch_size, should_stop)

    def single_query(self, bank=None) -> SingleQuery:
        """A preallocated one-query-at-a-time classifier (live video); see :class:`SingleQuery`."""
        bank = self.bank_for(bank)
        if self.refine_strategy == ALL_PAIRS_VOTE or linear_weights(bank)[0] is None:
            raise ConfigError("the single-query fast path needs a linear one-vs-all bank with refine best-response "
                              "(v2) or first-above-threshold (v3); use predict_result() for other models")
        return SingleQuery(self, bank)

    # ------------------------------------------------------------------ scikit-learn

    def fit(self, X, y) -> "ClassMap":
        """Clone and train the bank (``estimator``) on part of ``X (n, D)`` / ``y (n,)``, then embed the classes
        from the held-out rest (``embedding_fraction`` of each class, stratified by ``random_state``). A
        ``FrozenEstimator`` bank is used as it is and every example embeds."""
        return fit_estimator(self, X, y)

    def _checked_input(self, X) -> np.ndarray:
        check_is_fitted(self, "reference_")
        return validate_data(self, X, dtype=np.float32, reset=False) if hasattr(self, "n_features_in_") \
            else np.ascontiguousarray(X, np.float32)

    def predict(self, X) -> np.ndarray:
        """The best class of each row of ``X (n, D)``: ``(n,)`` labels of ``classes_``."""
        return self.predict_result(self._checked_input(X), top=1).labels

    def predict_topk(self, X, k: int | None = None) -> np.ndarray:
        """The ``k`` (<= p, default p) best classes of each row, best first: ``(n, k)`` labels of ``classes_``."""
        return self.predict_result(self._checked_input(X), top=k).top_classes

    def decision_function(self, X) -> np.ndarray:
        """Class scores ``(n, C) float32``: the refine's score (one-vs-all response or all-pairs votes) for
        the classes it evaluated, ``-inf`` for the rest (filtered out, or not reached by a thresholded scan),
        so the arg-max is :meth:`predict`. Two classes: ``(n,)`` score of ``classes_[1]`` minus ``classes_[0]``."""
        return P.scores(self, self.predict_result(self._checked_input(X)))
