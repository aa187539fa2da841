"""Fitting ClassMap's embedding: the references (boosted or random), the class embeddings, the v3 threshold.

:func:`embed` is the body of :meth:`~.estimator.ClassMap.fit_embedding` (the paper's sections 4-6): it reads the
estimator's parameters and sets its fitted attributes; the steps themselves (class medians, triples, AdaBoost
over weak triple classifiers, the threshold) are :mod:`.boost`'s.
"""
from __future__ import annotations

import warnings

import numpy as np
from sklearn.base import clone
from sklearn.frozen import FrozenEstimator
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import validate_data

from ...guards.arrays import check_array
from ...guards.constraints import validate_params
from ...errors import ConfigError, DataError, NoSignalError
from ...progress import ProgressFn, StopFn, check_stop, report, sub_progress
from .bank_view import bank_kind, classifier_outputs, linear_weights, n_classifiers, output_blocks, subset_scores
from .boost import (boost_references, class_medians, cross_fit_medians, learn_threshold, random_references,
                    sample_triples)
from .refine import ALL_PAIRS_VOTE, BEST_RESPONSE


def embed(cm, bank, X_embed: np.ndarray, y_embed: np.ndarray, *, X_train=None, y_train=None, train_classes=None,
          reference_bank=None, progress: ProgressFn = None, should_stop: StopFn = None) -> None:
    """Choose ``cm``'s references and embed every class of the fitted ``bank`` (arguments as
    :meth:`~.estimator.ClassMap.fit_embedding`); sets ``reference_``, ``alpha_``, ``class_embeddings_``,
    ``classes_``, ``n_classes_``, ``bank_kind_``, ``estimator_``, ``reference_coef_`` /
    ``reference_intercept_`` and ``threshold_``."""
    if cm.embedding_examples == "embedding+training":
        if X_train is None or y_train is None:
            raise ConfigError("ClassMap embedding_examples 'embedding+training' needs the bank's training "
                              "examples: pass X_train and y_train to fit_embedding")
        X_embed = np.concatenate([np.asarray(X_embed, np.float32), np.asarray(X_train, np.float32)])
        y_embed = np.concatenate([np.asarray(y_embed), np.asarray(y_train)])
    classes = np.asarray(bank.classes_)
    C = len(classes)
    kind = bank_kind(bank)
    yi = class_index(classes, y_embed)
    X = np.ascontiguousarray(X_embed, np.float32)
    if X.ndim != 2 or len(X) != len(yi):
        raise DataError(f"ClassMap.fit_embedding: X_embed must be (n, D) with n = len(y_embed); got {X.shape} and {len(yi)}")
    rng = np.random.default_rng(cm.random_state)

    if train_classes is None:
        tc = np.arange(C)
    else:
        tc = np.unique(class_index(classes, train_classes))
    if kind == "pairs":
        in_tc = np.zeros(C, bool)
        in_tc[tc] = True
        cand = np.flatnonzero(in_tc[bank.pairs_[:, 0]] & in_tc[bank.pairs_[:, 1]])
    else:
        cand = tc.copy()
    thresholded = cm.refine_strategy not in (ALL_PAIRS_VOTE, BEST_RESPONSE)
    need_all = cm.embedding == "boosted" or (thresholded and cm.threshold is None)
    if reference_bank is not None and (linear_weights(reference_bank)[0] is None or kind != "ova"
                                       or not np.array_equal(np.asarray(reference_bank.classes_), classes)):
        raise ConfigError("ClassMap: reference_bank must be a linear one-vs-all bank over the bank's classes")
    ref_bank = bank if reference_bank is None else reference_bank
    refs = None
    if cm.embedding == "random":
        refs, alpha = random_references(cand, int(cm.d), rng)

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

    if cm.embedding == "boosted":
        sub = sub_progress(progress, 0.1, 0.85)
        kept = np.flatnonzero(np.isin(yi, tc))
        confusers = None
        if kind == "ova" and cm.hard_fraction > 0 and len(tc) > 2:
            k = min(10, len(tc) - 1)
            confusers = _confusers(M, kept, tc, k)
        idx, pos, neg = sample_triples(yi[kept], int(cm.n_triples), tc, rng, confusers, cm.hard_fraction)
        rows = kept[idx]                                  # the triples' rows of M
        # each triple compares X with class medians of the other fold (E2 rows shifted by C)
        shift = C * fold[rows]
        # a linear bank's outputs are read again block by block, recomputed bit for bit (bank_view.output_blocks):
        # the matrix goes before AdaBoost's weak outputs are built, so the two are never both held
        M = output_blocks(ref_bank, X) or M
        refs, alpha = boost_references(M, E2, rows, pos + shift, neg + shift, int(cm.d), cand,
                                       max_memory_mb=cm.max_memory_mb, rng=rng,
                                       progress=sub, should_stop=should_stop)
    cm.reference_ = refs.astype(np.int64)
    cm.alpha_ = alpha.astype(np.float32)
    cm.class_embeddings_ = np.ascontiguousarray(E_all[:, refs] if need_all else E_all, np.float32)
    cm.classes_ = classes.astype(np.int64) if classes.dtype.kind in "iub" else classes
    cm.n_classes_ = int(C)
    cm.bank_kind_ = kind
    cm.estimator_ = bank
    cm.reference_coef_ = cm.reference_intercept_ = None
    if reference_bank is not None:
        Wr, br = linear_weights(reference_bank)
        cm.reference_coef_, cm.reference_intercept_ = np.ascontiguousarray(Wr[refs]), br[refs].copy()
    cm.threshold_ = None
    if thresholded:
        report(progress, 0.9, "embedding: threshold")
        cm.threshold_ = (float(cm.threshold) if cm.threshold is not None
                         else learn_threshold(M, yi, refs, cm.alpha_, cm.class_embeddings_,
                                              min(int(cm.p), C), fold=fold, E2=E2,
                                              R=None if reference_bank is None
                                              else lambda cands: subset_scores(bank, X, cands)))


