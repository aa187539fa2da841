"""Batch filter-and-refine (grouped by candidate class) gives exactly the single-query answers."""
from __future__ import annotations

import numpy as np
import pytest

import numba as nb

from classmap_gui.core.classify.kernels import batch as BK
from classmap_gui.core.classify.kernels import exact_filter as FK
from classmap_gui.core.classify.kernels.lane_dot import dot1, dot2x4, dot4
from classmap_gui.core.classify.classmap.estimator import ClassMap


class LinearBank:
    """Just the attributes ClassMap reads from a linear bank (one-vs-all, or all-pairs with ``pairs_``)."""

    def __init__(self, W, b, n_classes, pairs=None):
        self.coef_ = np.ascontiguousarray(W, np.float32)
        self.intercept_ = np.ascontiguousarray(b, np.float32)
        self.classes_ = np.arange(n_classes)
        if pairs is not None:
            self.pairs_ = pairs


def random_problem(C=60, D=37, n=300, seed=0):
    """Classes as Gaussian blobs and a least-squares one-vs-all bank over them."""
    rng = np.random.default_rng(seed)
    mu = rng.normal(size=(C, D)).astype(np.float32)
    y = np.arange(n) % C                       # every class among the first C rows
    X = (mu[y] + 0.7 * rng.normal(size=(n, D))).astype(np.float32)
    W = (mu + 0.1 * rng.normal(size=(C, D))).astype(np.float32)
    b = rng.normal(scale=0.1, size=C).astype(np.float32)
    return LinearBank(W, b, C), X, y


def assert_same(batch, singles):
    """``singles``: list of one-row Predictions, in order."""
    np.testing.assert_array_equal(batch.labels, [r.labels[0] for r in singles])
    np.testing.assert_array_equal(batch.evaluations, [r.evaluations[0] for r in singles])
    np.testing.assert_array_equal(batch.top_classes, np.vstack([r.top_classes for r in singles]))
    # bit-identical scores; NaN (not evaluated) in the same places
    np.testing.assert_array_equal(batch.top_scores, np.vstack([r.top_scores for r in singles]))


@pytest.mark.parametrize("refine", ["best-response", "first-above-threshold"])
@pytest.mark.parametrize("D", [37, 5, 64])
def test_batch_equals_single_query_on_random_data(refine, D):
    bank, X, y = random_problem(D=D, seed=D)
    cm = ClassMap(d=7, p=9, embedding="random", refine=refine, random_state=1).fit_embedding(bank, X[:120], y[:120])
    if refine == "first-above-threshold":
        # a threshold some queries reach early and some never: both kinds of stop are compared
        cm.threshold_ = float(np.quantile(X[120:] @ bank.coef_.T, 0.995))
    Xq = X[120:]
    for batch_size in (1000, 13):
        res = cm.predict_result(Xq, batch_size=batch_size, bank=bank)
        assert_same(res, [cm.predict_result(x[None, :], bank=bank) for x in Xq])
    if refine == "first-above-threshold":
        assert np.isnan(res.top_scores).any() and (~np.isnan(res.top_scores[:, 1])).any()
    one = cm.single_query(bank)
    frozen = Xq[:40].copy()
    frozen.flags.writeable = False                   # e.g. a camera frame's buffer: read-only queries
    for i, x in enumerate(Xq[:40]):
        assert one(x) == res.labels[i]
        np.testing.assert_array_equal(one.top_scores, res.top_scores[i])
        assert one(frozen[i]) == res.labels[i]
        np.testing.assert_array_equal(one.top_scores, res.top_scores[i])


def test_batch_refine_scores_are_the_candidates_responses():
    bank, X, y = random_problem(C=80, D=50, n=400, seed=3)
    cm = ClassMap(d=10, p=12, embedding="random", refine="v2").fit_embedding(bank, X[:200], y[:200])
    res = cm.predict_result(X[200:], bank=bank)
    S = X[200:].astype(np.float64) @ bank.coef_.T.astype(np.float64) + bank.intercept_
    got = np.take_along_axis(S, res.top_classes, 1)
    np.testing.assert_allclose(res.top_scores, got, rtol=1e-5, atol=1e-4)
    assert np.all(np.diff(res.top_scores, axis=1) <= 0)                  # best first
    # the candidates are the filter's p nearest classes
    cands, _ = cm.candidates(bank, X[200:])
    np.testing.assert_array_equal(np.sort(res.top_classes, 1), np.sort(cands, 1))
    assert np.mean(res.labels == y[200:]) > 0.9


