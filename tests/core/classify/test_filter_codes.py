"""The batch filter through byte codes and the batch refine grouped by class give the numpy reference's
answers exactly (the oracle the exported predict.py inlines), ties included, and the single query's."""
from __future__ import annotations

import numpy as np
import pytest

from classmap_gui.core.classify.kernels import codes as FC
from classmap_gui.core.classify.kernels import exact_filter as FK
from classmap_gui.core.classify.classmap.estimator import ClassMap
from classmap_gui.core.classify.classmap.ops import (
    filter_distances,
    filter_exact,
    rank_by_response,
)
from classmap_gui.core.classify.kernels.sad_tiles import SAD_BYTES

needs_sad = pytest.mark.skipif(SAD_BYTES == 0, reason="no psadbw vectors on this CPU: the float32 filter runs")


class LinearBank:
    """Just the attributes ClassMap reads from a linear one-vs-all bank."""

    def __init__(self, W, b):
        self.coef_ = np.ascontiguousarray(W, np.float32)
        self.intercept_ = np.ascontiguousarray(b, np.float32)
        self.classes_ = np.arange(len(W)) * 10 + 3           # labels that are not the row indices


def codes_filter(F, E, alpha, p):
    ET = FK.transpose_embeddings(E, alpha)
    codes = FC.encode_classes(ET)
    assert codes is not None
    cls, dist = np.empty((len(F), p), np.int64), np.empty((len(F), p), np.float32)
    band = FC.filter_codes_batch(np.ascontiguousarray(F, np.float32), ET, np.asarray(alpha, np.float32), codes,
                                 p, cls, dist)
    return cls, dist, band


def codes_one_filter(F, E, alpha, p):
    """The live single query's filter through the codes, one row of ``F`` at a time."""
    ET = FK.transpose_embeddings(E, alpha)
    codes = FC.encode_classes(ET)
    width, gamma = FC.band(ET.shape[0])
    scratch = FC.one_scratch(codes, ET.shape[0])
    cls, dist = np.empty((len(F), p), np.int64), np.empty((len(F), p), np.float32)
    for q, f in enumerate(np.asarray(F, np.float32)):
        assert FC.codes_one(f, ET, np.asarray(alpha, np.float32), codes.CT, codes.lo, codes.hi,
                            np.float32(codes.inv_s), codes.SUB, codes.ES, np.float32(width), np.float32(gamma), p,
                            scratch, dist[q], cls[q]) == min(p, len(E))
    return cls, dist


@needs_sad
@pytest.mark.parametrize("C, d, p", [(2430, 45, 15), (300, 7, 40), (257, 16, 1), (1000, 9, 64)])
def test_codes_filter_gives_the_numpy_reference_lists_and_bits(C, d, p):
    rng = np.random.default_rng(C + d)
    E = rng.normal(size=(C, d)).astype(np.float32)
    alpha = rng.uniform(0.0, 2.0, d).astype(np.float32)
    alpha[0] = 0.0                                            # a weight of zero: a constant dimension
    F = (1.5 * rng.normal(size=(203, d))).astype(np.float32)  # many coordinates outside the classes' range
    cls, dist, band = codes_filter(F, E, alpha, p)
    ref = filter_exact(F, E, alpha, p)
    np.testing.assert_array_equal(cls, ref)
    np.testing.assert_array_equal(dist, np.take_along_axis(filter_distances(F, E, alpha), ref, axis=1))
    float_cls, float_dist = np.empty_like(cls), np.empty_like(dist)
    FK.filter_batch_t(F, FK.transpose_embeddings(E, alpha), alpha, p, float_cls, float_dist)
    np.testing.assert_array_equal(cls, float_cls)
    np.testing.assert_array_equal(dist.view(np.int32), float_dist.view(np.int32))
    assert p <= band < C / 4                                  # the codes did prune
    one_cls, one_dist = codes_one_filter(F, E, alpha, p)       # the live query: the same lists and bits
    np.testing.assert_array_equal(one_cls, cls)
    np.testing.assert_array_equal(one_dist.view(np.int32), dist.view(np.int32))


@needs_sad
def test_codes_filter_ranks_tied_classes_lower_first():
    rng = np.random.default_rng(7)
    base = rng.integers(-4, 5, size=(100, 12)).astype(np.float32)
    E = np.concatenate([base, base, base[:60]])               # every class has a twin at the same distance
    perm = rng.permutation(len(E))
    E = E[perm]
    alpha = np.ones(12, np.float32)
    F = rng.integers(-5, 6, size=(150, 12)).astype(np.float32)
    cls, dist, _ = codes_filter(F, E, alpha, 9)
    np.testing.assert_array_equal(cls, filter_exact(F, E, alpha, 9))
    assert np.any(dist[:, 1:] == dist[:, :-1])                # ties were there to break
    tied = dist[:, 1:] == dist[:, :-1]
    assert np.all(cls[:, 1:][tied] > cls[:, :-1][tied])
    np.testing.assert_array_equal(codes_one_filter(F, E, alpha, 9)[0], cls)


