"""CM-Boosted at 10^5 classes: the boosting of ``ClassMap.fit_embedding`` on sampled candidates, in bounded memory.

``ClassMap.fit_embedding`` computes every classifier's output on every embedding example (``(n, C)``: 80 GB at
10^5 classes and two examples per class) and each example's strongest confusers from all of them.
:func:`fit_classmap_sampled` makes the same embedding tractable and returns a fitted
:class:`~.classmap.ClassMap` (saved, loaded and run like any other):

* **candidate references**: ``n_candidates`` classifiers drawn at random (seeded); AdaBoost chooses
  the ``d`` references among them (``ClassMap.fit_embedding`` itself samples candidates when its triple matrix
  outgrows ``max_memory_mb``). Only their outputs ``(n, n_candidates)`` are computed;
* **hard triples**: the confusers (top-``k`` responses of the whole bank) of ``n_hard_examples``
  sampled embedding examples, one blocked GEMM over the bank (:func:`.ridge_moments.top_k_linear`);
  ``hard_fraction`` of the triples draw their wrong class from those, the rest uniformly;
* everything else is ``ClassMap.fit_embedding``'s: two-fold cross-fitted class medians (an example never meets
  an embedding built from itself: every class needs two embedding examples), the same
  :func:`~.boost.sample_triples` and :func:`~.boost.boost_references`, class
  embeddings = medians of the reference outputs over each class's embedding examples.

:func:`set_mean_class_embeddings` re-embeds every class as the *mean* of its reference outputs over
any number of examples given in chunks (e.g. the bank's training images as well as the embedding
ones): at 10^4 hand-pose classes, 5 images per class instead of 2 raised validation agreement with
brute force at p = 10 from 0.67 to 0.83 (docs/scale.md). Its two halves, :func:`class_output_sums` (which
adds to earlier sums) and :func:`set_class_means`, let a caller compare means over growing sets of images
with one pass over each image.
"""
from __future__ import annotations

import numpy as np

from ...errors import ConfigError, DataError
from ...progress import ProgressFn, StopFn, check_stop, report, sub_progress
from .bank_view import classifier_outputs, linear_weights
from .estimator import ClassMap
from .boost import boost_references, class_medians, cross_fit_medians, sample_triples
from ..banks.ridge_moments import top_k_linear


def fit_classmap_sampled(bank, X_embed: np.ndarray, y_embed: np.ndarray, *, d: int = 45, p: int = 40,
                         n_candidates: int = 1500, n_triples: int = 60_000, hard_fraction: float = 0.5,
                         n_hard_examples: int = 3000, n_confusers: int = 10, max_memory_mb: float = 600.0,
                         reference_rows=None, hard=None, filter: str = "auto",
                         random_state: int | None = 0, progress: ProgressFn = None,
                         should_stop: StopFn = None) -> ClassMap:
    """A CM-Boosted :class:`ClassMap` (refine v2) for a linear one-vs-all ``bank`` with classes ``0..C-1``.

    ``X_embed (n, D) float32`` / ``y_embed (n,)``: embedding examples held out from the bank's
    training, at least two per class. Cost: outputs of ``n_candidates`` classifiers on all ``n``
    examples, one bank-wide GEMM on ``n_hard_examples`` rows, AdaBoost on ``n_triples`` triples.

    ``reference_rows``: None (the references are the bank's own classifiers) or ``rows -> (W (k, D),
    b (k,))`` giving those classes' classifiers of a smoother reference bank (``ClassMap.fit_embedding``'s
    ``reference_bank``, asked only for the sampled candidates); the chosen ones are kept as
    ``reference_coef_`` / ``reference_intercept_``, and a query costs d + p evaluations. ``hard``: ``(examples (m,),
    confusers (m, k))`` from :func:`hard_confusers` (computed once when several embeddings are fitted)."""
    W, b = linear_weights(bank)
    C = len(bank.classes_)
    if W is None or getattr(bank, "pairs_", None) is not None:
        raise ConfigError("fit_classmap_sampled needs a linear one-vs-all bank")
    if not np.array_equal(np.asarray(bank.classes_), np.arange(C)):
        raise ConfigError("fit_classmap_sampled needs a bank whose classes are 0..C-1")
    yi = np.asarray(y_embed, np.int64)
    X = np.ascontiguousarray(X_embed, np.float32)
    if X.ndim != 2 or len(X) != len(yi) or yi.min() < 0 or yi.max() >= C:
        raise DataError(f"embedding examples must be (n, D) with class indices in [0, {C}); got {X.shape}")
    counts = np.bincount(yi, minlength=C)
    if counts.min() < 2:
        raise DataError(f"every class needs two embedding examples (cross-fitted medians); class "
                        f"{int(np.argmin(counts))} has {int(counts.min())}")
    rng = np.random.default_rng(random_state)
    cand = np.sort(rng.choice(C, size=min(C, int(n_candidates)), replace=False)).astype(np.int64)

    report(progress, 0.0, "embedding: candidate outputs")
    if reference_rows is None:
        M = classifier_outputs(bank, X, cand)                               # (n, Kc)
    else:
        Wc, bc = reference_rows(cand)
        Wc, bc = np.ascontiguousarray(Wc, np.float32), np.ascontiguousarray(bc, np.float32)
        M = X @ Wc.T
        M += bc
    check_stop(should_stop)
    E_all = class_medians(M, yi, C)
    fold, E2 = cross_fit_medians(M, yi, C, E_all)
    del E_all
    report(progress, 0.3, "embedding: confusers")

    n_hard = int(round(hard_fraction * n_triples))
    n_rand = int(n_triples) - n_hard
    pool = np.arange(C, dtype=np.int64)
    idx_r, pos_r, neg_r = sample_triples(yi, n_rand, pool, rng)
    if n_hard > 0:
        he, conf = hard if hard is not None else hard_confusers(bank, X, n_hard_examples, n_confusers, rng)
        idx_h, pos_h, neg_h = sample_triples(yi[he], n_hard, pool, rng, conf, 1.0)
        idx = np.concatenate([he[idx_h], idx_r])
        pos, neg = np.concatenate([pos_h, pos_r]), np.concatenate([neg_h, neg_r])
    else:
        idx, pos, neg = idx_r, pos_r, neg_r
    check_stop(should_stop)
    # only the rows the triples touch: examples, and the other fold's medians of their two classes
    shift = C * fold[idx]
    rows, idx_c = np.unique(idx, return_inverse=True)
    erows, e_inv = np.unique(np.concatenate([pos + shift, neg + shift]), return_inverse=True)
    Mt, Et = M[rows], E2[erows]
    del E2
    refs, alpha = boost_references(Mt, Et, idx_c, e_inv[:len(idx)], e_inv[len(idx):], int(d),
                                   np.arange(len(cand)), max_memory_mb=max_memory_mb, rng=rng,
                                   progress=sub_progress(progress, 0.35, 0.95), should_stop=should_stop)
    del Mt, Et
    cm = ClassMap(d=int(d), p=int(p), embedding="boosted", refine="v2", n_triples=int(n_triples),
                  hard_fraction=float(hard_fraction), max_memory_mb=max_memory_mb, filter=filter,
                  random_state=random_state)
    cm.reference_ = cand[refs].astype(np.int64)
    cm.alpha_ = alpha.astype(np.float32)
    cm.classes_ = np.arange(C, dtype=np.int64)
    cm.n_classes_ = int(C)
    cm.bank_kind_ = "ova"
    cm.reference_coef_ = cm.reference_intercept_ = None
    if reference_rows is not None:
        cm.reference_coef_, cm.reference_intercept_ = np.ascontiguousarray(Wc[refs]), bc[refs].copy()
    cm.threshold_ = None
    cm.set_class_embeddings(class_medians(M[:, refs], yi, C))   # and fits the filter index
    report(progress, 1.0, "embedding: done")
    return cm


