"""The filter indexes find the classes the exact weighted-L1 filter finds (IVF needs no faiss); ClassMap fits
the one its ``filter`` names."""
from __future__ import annotations

import numpy as np
import pytest

from classmap_gui.bench.scale import synthetic_embeddings
from classmap_gui.core.classify.kernels import ivf_lists as filter_ivf
from classmap_gui.core.classify.filters.exact import ExactFilter
from classmap_gui.core.classify.filters.ivf import IVFFilter
from classmap_gui.core.classify.classmap.ops import filter_exact
from classmap_gui.core.errors import ConfigError, NotFittedError


def weighted_l1_topp(F, E, alpha, p):
    """The filter as the paper writes it (Eq. 9), by brute force."""
    D = (alpha * np.abs(F[:, None, :] - E[None, :, :])).sum(axis=2)
    return np.argsort(D, axis=1, kind="stable")[:, :p], np.sort(D, axis=1)[:, :p]


@pytest.fixture(scope="module")
def problem():
    return synthetic_embeddings(3000, 45, n_queries=60, noise=0.3, seed=3)


def recall(got, ref):
    return np.mean([len(set(a) & set(b)) / len(b) for a, b in zip(got, ref)])


def test_exact_method_ranks_classes_like_the_paper_filter(problem):
    E, alpha, F, _ = problem
    ref_cls, ref_d = weighted_l1_topp(F, E, alpha, 25)
    cls, dist = ExactFilter().fit(E, alpha).search(F, 25)
    assert cls.dtype == np.int64 and dist.dtype == np.float32 and cls.shape == (60, 25)
    assert recall(cls, ref_cls) == 1.0
    np.testing.assert_allclose(dist, ref_d, rtol=1e-4)
    assert recall(filter_exact(F, E, alpha, 25), ref_cls) == 1.0   # the numpy twin predict.py runs


def test_auto_is_the_exact_scan_below_many_classes_and_the_graph_from_there():
    from classmap_gui.core.classify.filters import AUTO_INDEX_FROM, auto_kind

    assert auto_kind(AUTO_INDEX_FROM - 1) == "exact" and auto_kind(AUTO_INDEX_FROM) == "hnsw"