@needs_sad
def test_constant_or_small_embeddings_keep_the_float_filter():
    assert FC.encode_classes(np.zeros((5, 400), np.float32)) is None
    assert FC.encode_classes(np.ones((5, FC.MIN_CLASSES - 1), np.float32).cumsum(1)) is None


def integer_problem(C=320, D=24, n=260, seed=0):
    """Small-integer weights, biases and queries: every response and every filter distance is exact in
    float32 whatever the order of the sums, so the numpy reference is bit-comparable, and duplicated
    weight rows and class embeddings make ties of both."""
    rng = np.random.default_rng(seed)
    W = rng.integers(-3, 4, size=(C, D)).astype(np.float32)
    W[1::7] = W[0::7][: len(W[1::7])]                        # twin classifiers: tied responses
    b = rng.integers(-2, 3, size=C).astype(np.float32)
    b[1::7] = b[0::7][: len(b[1::7])]
    y = np.arange(2 * C) % C
    Xe = (np.sign(W[y]) + rng.integers(-1, 2, size=(2 * C, D))).astype(np.float32)
    Xq = rng.integers(-2, 3, size=(n, D)).astype(np.float32)
    bank = LinearBank(W, b)
    return bank, Xe, bank.classes_[y], Xq


def reference_prediction(cm, bank, X):
    """The numpy oracle of filter-and-refine: :func:`filter_exact` over the query embeddings, every
    candidate's response by numpy, :func:`rank_by_response` (the refine's threshold, if any)."""
    W, b = bank.coef_, bank.intercept_
    refs = cm.reference_
    F = X @ W[refs].T + b[refs]
    p = min(cm.p, cm.n_classes_)
    cands = filter_exact(F, cm.class_embeddings_, cm.alpha_, p)
    S = X @ W.T + b
    R = np.take_along_axis(S, cands, axis=1)
    thr = cm.threshold_value if cm.refine_strategy == "first-above-threshold" else None
    cls, score, _ = rank_by_response(R, cands, thr)
    return cls, score


@pytest.mark.parametrize("refine", ["v2", "v3"])
def test_batch_predict_equals_the_numpy_reference_and_the_single_query_with_ties(refine):
    bank, Xe, ye, Xq = integer_problem(seed=1 if refine == "v2" else 2)
    cm = ClassMap(d=10, p=13, embedding="random", refine=refine, random_state=3).fit_embedding(bank, Xe, ye)
    cm.alpha_ = np.ones(cm.d, np.float32)                     # integer distances: ties among classes
    if refine == "v3":
        # a threshold half the queries' best class reaches: some stop early, some never
        cm.threshold_ = float(np.median((Xq @ bank.coef_.T + bank.intercept_).max(1)))
    res = cm.predict_result(Xq, bank=bank)
    if SAD_BYTES:
        assert cm.filter_.codes() is not None                 # the batch went through the codes
    cls, score = reference_prediction(cm, bank, Xq)
    np.testing.assert_array_equal(res.top_classes, bank.classes_[cls])
    np.testing.assert_array_equal(res.top_scores, score)
    assert np.any(score[:, 1:] == score[:, :-1])              # tied responses were ranked by filter order
    if refine == "v3":
        assert np.isnan(score).any() and (~np.isnan(score[:, -1])).any()
    if SAD_BYTES:
        assert cm.single_query(bank).codes is not None         # the live query filters through the codes too
    for i in range(0, len(Xq), 17):
        one = cm.predict_result(Xq[i:i + 1], bank=bank)       # the single-query kernels
        np.testing.assert_array_equal(one.top_classes[0], res.top_classes[i])
        np.testing.assert_array_equal(one.top_scores[0], res.top_scores[i])
        assert one.evaluations[0] == res.evaluations[i]


@needs_sad
def test_codes_that_do_not_prune_are_turned_off_and_the_answer_stays(monkeypatch):
    bank, Xe, ye, Xq = integer_problem(seed=4)
    cm = ClassMap(d=10, p=13, embedding="random", random_state=3).fit_embedding(bank, Xe, ye)
    before = cm.predict_result(Xq, bank=bank)
    assert cm.filter_.codes() is not None
    from classmap_gui.core.classify.filters import exact

    monkeypatch.setattr(exact, "worth_it", lambda band, C: False)
    again = cm.predict_result(Xq, bank=bank)
    assert cm.filter_.codes() is None                         # the float32 scan from now on
    after = cm.predict_result(Xq, bank=bank)
    for res in (again, after):
        np.testing.assert_array_equal(res.top_classes, before.top_classes)
        np.testing.assert_array_equal(res.top_scores, before.top_scores)
