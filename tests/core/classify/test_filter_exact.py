"""The exact filter scans (the baselines of ``bench scale``) all give the paper's filter answer."""
from __future__ import annotations

import numba as nb
import numpy as np
import pytest

from classmap_gui.bench.scale import synthetic_embeddings
from classmap_gui.core.classify._topk import topk_insert
from classmap_gui.core.classify.filter_exact import (exact_filter_numpy, pad_columns, scan_batch, scan_top,
                                                     scan_top_chunks)


@pytest.fixture(scope="module")
def scaled():
    E, alpha, F, _ = synthetic_embeddings(700, 45, n_queries=12, seed=4)
    return np.ascontiguousarray(E * alpha), np.ascontiguousarray(F * alpha)


def brute(Q, A, p):
    D = np.abs(Q[:, None, :] - A[None, :, :]).sum(axis=2)
    return np.argsort(D, axis=1, kind="stable")[:, :p], np.sort(D, axis=1)[:, :p]


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


def test_every_exact_scan_returns_the_brute_force_top_p(scaled):
    A, Q = scaled
    ref_c, ref_d = brute(Q, A, 30)
    Ap, Qp = pad_columns(A), pad_columns(Q)
    assert Ap.shape == (700, 48) and Ap.flags.c_contiguous and np.all(Ap[:, 45:] == 0)
    td, tc = np.empty(30, np.float32), np.empty(30, np.int64)
    nb.set_num_threads(min(2, nb.config.NUMBA_NUM_THREADS))
    for i in range(len(Q)):
        for q, X, fn in ((Q[i], A, lambda q, X: scan_top(q, X, 30, td, tc)),
                         (Qp[i], Ap, lambda q, X: scan_top(q, X, 30, td, tc)),
                         (Qp[i], Ap, lambda q, X: scan_top_chunks(q, X, 30, 2, td, tc)),
                         (Qp[i], Ap, lambda q, X: scan_top_chunks(q, X, 30, 7, td, tc))):
            assert fn(q, X) == 30
            np.testing.assert_array_equal(tc, ref_c[i])
            np.testing.assert_allclose(td, ref_d[i], rtol=1e-5)
    cls, dist = np.empty((len(Q), 30), np.int64), np.empty((len(Q), 30), np.float32)
    scan_batch(Qp, Ap, 30, cls, dist)
    np.testing.assert_array_equal(cls, ref_c)
    np.testing.assert_array_equal(exact_filter_numpy(Q, A, 30), ref_c)


def test_a_scan_over_fewer_rows_than_p_returns_them_all(scaled):
    A, Q = scaled
    td, tc = np.empty(10, np.float32), np.empty(10, np.int64)
    assert scan_top(Q[0], A[:6], 10, td, tc) == 6 and sorted(tc[:6]) == list(range(6))
    assert scan_top_chunks(Q[0], A[:6], 10, 4, td, tc) == 6 and sorted(tc[:6]) == list(range(6))


def test_faiss_flat_l1_the_bench_baseline_agrees_with_the_scan(scaled):
    faiss = pytest.importorskip("faiss")  # the only faiss-specific check; faiss is in the test extra
    A, Q = scaled
    flat = faiss.IndexFlat(A.shape[1], faiss.METRIC_L1)
    flat.add(A)
    D, I = flat.search(Q, 30)
    ref_c, ref_d = brute(Q, A, 30)
    np.testing.assert_allclose(D, ref_d, rtol=1e-4)
    assert np.mean([len(set(a) & set(b)) for a, b in zip(I, ref_c)]) == 30