def test_ivf_and_classmap_work_where_faiss_is_not_installed():
    import subprocess
    import sys

    # a fresh interpreter in which "import faiss" fails, as without the optional extra
    code = ("import sys; sys.modules['faiss'] = None\n"
            "from classmap_gui.core.classify import ClassMap\n"
            "from classmap_gui.core.classify.filters.ivf import IVFFilter\n"
            "from classmap_gui.bench.scale import synthetic_embeddings\n"
            "E, a, F, _ = synthetic_embeddings(500, 20, n_queries=3)\n"
            "print(IVFFilter(nlist=10, nprobe=10).fit(E, a).search(F, 5)[0].shape)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "(3, 5)"


@pytest.fixture(scope="module")
def ivf(problem):
    E, alpha, _, _ = problem
    return IVFFilter(random_state=1).fit(E, alpha)


def test_ivf_keeps_the_exact_candidates_with_true_distances(problem, ivf):
    E, alpha, F, y = problem
    ref_cls, _ = weighted_l1_topp(F, E, alpha, 40)
    cls, dist = ivf.search(F, 40)
    assert ivf.kind == "ivf" and cls.dtype == np.int64 and dist.dtype == np.float32
    assert recall(cls, ref_cls) >= 0.98
    true = (alpha * np.abs(F[:, None, :] - E[cls])).sum(axis=2)
    np.testing.assert_allclose(dist, true, rtol=1e-4)
    assert np.all(np.diff(dist, axis=1) >= 0)
    assert (cls == y[:, None]).any(axis=1).mean() > 0.9
    one, _ = ivf.search(F[7], 40)
    np.testing.assert_array_equal(one[0], cls[7])
    # fewer lists probed: faster and (on this data) visibly worse, so nprobe really bounds the work
    few, _ = IVFFilter(nprobe=1, random_state=1).fit(E, alpha).search(F, 40)
    assert recall(few, ref_cls) < recall(cls, ref_cls)


def test_ivf_probing_every_list_equals_the_exact_filter(problem):
    E, alpha, F, _ = problem
    ref_cls, ref_d = ExactFilter().fit(E, alpha).search(F, 25)
    nlist = 40
    # all lists and a re-rank pool as large as the index: every class is compared exactly
    full = IVFFilter(nlist=nlist, nprobe=nlist, rerank=len(E)).fit(E, alpha)
    cls, dist = full.search(F, 25)
    np.testing.assert_array_equal(cls, ref_cls)
    np.testing.assert_allclose(dist, ref_d, rtol=1e-5)
    # all lists with the default re-rank pool (2p): only the uint8 coding can lose a candidate
    coded, _ = IVFFilter(nlist=nlist, nprobe=nlist).fit(E, alpha).search(F, 25)
    assert recall(coded, ref_cls) >= 0.99


def test_ivf_lists_partition_the_classes(problem, ivf):
    E, _, _, _ = problem
    C = len(E)
    starts, ids, centroids = ivf.starts_, ivf.ids_, ivf.centroids_
    assert starts[0] == 0 and starts[-1] == C and np.all(np.diff(starts) >= 0)
    assert sorted(ids) == list(range(C))
    assert centroids.shape == (len(starts) - 1, E.shape[1]) == (round(3.2 * np.sqrt(C)), E.shape[1])
    # each class sits in the list of its nearest centroid by L1 (the search metric)
    scaled = E * ivf.alpha_
    member = np.repeat(np.arange(len(centroids)), np.diff(starts))[np.argsort(ids)]
    l1 = np.abs(scaled[:, None, :] - centroids[None]).sum(axis=2)
    np.testing.assert_array_equal(member, l1.argmin(axis=1))


def test_more_candidates_than_classes_are_padded(problem):
    E, alpha, F, _ = problem
    for kind in (ExactFilter, IVFFilter):
        cls, dist = kind().fit(E[:7], alpha).search(F[:3], 10)
        assert sorted(cls[0, :7]) == list(range(7))
        assert np.all(cls[:, 7:] == -1) and np.all(np.isinf(dist[:, 7:]))


def test_bad_use_is_reported(problem):
    E, alpha, F, _ = problem
    from classmap_gui.core.classify.classmap.estimator import ClassMap

    with pytest.raises(NotFittedError):
        ExactFilter().search(F, 5)
    with pytest.raises(ConfigError, match="filter"):
        ClassMap(filter="lsh").fit(E[:40], np.arange(40) % 4)
    with pytest.raises(ConfigError, match="alpha"):
        ExactFilter().fit(E, -alpha)
    with pytest.raises(ConfigError, match="dimensions"):
        ExactFilter().fit(E, alpha).search(F[:, :10], 5)
    with pytest.raises(ConfigError, match="nprobe"):
        IVFFilter(nprobe=0).fit(E, alpha)


def test_classmap_uses_the_index_at_many_classes_with_the_same_answers(monkeypatch):
    from classmap_gui.core import filter_kinds
    from classmap_gui.core.classify.classmap.estimator import ClassMap
    from classmap_gui.core.classify.banks.ova import OneVsAllRidge

    rng = np.random.default_rng(5)
    C, D = 120, 40
    mu = rng.normal(size=(C, 6)) @ rng.normal(size=(6, D)) / np.sqrt(6) + 0.5 * rng.normal(size=(C, D))
    y = np.repeat(np.arange(C), 10)
    Xtr, Xe, Xt = ((mu[y] + 1.5 * rng.normal(size=(len(y), D))).astype(np.float32) for _ in range(3))
    bank = OneVsAllRidge(alpha=1.0).fit(Xtr, y)
    cm = ClassMap(d=12, p=10, refine="v2", n_triples=4000).fit_embedding(bank, Xe, y)
    exact = cm.predict_result(Xt[:150], bank=bank)
    exact_one = cm.predict_result(Xt[:1], top=3, bank=bank)
    assert cm.filter_.kind == "exact"  # 120 classes: the exact scan
    monkeypatch.setattr(filter_kinds, "AUTO_INDEX_FROM", 100)
    cm.set_class_embeddings(cm.class_embeddings_)
    assert cm.filter_.kind == "hnsw"  # "auto" at many classes: the HNSW graph (faiss), fitted with the embeddings
    indexed = cm.predict_result(Xt[:150], bank=bank)
    np.testing.assert_array_equal(indexed.top_classes, exact.top_classes)
    np.testing.assert_array_equal(indexed.evaluations, exact.evaluations)
    one = cm.predict_result(Xt[:1], top=3, bank=bank)  # one row goes through the index too
    np.testing.assert_array_equal(one.top_classes, exact_one.top_classes)
    first = cm.current_filter()
    cm.class_embeddings_ = cm.class_embeddings_.copy()  # new embeddings (e.g. classes added) -> refitted
    assert cm.current_filter() is not first and cm.filter_.kind == "hnsw"
    cm.set_params(filter="ivf", filter_params={"nlist": 4, "nprobe": 4, "rerank": 120})
    cm.set_class_embeddings(cm.class_embeddings_)
    assert cm.filter_.kind == "ivf" and cm.filter_.nlist == 4   # the kind and parameters the estimator names
    np.testing.assert_array_equal(cm.predict_result(Xt[:150], bank=bank).top_classes, exact.top_classes)


def test_concurrent_searches_with_different_p_agree_with_serial_ones(problem, ivf):
    from concurrent.futures import ThreadPoolExecutor

    index = ivf
    _, _, F, _ = problem
    serial = {p: index.search(F, p)[0] for p in (5, 40)}
    with ThreadPoolExecutor(4) as pool:
        jobs = [(p, i, pool.submit(index.search, F[i], p)) for i in range(len(F)) for p in (5, 40)]
        for p, i, job in jobs:
            np.testing.assert_array_equal(job.result()[0][0], serial[p][i])


@pytest.mark.parametrize("D", [16, 48, 64, 80, 128])
def test_the_code_distance_kernel_is_the_sum_of_absolute_byte_differences(D):
    rng = np.random.default_rng(D)
    codes = rng.integers(0, 256, (50, D), dtype=np.uint8)
    qc = rng.integers(0, 256, D, dtype=np.uint8)
    out = np.empty(20, np.uint32)
    filter_ivf.sad_rows(qc, codes, 10, 30, out)
    ref = np.abs(codes[10:30].astype(np.int64) - qc.astype(np.int64)).sum(axis=1)
    np.testing.assert_array_equal(out, ref)


@pytest.mark.parametrize("top", [200, 60_000])
def test_the_nearest_lists_are_the_smallest_distances_nearest_first(top):
    rng = np.random.default_rng(top)
    dist = rng.integers(0, top, 1000).astype(np.uint32)
    order = np.empty(1000, np.int64)
    assert filter_ivf._nearest_lists(dist, 70, order) == 70
    picked = dist[order[:70]]
    # the 70 smallest up to one counting-sort bin (about two bins per list), in ascending bins
    shift = 0
    while int(dist.max()) >> shift > 2 * len(dist):
        shift += 1
    width = 2 ** shift
    assert len(set(order[:70].tolist())) == 70
    assert picked.max() // width <= np.sort(dist)[70] // width
    assert np.all(np.diff(picked // width) >= 0)
    assert filter_ivf._nearest_lists(dist, 5000, order) == 1000
    assert sorted(order.tolist()) == list(range(1000))


@pytest.mark.parametrize("d", [5, 16, 20])
def test_ivf_with_every_list_is_exact_for_any_dimension(d):
    E, alpha, F, _ = synthetic_embeddings(400, d, n_queries=10, seed=d)
    ref_cls, ref_d = ExactFilter().fit(E, alpha).search(F, 12)
    cls, dist = IVFFilter(nlist=9, nprobe=9, rerank=400).fit(E, alpha).search(F, 12)
    np.testing.assert_array_equal(cls, ref_cls)
    np.testing.assert_allclose(dist, ref_d, rtol=1e-5)


def test_the_quantised_scan_splits_one_query_over_threads_without_losing_candidates(problem):
    """One list = the quantised exact scan; one query runs on every numba thread (each scans a share of the
    rows, the pools' union is re-ranked): never a worse p-th distance than one thread, the batch's answers
    on one thread, and near-exact recall."""
    from classmap_gui.core.timing import threads

    E, alpha, F, _ = problem
    ref_cls, ref_d = weighted_l1_topp(F, E, alpha, 20)
    scan = IVFFilter(nlist=1, nprobe=1, n_iter=0, rerank=1.25).fit(E, alpha)
    with threads(1):
        one = [scan.search(f, 20) for f in F]
    with threads(2):
        two = [scan.search(f, 20) for f in F]
    batch_cls, _ = scan.search(F, 20)
    for i, f in enumerate(F):
        np.testing.assert_array_equal(one[i][0][0], batch_cls[i])   # one thread: the same scan as a batch row
        assert two[i][1][0, -1] <= one[i][1][0, -1] + 1e-6           # two threads: a superset of the pool
        np.testing.assert_allclose(two[i][1][0], np.sort(two[i][1][0]))
    assert recall(np.concatenate([t[0] for t in two]), ref_cls) >= 0.98
