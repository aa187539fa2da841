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

The bank interface used (as OneVsAllBank documents it): ``classes_``; linear banks ``coef_ (K, D)
float32`` + ``intercept_ (K,) float32`` (K = C for one-vs-all, row k is class k); an
all-pairs bank also has ``pairs_ (K, 2) int64`` = the class indices (i < j) of each row,
in lexicographic order, response > 0 favouring ``pairs_[k, 0]``. Non-linear banks (no
``coef_``) go through ``decision_function`` / ``decision_function_subset``.

This module is the estimator (fit, the scikit-learn predictions, store hooks); prediction against a
bank is :mod:`.classmap_predict`, the bank interface is read in :mod:`.bank_view`, the refine
strategies live in :mod:`.refine`, the one-query fast path in :mod:`.single_query`, and the result
type in :mod:`.result`.
"""
from __future__ import annotations

import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, MetaEstimatorMixin, clone
from sklearn.frozen import FrozenEstimator
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from ...constraints import HasMethods, Interval, StrOptions, validate_params
from ...checks import check_array
from ...errors import ConfigError, DataError, NoSignalError
from ...progress import ProgressFn, StopFn, check_stop, report, sub_progress
from .bank_view import bank_kind, classifier_outputs, linear_weights, n_classifiers, pair_rows
from .boost import (boost_references, class_medians, cross_fit_medians, learn_threshold,
                             random_references, sample_triples)
from .predict import FilterRefine
from .filter_step import FILTER_INDEX_THRESHOLD
from .refine import (ALIASES as REFINE_ALIASES, ALL_PAIRS_VOTE, BEST_RESPONSE, REFINES as REFINE_STRATEGIES,
                     canonical as canonical_refine)
from ..result import ClassMapResult, Prediction
from .single_query import SingleQuery

__all__ = ["ClassMap", "ClassMapResult", "smoother_bank", "EMBEDDINGS", "EMBEDDING_EXAMPLES", "FILTER_INDEX_THRESHOLD", "Prediction", "REFINES",
           "SingleQuery", "bank_kind", "class_medians", "classifier_outputs", "cross_fit_medians",
           "learn_threshold", "pair_rows"]

EMBEDDINGS = ("boosted", "random")
#: which examples embed the classes: the held-out part alone (the paper), or with the bank's training part
EMBEDDING_EXAMPLES = ("embedding", "embedding+training")
MAX_TRIPLES = 5_000_000
MAX_MEMORY_MB = 65_536
#: every accepted ``refine`` value: the descriptive names and the paper's aliases
REFINES = (*REFINE_STRATEGIES, *REFINE_ALIASES)


def smoother_bank(bank, factor: float):
    """An unfitted copy of ``bank`` with ``factor`` times its penalty (the parameter the bank's class names
    as ``penalty``: ridge ``alpha`` x factor, SVM ``C`` / factor): the reference bank of ``reference_penalty``.
    ConfigError for a bank without a penalty."""
    key = getattr(type(bank), "penalty", None)
    if key is None or not factor > 0:
        raise ConfigError("ClassMap reference_penalty needs a positive factor and a bank with a penalty "
                          f"({type(bank).__name__} names none)")
    from ...selection import stronger_penalty

    return clone(bank).set_params(**{key: stronger_penalty(key, bank.get_params(deep=False)[key], factor)})


class ClassMap(FilterRefine, ClassifierMixin, MetaEstimatorMixin, BaseEstimator):
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
        Every class's embedding; from 20 000 classes the filter searches an HNSW graph over them.
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
    # the bounds on n_triples and max_memory_mb keep a typo from exhausting memory (triples are sampled and
    # scored up front); the registry derives the Train panel's fields and the CLI's checks from these
    _parameter_constraints: dict = {
        "estimator": [HasMethods(["fit", "decision_function"]), None],
        "d": [Interval(Integral, 1, 100_000, closed="both")],
        "p": [Interval(Integral, 1, None, closed="left")],
        "embedding": [StrOptions(set(EMBEDDINGS))],
        "refine": [StrOptions(set(REFINES))],
        "n_triples": [Interval(Integral, 1, MAX_TRIPLES, closed="both")],
        "hard_fraction": [Interval(Real, 0, 1, closed="both")],
        "threshold": [Real, None],
        "max_memory_mb": [Interval(Real, 1, MAX_MEMORY_MB, closed="both")],
        "reference_penalty": [Interval(Real, 1e-6, 1e6, closed="both")],
        "embedding_fraction": [Interval(Real, 0, 1, closed="neither")],
        "random_state": ["random_state"],
        "embedding_examples": [StrOptions(set(EMBEDDING_EXAMPLES))],
    }

    def __init__(self, estimator=None, *, d: int = 45, p: int = 40, embedding: str = "boosted", refine: str = "v2",
                 n_triples: int = 60_000, hard_fraction: float = 0.5, threshold: float | None = None,
                 max_memory_mb: float = 600.0, reference_penalty: float = 1.0, embedding_fraction: float = 0.25,
                 embedding_examples: str = "embedding", random_state: int | None = 0):
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
        self.random_state = random_state

    # ------------------------------------------------------------------ fitting

    @property
    def refine_strategy(self) -> str:
        """The refine strategy's descriptive name (``refine`` may hold the paper's alias)."""
        strategy = canonical_refine(self.refine)
        if strategy is None:
            raise ConfigError(f"ClassMap refine must be one of {', '.join(REFINES)}, got {self.refine!r}")
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

    def _class_index(self, classes: np.ndarray, y) -> np.ndarray:
        y = np.asarray(y)
        idx = np.searchsorted(classes, y)
        idx = np.clip(idx, 0, len(classes) - 1)
        bad = classes[idx] != y
        if bad.any():
            raise DataError(f"ClassMap: labels {sorted(set(y[bad].tolist()))[:10]} are not classes of the bank")
        return idx.astype(np.int64)

    def fit_embedding(self, bank, X_embed: np.ndarray, y_embed: np.ndarray, *, X_train=None, y_train=None,
                      train_classes=None, reference_bank=None, progress: ProgressFn = None,
                      should_stop: StopFn = None) -> "ClassMap":
        """Choose the references and embed every class of the fitted ``bank`` (kept as ``estimator_``).

        ``X_embed (n, D) float32`` / ``y_embed (n,)``: labelled examples *held out from the
        bank's training* (the paper's embedding split). Class embeddings are the per-dimension
        median of the reference outputs over each class's held-out examples: outputs on the
        classifiers' own training examples are optimistic (margins a query never gets), so
        embeddings built on them sit too far from where test queries land. Every class needs
        at least one held-out example. With a strongly penalised ``reference_bank`` that bias is
        small and adding the bank's training examples can pay: with ``embedding_examples=
        "embedding+training"`` the bank's training examples ``X_train`` / ``y_train`` join them (which
        of the two is chosen on validation by :class:`..search.ClassMapSearch`); otherwise they are unused.

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
        validate_params(self)
        self._check_bank(bank)
        check_stop(should_stop)
        if self.embedding_examples == "embedding+training":
            if X_train is None or y_train is None:
                raise ConfigError("ClassMap embedding_examples 'embedding+training' needs the bank's training "
                                  "examples: pass X_train and y_train to fit_embedding")
            X_embed = np.concatenate([np.asarray(X_embed, np.float32), np.asarray(X_train, np.float32)])
            y_embed = np.concatenate([np.asarray(y_embed), np.asarray(y_train)])
        classes = np.asarray(bank.classes_)
        C = len(classes)
        kind = bank_kind(bank)
        yi = self._class_index(classes, y_embed)
        X = np.ascontiguousarray(X_embed, np.float32)
        if X.ndim != 2 or len(X) != len(yi):
            raise DataError(f"ClassMap.fit_embedding: X_embed must be (n, D) with n = len(y_embed); got {X.shape} and {len(yi)}")
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
        self.classes_ = classes.astype(np.int64) if classes.dtype.kind in "iub" else classes
        self.n_classes_ = int(C)
        self.bank_kind_ = kind
        self.estimator_ = bank
        self.clear_caches()
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
        F = self.reference_outputs(bank, X)
        E_new = class_medians(F, yi, len(classes))
        E = np.full((len(classes), len(self.reference_)), np.nan, np.float32)
        E[:self.n_classes_] = self.class_embeddings_
        got = ~np.isnan(E_new[:, 0])
        E[got] = E_new[got]
        missing = np.flatnonzero(np.isnan(E[:, 0]))
        if len(missing):
            raise DataError(f"ClassMap: classes {classes[missing[:10]].tolist()} have no examples to embed them")
        self.class_embeddings_ = np.ascontiguousarray(E)
        self.classes_ = classes.astype(np.int64) if classes.dtype.kind in "iub" else classes
        self.n_classes_ = len(classes)
        return self

    # ------------------------------------------------------------------ store hooks

    def validate_state(self) -> None:
        refs = check_array("reference_", self.reference_, dtype=np.int64, ndim=1)
        d = len(refs)
        check_array("alpha_", self.alpha_, dtype=np.float32, shape=(d,))
        C = int(self.n_classes_)
        check_array("class_embeddings_", self.class_embeddings_, dtype=np.float32, shape=(C, d))
        check_array("classes_", self.classes_, dtype=np.int64, shape=(C,))   # saved models: labels 0..C-1
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

    # ------------------------------------------------------------------ scikit-learn

    def fit(self, X, y) -> "ClassMap":
        """Clone and train the bank (``estimator``) on part of ``X (n, D)`` / ``y (n,)``, then embed the classes
        from the held-out rest (``embedding_fraction`` of each class, stratified by ``random_state``). A
        ``FrozenEstimator`` bank is used as it is and every example embeds."""
        X, y = validate_data(self, X, y, dtype=np.float32)
        check_classification_targets(y)
        labels, yi = np.unique(y, return_inverse=True)
        if len(labels) < 2:
            raise ValueError(f"ClassMap needs at least two classes to tell apart; got one class ({labels[0]!r})")
        if isinstance(self.estimator, FrozenEstimator):
            self._fit_embedding_or_random(self.estimator.estimator, X, y, train=(X[:0], y[:0]))
            return self
        validate_params(self)
        if self.estimator is None:
            from ..banks.ova import OneVsAllRidge

            bank = OneVsAllRidge(n_jobs=1)
        else:
            bank = clone(self.estimator)
        train, embed = self._embedding_split(yi)
        bank.fit(X[train], yi[train])
        reference_bank = None
        if float(self.reference_penalty) != 1.0:
            reference_bank = smoother_bank(bank, float(self.reference_penalty)).fit(X[train], yi[train])
        self._fit_embedding_or_random(bank, X[embed], yi[embed], reference_bank, (X[train], yi[train]))
        self.classes_ = labels                     # the bank learnt class indices; predict gives y's labels
        return self

    def _fit_embedding_or_random(self, bank, X, y, reference_bank=None, train=(None, None)) -> None:
        """:meth:`fit_embedding`; when boosting finds no classifier better than chance (noise, random labels)
        a scikit-learn fit still gives a model: random references (CM-RRC), with a warning."""
        kw = {"reference_bank": reference_bank, "X_train": train[0], "y_train": train[1]}
        try:
            self.fit_embedding(bank, X, y, **kw)
        except NoSignalError as exc:
            warnings.warn(f"{exc}; using random references instead", UserWarning, stacklevel=3)
            other = clone(self).set_params(embedding="random", d=min(int(self.d), n_classifiers(bank)))
            other.fit_embedding(bank, X, y, **kw)
            vars(self).update({k: v for k, v in vars(other).items() if k.endswith("_")})

    def _embedding_split(self, yi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(train, embed)`` row indices: per class, ``embedding_fraction`` of its rows (at least one) held
        out for the embedding, at least one kept for the bank; a class of one row goes to both."""
        rng = np.random.default_rng(self.random_state)
        train, embed = [], []
        for c in range(int(yi.max()) + 1):
            rows = rng.permutation(np.flatnonzero(yi == c))
            if len(rows) == 1:
                train.append(rows)
                embed.append(rows)
                continue
            k = min(len(rows) - 1, max(1, int(round(self.embedding_fraction * len(rows)))))
            embed.append(rows[:k])
            train.append(rows[k:])
        return np.sort(np.concatenate(train)), np.sort(np.concatenate(embed))

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
        res = self.predict_result(self._checked_input(X))
        cols = np.searchsorted(self.classes_, res.top_classes)
        S = np.full((len(res), self.n_classes_), -np.inf, np.float32)
        np.put_along_axis(S, cols, np.where(np.isnan(res.top_scores), -np.inf, res.top_scores), axis=1)
        if self.n_classes_ == 2:
            with np.errstate(invalid="ignore"):
                return S[:, 1] - S[:, 0]
        return S