def _confusers(M: np.ndarray, rows: np.ndarray, tc: np.ndarray, k: int, chunk: int = 2048) -> np.ndarray:
    """Per row of ``M[rows]``, the ``k + 1`` classes of ``tc`` with the largest outputs (its confusers), ``(len(rows),
    k + 1) int64``; ``chunk`` rows at a time, so no ``(n, C)`` copy or index matrix sits beside ``M``."""
    out = np.empty((len(rows), k + 1), np.int64)
    every = np.array_equal(tc, np.arange(M.shape[1]))
    for s in range(0, len(rows), chunk):
        block = M[rows[s:s + chunk]]
        if not every:
            block = block[:, tc]
        out[s:s + chunk] = tc[np.argpartition(-block, k, axis=1)[:, :k + 1]]
    return out


def class_index(classes: np.ndarray, y) -> np.ndarray:
    """Positions of the labels ``y`` among the bank's sorted ``classes``; DataError for a label it lacks."""
    y = np.asarray(y)
    idx = np.searchsorted(classes, y)
    idx = np.clip(idx, 0, len(classes) - 1)
    bad = classes[idx] != y
    if bad.any():
        raise DataError(f"ClassMap: labels {sorted(set(y[bad].tolist()))[:10]} are not classes of the bank")
    return idx.astype(np.int64)


def embedding_split(yi: np.ndarray, fraction: float, random_state) -> tuple[np.ndarray, np.ndarray]:
    """``(train, embed)`` row indices: per class, ``fraction`` of its rows (at least one) held
    out for the embedding, at least one kept for the bank; a class of one row goes to both."""
    rng = np.random.default_rng(random_state)
    train, embed = [], []
    for c in range(int(yi.max()) + 1):
        rows = rng.permutation(np.flatnonzero(yi == c))
        if len(rows) == 1:
            train.append(rows)
            embed.append(rows)
            continue
        k = min(len(rows) - 1, max(1, int(round(fraction * len(rows)))))
        embed.append(rows[:k])
        train.append(rows[k:])
    return np.sort(np.concatenate(train)), np.sort(np.concatenate(embed))


def reembed(cm, bank, X: np.ndarray, y: np.ndarray) -> None:
    """``cm.update_class_embeddings``: the classes in ``y`` embedded anew from ``X`` (medians of the reference
    outputs), the others kept; ``class_embeddings_`` grows with the bank."""
    classes = np.asarray(bank.classes_)
    yi = class_index(classes, y)
    F = cm.reference_outputs(bank, X)
    E_new = class_medians(F, yi, len(classes))
    E = np.full((len(classes), len(cm.reference_)), np.nan, np.float32)
    E[:cm.n_classes_] = cm.class_embeddings_
    got = ~np.isnan(E_new[:, 0])
    E[got] = E_new[got]
    missing = np.flatnonzero(np.isnan(E[:, 0]))
    if len(missing):
        raise DataError(f"ClassMap: classes {classes[missing[:10]].tolist()} have no examples to embed them")
    cm.class_embeddings_ = np.ascontiguousarray(E)
    cm.classes_ = classes.astype(np.int64) if classes.dtype.kind in "iub" else classes
    cm.n_classes_ = len(classes)


def drop_class(cm, label) -> None:
    """``cm.remove_class``: class ``label``'s embedding taken out; the labels after it (integers ``0..C-1``) and the
    bank rows used as references move down by one."""
    classes = np.asarray(cm.classes_)
    where = np.flatnonzero(classes == label)
    if len(where) != 1 or cm.n_classes_ <= 2:
        raise ConfigError(f"ClassMap: {label!r} is not one of its classes, or is one of its last two")
    k = int(where[0])
    own_refs = getattr(cm, "reference_coef_", None) is None
    if own_refs and k in set(cm.reference_.tolist()):
        raise ConfigError(f"ClassMap: class {label!r} is one of the reference classifiers; it cannot be removed "
                          "without refitting the embedding")
    keep = np.arange(len(classes)) != k
    cm.class_embeddings_ = np.ascontiguousarray(cm.class_embeddings_[keep])
    cm.classes_ = np.arange(len(classes) - 1, dtype=np.int64) if classes.dtype.kind in "iu" and \
        np.array_equal(classes, np.arange(len(classes))) else classes[keep]
    cm.n_classes_ = len(cm.classes_)
    if own_refs:
        cm.reference_ = np.where(cm.reference_ > k, cm.reference_ - 1, cm.reference_).astype(np.int64)


