"""The one exact filter family: the single query, the batch, the numpy twin predict.py runs, and the exact
filter index give the same bits and the same lists (ties: the lower class first) - and the paper's answer."""
from __future__ import annotations

import numpy as np
import pytest

from classmap_gui.bench.scale import synthetic_embeddings
from classmap_gui.core.classify.kernels import exact_filter as FK
from classmap_gui.core.classify.filters.exact import ExactFilter
from classmap_gui.core.classify.classmap.ops import filter_distances, filter_exact
from classmap_gui.core.classify.kernels.topk import topk_insert


def brute(F, E, alpha, p):
    D = (np.abs(F[:, None, :].astype(np.float64) - E[None]) * alpha).sum(axis=2)
    return np.sort(D, axis=1)[:, :p]


def every_path(F, E, alpha, p):
    """``{name: (classes (n, p), distances (n, p))}`` of each member of the family (p <= C)."""
    n = len(F)
    ET = FK.transpose_embeddings(E, alpha)
    out = {}
    cls, dist = np.empty((n, p), np.int64), np.empty((n, p), np.float32)
    FK.filter_batch_t(F, ET, alpha, p, cls, dist)                 # groups of four queries and the rest
    out["batch"] = cls, dist
    one_c, one_d = np.empty((n, p), np.int64), np.empty((n, p), np.float32)
    acc = FK.filter_scratch(E.shape[1])
    for q in range(n):
        assert FK.filter_one(F[q], ET, alpha, p, acc, one_d[q], one_c[q]) == p
    out["single"] = one_c, one_d
    cands = filter_exact(F, E, alpha, p)
    out["numpy"] = cands, np.take_along_axis(filter_distances(F, E, alpha), cands, axis=1)
    idx = ExactFilter().fit(E, alpha)
    out["index"] = idx.search(F, p)
    out["index, one row"] = tuple(np.concatenate(a) for a in zip(*(idx.search(f, p) for f in F)))
    return out


@pytest.mark.parametrize("C, p", [(700, 30), (45, 12), (70, 5), (9, 4)])   # tiles, a partial tile, < one tile
def test_every_exact_filter_gives_the_same_bits_and_the_paper_answer(C, p):
    E, alpha, F, _ = synthetic_embeddings(C, 45, n_queries=13, seed=4)
    paths = every_path(F, E, alpha, p)
    ref_c, ref_d = paths.pop("batch")
    np.testing.assert_allclose(ref_d, brute(F, E, alpha, p), rtol=1e-5)
    for name, (c, d) in paths.items():
        np.testing.assert_array_equal(c, ref_c, err_msg=name)
        np.testing.assert_array_equal(d, ref_d, err_msg=name)       # bit-identical distances


def test_ties_rank_the_lower_class_first_on_every_path():
    rng = np.random.default_rng(0)
    E = rng.integers(0, 4, (300, 5)).astype(np.float32)             # many exact ties
    F = rng.integers(0, 4, (41, 5)).astype(np.float32)
    alpha = np.ones(5, np.float32)
    paths = every_path(F, E, alpha, 12)
    ref_c, _ = paths.pop("batch")
    D = filter_distances(F, E, alpha)
    ranked = np.lexsort((np.arange(300)[None].repeat(41, 0), D), axis=1)[:, :12]
    np.testing.assert_array_equal(ref_c, ranked)
    for name, (c, _) in paths.items():
        np.testing.assert_array_equal(c, ref_c, err_msg=name)


def test_more_candidates_than_classes_pad_with_minus_one():
    E, alpha, F, _ = synthetic_embeddings(6, 8, n_queries=3, seed=1)
    cls, dist = ExactFilter().fit(E, alpha).search(F, 10)
    assert (cls[:, 6:] == -1).all() and np.isinf(dist[:, 6:]).all()
    assert sorted(cls[0, :6]) == list(range(6))


def test_topk_insert_keeps_the_k_smallest_in_order_with_ties_by_arrival():
    values = np.array([5.0, 3.0, 9.0, 3.0, 1.0, 7.0, 3.0, 0.5], np.float32)
    topd, topc = np.full(4, -1, np.float32), np.full(4, -1, np.int64)
    filled = 0
    for i, v in enumerate(values):
        filled = topk_insert(v, i, filled, 4, topd, topc)
    assert filled == 4
    assert topd.tolist() == [0.5, 1.0, 3.0, 3.0] and topc.tolist() == [7, 4, 1, 3]  # the later 3.0 (item 6) dropped
    # integer values (the IVF code pool) and a value equal to the k-th is rejected
    ud, uc = np.empty(2, np.uint32), np.empty(2, np.int64)
    n = 0
    for i, v in enumerate([4, 2, 2]):
        n = topk_insert(np.uint32(v), i, n, 2, ud, uc)
    assert ud.tolist() == [2, 2] and uc.tolist() == [1, 2]
    assert topk_insert(np.uint32(2), 9, 2, 2, ud, uc) == 2 and uc.tolist() == [1, 2]


def test_faiss_flat_l1_the_bench_baseline_agrees_with_the_filter():
    faiss = pytest.importorskip("faiss")  # the only faiss-specific check; faiss is in the test extra
    E, alpha, F, _ = synthetic_embeddings(700, 45, n_queries=12, seed=4)
    A, Q = np.ascontiguousarray(E * alpha), np.ascontiguousarray(F * alpha)
    flat = faiss.IndexFlat(A.shape[1], faiss.METRIC_L1)
    flat.add(A)
    D, I = flat.search(Q, 30)
    ref_c, ref_d = every_path(F, E, alpha, 30)["batch"]
    np.testing.assert_allclose(D, ref_d, rtol=1e-4)
    assert np.mean([len(set(a) & set(b)) for a, b in zip(I, ref_c)]) == 30