def test_all_pairs_vote_batch_equals_single_query():
    C, D = 14, 20
    rng = np.random.default_rng(5)
    ia, ib = np.triu_indices(C, 1)
    pairs = np.stack([ia, ib], 1).astype(np.int64)
    mu = rng.normal(size=(C, D)).astype(np.float32)
    W = (mu[ia] - mu[ib]).astype(np.float32)
    b = (0.5 * (np.sum(mu[ib] ** 2, 1) - np.sum(mu[ia] ** 2, 1))).astype(np.float32)
    bank = LinearBank(W, b, C, pairs)
    y = np.arange(200) % C
    X = (mu[y] + 0.5 * rng.normal(size=(200, D))).astype(np.float32)
    cm = ClassMap(d=6, p=6, embedding="random", refine="v1").fit_embedding(bank, X[:100], y[:100])
    res = cm.predict_result(X[100:], bank=bank)
    assert_same(res, [cm.predict_result(x[None, :], bank=bank) for x in X[100:]])
    assert np.mean(res.labels == y[100:]) > 0.8


@nb.njit
def _dots(A, B):
    return dot1(A, 1, B, 2), dot4(A, 0, 1, 2, 3, B, 2, 2, 2, 2), dot4(A, 1, 1, 1, 1, B, 0, 1, 2, 3)


@pytest.mark.parametrize("D", [1, 31, 32, 33, 100])
def test_lane_dots_agree_with_each_other_and_with_float64(D):
    rng = np.random.default_rng(D)
    A = rng.normal(size=(4, D)).astype(np.float32)
    B = rng.normal(size=(4, D)).astype(np.float32)
    one, rows4, cols4 = _dots(A, B)
    assert one == rows4[1] == cols4[2]
    assert abs(one - float(A[1].astype(np.float64) @ B[2])) < 1e-4 * max(1, D)


@nb.njit
def _dots2x4(A, B):
    return dot2x4(A, 0, 3, B, 1, 2, 0, 3), dot1(A, 3, B, 2)


@pytest.mark.parametrize("D", [1, 31, 32, 33, 100])
def test_two_by_four_lane_dots_are_each_the_one_pair_dot(D):
    rng = np.random.default_rng(D + 7)
    A = rng.normal(size=(4, D)).astype(np.float32)
    B = rng.normal(size=(4, D)).astype(np.float32)
    eight, single = _dots2x4(A, B)
    assert eight[5] == single                                   # row 3 of A with row 2 of B, bit for bit
    ref = np.array([[A[i].astype(np.float64) @ B[j] for j in (1, 2, 0, 3)] for i in (0, 3)]).ravel()
    np.testing.assert_allclose(eight, ref, atol=1e-4 * max(1, D))


def test_group_by_row_inverts_the_candidate_lists():
    rows = np.array([[3, 1, 0], [1, 2, 3]], np.int64)
    refpos = np.array([-1, 0, -1, -1], np.int64)           # classifier 1 is the reference
    F = np.array([[10.0], [20.0]], np.float32)
    R = np.zeros((2, 3), np.float32)
    starts, queries, slots = BK.group_by_row(rows, refpos, F, R)
    assert R[0, 1] == 10 and R[1, 0] == 20                 # taken from the embedding, not evaluated
    np.testing.assert_array_equal(starts, [0, 1, 1, 2, 4])
    np.testing.assert_array_equal(queries, [0, 1, 0, 1])   # class 0: q0; class 2: q1; class 3: q0, q1
    np.testing.assert_array_equal(slots, [2, 4, 0, 5])