def smoother_bank(bank, factor: float):
    """An unfitted copy of ``bank`` with ``factor`` times its penalty (the parameter the bank's class names
    as ``penalty``: ridge ``alpha`` x factor, SVM ``C`` / factor): the reference bank of ``reference_penalty``.
    ConfigError for a bank without a penalty."""
    key = getattr(type(bank), "penalty", None)
    if key is None or not factor > 0:
        raise ConfigError("ClassMap reference_penalty needs a positive factor and a bank with a penalty "
                          f"({type(bank).__name__} names none)")
    from ...selection.policy import stronger_penalty

    if hasattr(bank, "smoother"):   # a bank whose references are of another kind (the network head's: ridge)
        return bank.smoother(factor)
    return clone(bank).set_params(**{key: stronger_penalty(key, bank.get_params(deep=False)[key], factor)})


def fit_estimator(cm, X, y):
    """``cm.fit(X, y)`` (scikit-learn): clone and train the bank on part of each class, a smoother reference bank
    where ``reference_penalty`` asks for one, then embed the classes from the held-out rest."""
    X, y = validate_data(cm, X, y, dtype=np.float32)
    check_classification_targets(y)
    labels, yi = np.unique(y, return_inverse=True)
    if len(labels) < 2:
        raise ValueError(f"ClassMap needs at least two classes to tell apart; got one class ({labels[0]!r})")
    if isinstance(cm.estimator, FrozenEstimator):
        _fit_embedding_or_random(cm, cm.estimator.estimator, X, y, train=(X[:0], y[:0]))
        return cm
    validate_params(cm)
    if cm.estimator is None:
        from ..banks.ova import OneVsAllRidge

        bank = OneVsAllRidge(n_jobs=1)
    else:
        bank = clone(cm.estimator)
    train, held = embedding_split(yi, cm.embedding_fraction, cm.random_state)
    bank.fit(X[train], yi[train])
    reference_bank = None
    if float(cm.reference_penalty) != 1.0:
        reference_bank = smoother_bank(bank, float(cm.reference_penalty)).fit(X[train], yi[train])
    _fit_embedding_or_random(cm, bank, X[held], yi[held], reference_bank, (X[train], yi[train]))
    cm.classes_ = labels                     # the bank learnt class indices; predict gives y's labels
    return cm


def _fit_embedding_or_random(cm, bank, X, y, reference_bank=None, train=(None, None)) -> None:
    """``cm.fit_embedding``; when boosting finds no classifier better than chance (noise, random labels)
    a scikit-learn fit still gives a model: random references (CM-RRC), with a warning."""
    kw = {"reference_bank": reference_bank, "X_train": train[0], "y_train": train[1]}
    try:
        cm.fit_embedding(bank, X, y, **kw)
    except NoSignalError as exc:
        warnings.warn(f"{exc}; using random references instead", UserWarning, stacklevel=4)
        other = clone(cm).set_params(embedding="random", d=min(int(cm.d), n_classifiers(bank)))
        other.fit_embedding(bank, X, y, **kw)
        vars(cm).update({k: v for k, v in vars(other).items() if k.endswith("_")})


def check_fitted(cm) -> None:
    """ValueError naming the first fitted attribute of ``cm`` whose dtype, shape or values no fitted ClassMap has."""
    refs = check_array("reference_", cm.reference_, dtype=np.int64, ndim=1)
    d = len(refs)
    check_array("alpha_", cm.alpha_, dtype=np.float32, shape=(d,))
    C = int(cm.n_classes_)
    check_array("class_embeddings_", cm.class_embeddings_, dtype=np.float32, shape=(C, d))
    check_array("classes_", cm.classes_, dtype=np.int64, shape=(C,))   # saved models: labels 0..C-1
    if d < 1 or refs.min() < 0:
        raise ValueError("reference_ must hold at least one non-negative classifier index")
    if cm.bank_kind_ not in ("ova", "pairs"):
        raise ValueError(f"bank_kind_ must be 'ova' or 'pairs', got {cm.bank_kind_!r}")
    if getattr(cm, "reference_coef_", None) is not None:
        Wr = check_array("reference_coef_", cm.reference_coef_, dtype=np.float32, ndim=2)
        if len(Wr) != d:
            raise ValueError("reference_coef_ must hold one row per reference")
        check_array("reference_intercept_", cm.reference_intercept_, dtype=np.float32, shape=(d,))
    if cm.threshold_ is not None and not isinstance(cm.threshold_, (int, float)):
        raise ValueError(f"threshold_ must be a number or null, got {cm.threshold_!r}")
