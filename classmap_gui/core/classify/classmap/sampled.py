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
  :func:`~.classmap_boost.sample_triples` and :func:`~.classmap_boost.boost_references`, class
  embeddings = medians of the reference outputs over each class's embedding examples.

:func:`use_filter_index` sets the filter index a ClassMap searches with (e.g. one whose ``nlist`` /
``nprobe`` were chosen on validation queries) instead of the default one it builds itself;
:func:`keep_filter_index` stores that index's lists with the ClassMap (an extra ``filter_index_``
state entry: JSON numbers + arrays in the model file) and :func:`restore_filter_index` rebuilds it
on load without k-means (milliseconds instead of seconds at 10^5 classes), only when the saved
lists were built for exactly the loaded class embeddings (a digest says so).
:func:`keep_graph_index` does the same for a :class:`~.filter_graph.GraphFilterIndex` (the HNSW graph
as faiss's serialised ``uint8`` buffer).

:func:`set_mean_class_embeddings` re-embeds every class as the *mean* of its reference outputs over
any number of examples given in chunks (e.g. the bank's training images as well as the embedding
ones): at 10^4 hand-pose classes, 5 images per class instead of 2 raised validation agreement with
brute force at p = 10 from 0.67 to 0.83 (docs/scale.md). Its two halves, :func:`class_output_sums` (which
adds to earlier sums) and :func:`set_class_means`, let a caller compare means over growing sets of images
with one pass over each image.
"""
from __future__ import annotations

import numpy as np

import hashlib

from ...errors import ConfigError, DataError
from ...progress import ProgressFn, StopFn, check_stop, report, sub_progress
from .bank_view import classifier_outputs, linear_weights
from .estimator import ClassMap
from .boost import boost_references, class_medians, cross_fit_medians, sample_triples
from ..banks.ridge_moments import top_k_linear


def fit_classmap_sampled(bank, X_embed: np.ndarray, y_embed: np.ndarray, *, d: int = 45, p: int = 40,
                         n_candidates: int = 1500, n_triples: int = 60_000, hard_fraction: float = 0.5,
                         n_hard_examples: int = 3000, n_confusers: int = 10, max_memory_mb: float = 600.0,
                         reference_rows=None, hard=None,
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
                  hard_fraction=float(hard_fraction), max_memory_mb=max_memory_mb, random_state=random_state)
    cm.reference_ = cand[refs].astype(np.int64)
    cm.alpha_ = alpha.astype(np.float32)
    cm.class_embeddings_ = np.ascontiguousarray(class_medians(M[:, refs], yi, C), np.float32)
    cm.classes_ = np.arange(C, dtype=np.int64)
    cm.n_classes_ = int(C)
    cm.bank_kind_ = "ova"
    cm.reference_coef_ = cm.reference_intercept_ = None
    if reference_rows is not None:
        cm.reference_coef_, cm.reference_intercept_ = np.ascontiguousarray(Wc[refs]), bc[refs].copy()
    cm.threshold_ = None
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
    cm.class_embeddings_ = np.ascontiguousarray(S / n[:, None], np.float32)
    return cm


def set_mean_class_embeddings(cm: ClassMap, bank, chunks) -> ClassMap:
    """``cm.class_embeddings_ (C, d) float32`` = per class, the mean of the reference outputs over the examples
    of ``chunks`` (as :func:`class_output_sums`). Every class needs at least one example."""
    return set_class_means(cm, class_output_sums(cm, bank, chunks))


def use_filter_index(cm: ClassMap, index) -> ClassMap:
    """Make ``cm``'s filter search with the fitted :class:`~.ann_index.FilterIndex` ``index`` (built on
    ``cm.class_embeddings_`` / ``cm.alpha_``) until those arrays are replaced. Applies from
    ``FILTER_INDEX_THRESHOLD`` classes, where ClassMap uses an index at all (below, its exact scan)."""
    if getattr(index, "n_classes_", None) != cm.n_classes_:
        raise ConfigError("the filter index was built for another set of class embeddings")
    cm.use_filter_index(index)
    return cm


def _embedding_digest(cm: ClassMap) -> str:
    h = hashlib.sha1(np.ascontiguousarray(cm.class_embeddings_, np.float32).tobytes())
    h.update(np.ascontiguousarray(cm.alpha_, np.float32).tobytes())
    return h.hexdigest()


def keep_filter_index(cm: ClassMap, index) -> ClassMap:
    """Use the fitted IVF ``index`` (see :func:`use_filter_index`) and keep its lists as ``cm.filter_index_``
    so a saved model restores it (:func:`restore_filter_index`)."""
    use_filter_index(cm, index)
    lists = index.lists_
    cm.filter_index_ = {"nlist": int(lists.nlist), "nprobe": int(index.nprobe_for(int(cm.p))),
                        "rerank": float(index.rerank), "embedding_sha1": _embedding_digest(cm),
                        "centroids": np.ascontiguousarray(lists.centroids, np.float32),
                        "starts": np.asarray(lists.starts, np.int64), "ids": np.asarray(lists.ids, np.int64)}
    return cm


def keep_graph_index(cm: ClassMap, index) -> ClassMap:
    """Use the fitted :class:`~.filter_graph.GraphFilterIndex` ``index`` and keep its graph as
    ``cm.filter_index_`` so a saved model restores it (:func:`restore_filter_index`)."""
    use_filter_index(cm, index)
    cm.filter_index_ = {**index.to_state(), "embedding_sha1": _embedding_digest(cm)}
    return cm


def _restore_graph(cm, state: dict) -> bool:
    from ..filters.graph import GraphFilterIndex, require_faiss

    require_faiss("this model's filter index (an HNSW graph)")  # a missing library is an error, not a fallback
    if state.get("embedding_sha1") != _embedding_digest(cm):
        return False
    try:
        index = GraphFilterIndex.from_state(state, cm.class_embeddings_, cm.alpha_)
    except ConfigError:
        return False
    use_filter_index(cm, index)
    return True


def restore_filter_index(cm) -> bool:
    """Rebuild the IVF index (or HNSW graph) a saved ClassMap kept (:func:`keep_filter_index`,
    :func:`keep_graph_index`) and use it; False (the
    ClassMap then builds its default index when first needed) when there is none, it does not match
    the class embeddings, or its arrays are inconsistent. A graph where faiss is missing raises
    ``ConfigError`` (:func:`.filter_graph.require_faiss`): the model needs a library this install lacks."""
    from ..filters.ivf import FilterIndex
    from ..kernels.ivf_lists import IVFLists

    state = getattr(cm, "filter_index_", None)
    if not isinstance(state, dict) or getattr(cm, "class_embeddings_", None) is None:
        return False
    if state.get("kind") == "hnsw":
        return _restore_graph(cm, state)
    try:
        C, d = cm.class_embeddings_.shape
        cent, starts, ids = (np.asarray(state[k]) for k in ("centroids", "starts", "ids"))
        nlist = int(state["nlist"])
        ok = (state.get("embedding_sha1") == _embedding_digest(cm) and cent.dtype == np.float32
              and cent.shape == (nlist, d) and starts.dtype == np.int64 and starts.shape == (nlist + 1,)
              and starts[0] == 0 and starts[-1] == C and np.all(np.diff(starts) >= 0) and ids.dtype == np.int64
              and ids.shape == (C,) and ids.min() >= 0 and ids.max() < C and np.bincount(ids, minlength=C).max() == 1)
        if not ok:
            return False
        index = FilterIndex(method="ivf", nlist=nlist, nprobe=int(state["nprobe"]), rerank=float(state["rerank"]))
        index.alpha_ = np.asarray(cm.alpha_, np.float32).copy()
        index.scaled_ = np.ascontiguousarray(cm.class_embeddings_ * index.alpha_)
        index.n_classes_, index.method_ = C, "ivf"
        index.lists_ = IVFLists(index.scaled_, np.ascontiguousarray(cent), np.ascontiguousarray(starts),
                                np.ascontiguousarray(ids))
    except (KeyError, TypeError, ValueError):
        return False
    use_filter_index(cm, index)
    return True


__all__ = ["class_output_sums", "fit_classmap_sampled", "hard_confusers", "keep_filter_index", "keep_graph_index",
           "restore_filter_index", "set_class_means", "set_mean_class_embeddings", "use_filter_index"]