@pytest.mark.parametrize("refine", ["v2", "v3"])
def test_trained_digits_model_batch_equals_single_query(refine):
    """A real trained bank (liblinear one-vs-all on scikit-learn's digits, 10 classes x 64 pixels)."""
    from sklearn.datasets import load_digits

    from classmap_gui.core.classify import OneVsAllSVM

    X, y = load_digits(return_X_y=True)
    X = (X / 16).astype(np.float32)
    rng = np.random.default_rng(0)
    idx = rng.permutation(len(X))
    tr, em, te = idx[:900], idx[900:1300], idx[1300:]
    bank = OneVsAllSVM(C=1.0, random_state=0).fit(X[tr], y[tr])
    cm = ClassMap(d=4, p=4, embedding="boosted", refine=refine, n_triples=3000).fit_embedding(bank, X[em], y[em])
    res = cm.predict_result(X[te], bank=bank)
    assert_same(res, [cm.predict_result(x[None, :], bank=bank) for x in X[te]])
    assert np.mean(res.labels == y[te]) > 0.85              # a working model (brute force: 0.96)
    assert res.evaluations.mean() < 10 + 4                 # d + at most p


def _filters_agree(E, F, alpha, p):
    """The batch filter's top-p lists of queries ``F`` over class embeddings ``E``, checked equal, class
    and distance bits, to the single-query filter's for every query; returns the lists ``(n, p)``."""

    n, d = F.shape
    ET = FK.transpose_embeddings(E, alpha)
    cls = np.empty((n, p), np.int64)
    dist = np.empty((n, p), np.float32)
    FK.filter_batch_t(F, ET, alpha, p, cls, dist)
    acc = FK.filter_scratch(d)
    topd, topc = np.empty(p, np.float32), np.empty(p, np.int64)
    for q in range(n):
        assert FK.filter_one(F[q], ET, alpha, p, acc, topd, topc) == p
        np.testing.assert_array_equal(cls[q], topc)
        np.testing.assert_array_equal(dist[q], topd)
    return cls


@pytest.mark.parametrize("p", [1, 7, 40])
def test_batch_filter_equals_the_single_scan_with_many_classes_and_ties(p):
    """Enough classes for the batch filter's group bound to act; integer embeddings make many equal
    distances, which must rank by class exactly as the single query's running top-p does."""
    rng = np.random.default_rng(p)
    C, d, n = 1500, 6, 37
    E = rng.integers(0, 4, size=(C, d)).astype(np.float32)
    F = rng.integers(0, 4, size=(n, d)).astype(np.float32)
    alpha = rng.choice([0.5, 1.0, 2.0], size=d).astype(np.float32)
    cls = _filters_agree(E, F, alpha, p)
    # and the definition: the p smallest weighted L1 distances, ties by class
    ref = np.abs(F[:, None, :] - E[None]) @ alpha
    np.testing.assert_array_equal(cls, np.argsort(ref, axis=1, kind="stable")[:, :p])