def hard_confusers(bank, X: np.ndarray, n_examples: int, n_confusers: int = 10,
                   rng: np.random.Generator | int | None = 0) -> tuple[np.ndarray, np.ndarray]:
    """``(examples (m,) int64, confusers (m, n_confusers + 1) int64)``: ``m`` sampled rows of ``X`` and the
    classes whose classifiers respond most strongly to each (its own class usually among them), from one
    blocked GEMM over the whole bank."""
    W, b = linear_weights(bank)
    rng = np.random.default_rng(rng) if not isinstance(rng, np.random.Generator) else rng
    he = np.sort(rng.choice(len(X), size=min(len(X), int(n_examples)), replace=False))
    return he, top_k_linear(X[he], W, b, int(n_confusers) + 1)


def class_output_sums(cm: ClassMap, bank, chunks, sums: tuple | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Per class, the sum of the reference outputs over the examples of ``chunks`` (an iterable of ``(X (k, D)
    float32, y (k,) class indices)``, read one at a time so the examples never all sit in RAM) and their count:
    ``(S (C, d) float64, n (C,) float64)``, added to a copy of ``sums`` when given (sums of more examples)."""
    C, d = int(cm.n_classes_), len(cm.reference_)
    S, n = (np.zeros((C, d), np.float64), np.zeros(C, np.float64)) if sums is None else (sums[0].copy(), sums[1].copy())
    for X, y in chunks:
        y = np.asarray(y, np.int64)
        if len(y) == 0:
            continue
        if y.min() < 0 or y.max() >= C:
            raise DataError(f"class indices must be in [0, {C})")
        F = cm.reference_outputs(bank, np.ascontiguousarray(X, np.float32))
        n += np.bincount(y, minlength=C)
        for j in range(d):
            S[:, j] += np.bincount(y, weights=F[:, j], minlength=C)
    return S, n


def set_class_means(cm: ClassMap, sums: tuple[np.ndarray, np.ndarray]) -> ClassMap:
    """``cm.class_embeddings_ (C, d) float32`` = the per-class means of :func:`class_output_sums`'s ``sums``.
    Every class needs at least one example."""
    S, n = sums
    if n.min() < 1:
        raise DataError(f"ClassMap: class {int(np.argmin(n))} has no examples to embed it")
    return cm.set_class_embeddings(S / n[:, None])


def set_mean_class_embeddings(cm: ClassMap, bank, chunks) -> ClassMap:
    """``cm.class_embeddings_ (C, d) float32`` = per class, the mean of the reference outputs over the examples
    of ``chunks`` (as :func:`class_output_sums`). Every class needs at least one example."""
    return set_class_means(cm, class_output_sums(cm, bank, chunks))


__all__ = ["class_output_sums", "fit_classmap_sampled", "hard_confusers", "set_class_means",
           "set_mean_class_embeddings"]