def test_kth_smallest_matches_numpy():
    """kth_upper_bound without slack is the exact k-th smallest."""
    from classmap_gui.core.classify.kernels.topk import kth_upper_bound

    def kth_smallest_nonneg(a, k):
        return kth_upper_bound(a, k, 0)

    rng = np.random.default_rng(3)
    for n in (1, 2, 5, 152, 600):
        a = (rng.integers(0, 7, size=n) * rng.uniform(0.1, 9)).astype(np.float32)   # many ties, zeros
        for k in {0, n // 2, n - 1}:
            assert kth_smallest_nonneg(a, k) == np.sort(a)[k]
        b = rng.exponential(size=n).astype(np.float32)
        assert [kth_smallest_nonneg(b, k) for k in range(n)] == np.sort(b).tolist()
    assert kth_smallest_nonneg(np.array([np.inf, -0.0, 2.0], np.float32), 0) == 0.0
    assert kth_smallest_nonneg(np.array([np.inf, 1.0, 2.0], np.float32), 2) == np.inf


def test_batch_filter_equals_the_single_scan_when_near_classes_are_neighbours():
    """Neighbouring class indices close in embedding space (like poses of one shape), so a query's
    nearest classes are a run of consecutive indices; C not a multiple of the group size; the
    last queries of the batch not a multiple of four."""

    rng = np.random.default_rng(5)
    C, d, n, p = 2430, 12, 43, 20
    walk = np.cumsum(rng.normal(scale=0.2, size=(C, d)), axis=0).astype(np.float32)
    F = (walk[rng.integers(0, C, n)] + rng.normal(scale=0.1, size=(n, d))).astype(np.float32)
    alpha = rng.uniform(0.2, 1.5, size=d).astype(np.float32)
    ET = FK.transpose_embeddings(walk, alpha)
    cls = np.empty((n, p), np.int64)
    dist = np.empty((n, p), np.float32)
    FK.filter_batch_t(F, ET, alpha, p, cls, dist)
    acc = FK.filter_scratch(d)
    topd, topc = np.empty(p, np.float32), np.empty(p, np.int64)
    for q in range(n):
        FK.filter_one(F[q], ET, alpha, p, acc, topd, topc)
        np.testing.assert_array_equal(cls[q], topc)
        np.testing.assert_array_equal(dist[q], topd)


@pytest.mark.parametrize("C", [63, 64, 65, 127, 130, 200])
def test_single_and_batch_filters_agree_when_the_last_tile_overlaps(C):
    """C not a multiple of the 64-class tile: the last classes come from a tile overlapping the one
    before it; each class must still be offered once, with the bits of its own distance, in both paths."""
    rng = np.random.default_rng(C)
    d, n, p = 9, 23, 11
    E = rng.normal(size=(C, d)).astype(np.float32)
    F = (E[rng.integers(0, C, n)] + 0.05 * rng.normal(size=(n, d))).astype(np.float32)
    F[:3] = E[C - 3:]                                   # queries sitting on the last classes
    alpha = rng.uniform(0.1, 2.0, size=d).astype(np.float32)
    cls = _filters_agree(E, F, alpha, p)
    assert all(len(set(row.tolist())) == p for row in cls)   # no class offered twice by the overlap
    np.testing.assert_array_equal(cls[:3, 0], np.arange(C - 3, C))
    ref = (np.abs(F[:, None, :] - E[None]) * alpha).sum(2)
    np.testing.assert_array_equal(cls, np.argsort(ref, axis=1, kind="stable")[:, :p])


def test_selection_ranks_and_inserts_alike_whatever_crowds_under_the_bound():
    """Few classes under the selection bound are placed by a rank count, many (all tied) by insertion:
    both give the p smallest distances, ties by the lower class."""
    C, p = 2430, 15
    Cp = FK.padded_width(C)
    G = Cp // FK.GROUP
    rng = np.random.default_rng(11)
    cases = [rng.uniform(1, 100, size=C),                           # distinct: a handful under the bound
             np.full(C, 7.0),                                        # all tied: every class under it
             rng.integers(0, 3, size=C) * 2.5]                       # three values, many zeros
    for vals in cases:
        dist = np.full(Cp, np.inf, np.float32)
        dist[:C] = vals
        gm = np.empty(G, np.float32)
        cv, cc = np.empty(Cp, np.float32), np.empty(Cp, np.int64)
        topd, topc = np.empty(p, np.float32), np.empty(p, np.int64)
        assert FK.select_top(dist, C, p, gm, cv, cc, topd, topc) == p
        ref = np.argsort(dist[:C], kind="stable")[:p]
        np.testing.assert_array_equal(topc, ref)
        np.testing.assert_array_equal(topd, dist[ref])


def test_kth_upper_bound_is_at_least_the_kth_and_within_its_slack():
    from classmap_gui.core.classify.kernels.topk import kth_upper_bound, le_mask16

    rng = np.random.default_rng(4)
    for n in (1, 16, 152, 600):
        a = rng.exponential(scale=50, size=n).astype(np.float32)
        srt = np.sort(a)
        for k in {0, n // 3, n - 1}:
            for slack in (0, 1 << 10, 1 << 16):
                u = kth_upper_bound(a, k, slack)
                assert u >= srt[k]
                assert int(np.float32(u).view(np.int32)) - int(srt[k].view(np.int32)) <= slack
                assert np.sum(a <= u) >= k + 1
    mask_of = nb.njit(lambda a, s, b: le_mask16(a, s, b))
    x = np.array([3, 0, 9, 1, 5, 5, 2, 8, 7, 4, 6, 1, 0, 9, 9, 2, 11], np.float32)
    for start in (0, 1):
        mask = mask_of(x, start, np.float32(4.0))
        assert [bool(mask >> i & 1) for i in range(16)] == (x[start:start + 16] <= 4).tolist()


@pytest.mark.parametrize("d", [1, 2, 3, 4, 5, 6, 8, 45])
def test_batch_embedding_is_the_single_query_embedding_bit_for_bit(d):
    """Reference rows in threes, then a pair or one; queries in fours, then the rest (n = 37): every
    output as the single query's embedding computes it."""
    from classmap_gui.core.classify.kernels import single as K

    rng = np.random.default_rng(d)
    K_rows, D, n = 50, 70, 37
    W = rng.normal(size=(K_rows, D)).astype(np.float32)
    b = rng.normal(size=K_rows).astype(np.float32)
    X = rng.normal(size=(n, D)).astype(np.float32)
    refs = rng.choice(K_rows, size=d, replace=False).astype(np.int64)
    F = np.empty((n, d), np.float32)
    BK.embed_batch(X, W, b, refs, F)
    fq = np.empty(d, np.float32)
    for q in range(n):
        K.embed_one(X[q:q + 1], W, b, refs, fq)
        np.testing.assert_array_equal(F[q], fq)
    np.testing.assert_allclose(F, X.astype(np.float64) @ W[refs].T.astype(np.float64) + b[refs], rtol=1e-5, atol=1e-4)


def v3_definition(resp, refpos, topc, m, t):
    """The paper's v3 (first-above-threshold), written from its definition: candidates are evaluated in
    filter order up to and including the first whose response reaches ``t`` (all ``m`` when none does);
    a reference candidate's response was already computed by the embedding and costs no evaluation."""
    hits = np.flatnonzero(resp[:m] >= t)
    n_done = int(hits[0]) + 1 if hits.size else m
    return n_done, int(np.sum(refpos[topc[:n_done]] < 0))


def test_the_v3_stop_rule_is_its_definition():
    """Issue 46: stopping one candidate early or late (or at > t instead of >= t) changes which classes
    a v3 refine scores and how many classifiers it evaluates; shared by the single and batch kernels."""
    from classmap_gui.core.classify.kernels.single import rank, stop_point

    rng = np.random.default_rng(3)
    C, m, t = 40, 12, np.float32(0.5)
    cases = [np.full(m, 0.1, np.float32), np.full(m, 0.9, np.float32)]  # none reach t; the first does
    for k in (0, 1, 5, m - 1):
        r = np.full(m, 0.1, np.float32)
        r[k] = t  # exactly the threshold: reached
        r[k + 1:] = 0.9
        cases.append(r)
    cases += [rng.uniform(-1, 1, m).astype(np.float32) for _ in range(50)]
    for resp in cases:
        topc = rng.permutation(C)[:m].astype(np.int64)
        refpos = np.where(rng.random(C) < 0.3, np.arange(C), -1).astype(np.int64)
        want = v3_definition(resp, refpos, topc, m, t)
        assert tuple(stop_point(topc, resp, m, refpos, 3, t)) == want, resp
        assert tuple(stop_point(topc, resp, m, refpos, 2, t)) == (m, int(np.sum(refpos[topc] < 0)))  # v2: all
        out_c, out_s = np.zeros(m, np.int64), np.zeros(m, np.float32)
        rank(topc, resp, m, want[0], out_c, out_s)
        assert np.isnan(out_s).sum() == m - want[0]  # the candidates after the stop are not scored
        assert out_c[0] == topc[int(np.argmax(resp[:want[0]]))]
