"""The filter index finds the classes the exact weighted-L1 filter finds, and saves without pickles."""
from __future__ import annotations

import numpy as np
import pytest

from classmap_gui.core.bench.scale import synthetic_embeddings
from classmap_gui.core.classify import ann_index
from classmap_gui.core.classify.ann_index import FilterIndex, exact_filter_numpy
from classmap_gui.core.errors import ConfigError, ModelFormatError, NotFittedError
from classmap_gui.core.store.format import load_bundle, save_bundle

faiss = pytest.importorskip("faiss")  # in the test extra


def weighted_l1_topp(F, E, alpha, p):
    """The filter as the paper writes it (Eq. 9), by brute force."""
    D = (alpha * np.abs(F[:, None, :] - E[None, :, :])).sum(axis=2)
    return np.argsort(D, axis=1, kind="stable")[:, :p], np.sort(D, axis=1)[:, :p]


@pytest.fixture(scope="module")
def problem():
    return synthetic_embeddings(3000, 45, n_queries=60, noise=0.3, seed=3)


@pytest.fixture(scope="module")
def hnsw(problem):
    E, alpha, _, _ = problem
    return FilterIndex(method="hnsw", M=16, ef_construction=80).fit(E, alpha)


def recall(got, ref):
    return np.mean([len(set(a) & set(b)) / len(b) for a, b in zip(got, ref)])


def test_exact_method_ranks_classes_like_the_paper_filter(problem):
    E, alpha, F, _ = problem
    ref_cls, ref_d = weighted_l1_topp(F, E, alpha, 25)
    cls, dist = FilterIndex(method="exact").fit(E, alpha).search(F, 25)
    assert cls.dtype == np.int64 and dist.dtype == np.float32 and cls.shape == (60, 25)
    assert recall(cls, ref_cls) == 1.0
    np.testing.assert_allclose(dist, ref_d, rtol=1e-4)
    assert recall(exact_filter_numpy(F * alpha, E * alpha, 25), ref_cls) == 1.0


def test_hnsw_keeps_the_exact_candidates_with_true_distances(problem, hnsw):
    E, alpha, F, _ = problem
    ref_cls, _ = weighted_l1_topp(F, E, alpha, 40)
    cls, dist = hnsw.search(F, 40)
    assert hnsw.method_ == "hnsw"
    assert recall(cls, ref_cls) >= 0.98
    true = (alpha * np.abs(F[:, None, :] - E[cls])).sum(axis=2)
    np.testing.assert_allclose(dist, true, rtol=1e-4)
    assert np.all(np.diff(dist, axis=1) >= 0)
    one, _ = hnsw.search(F[7], 40)  # a single (d,) query gives the batch's row
    np.testing.assert_array_equal(one[0], cls[7])


def test_the_true_class_is_usually_among_the_candidates(problem, hnsw):
    _, _, F, y = problem
    cls, _ = hnsw.search(F, 40)
    assert (cls == y[:, None]).any(axis=1).mean() > 0.9


def test_auto_uses_the_ivf_index_only_for_many_classes(problem):
    E, alpha, _, _ = problem
    assert FilterIndex(threshold=10_000).fit(E, alpha).method_ == "exact"
    assert FilterIndex(threshold=1000).fit(E, alpha).method_ == "ivf"


def test_ivf_needs_no_faiss_and_hnsw_says_what_to_install(problem, monkeypatch):
    E, alpha, F, _ = problem
    monkeypatch.setattr(ann_index, "have_faiss", lambda: False)
    assert FilterIndex(threshold=10).fit(E, alpha).method_ == "ivf"
    with pytest.raises(ConfigError, match="faiss"):
        FilterIndex(method="hnsw").fit(E, alpha)


@pytest.fixture(scope="module")
def ivf(problem):
    E, alpha, _, _ = problem
    return FilterIndex(method="ivf", random_state=1).fit(E, alpha)


def test_ivf_keeps_the_exact_candidates_with_true_distances(problem, ivf):
    E, alpha, F, y = problem
    ref_cls, _ = weighted_l1_topp(F, E, alpha, 40)
    cls, dist = ivf.search(F, 40)
    assert ivf.method_ == "ivf" and cls.dtype == np.int64 and dist.dtype == np.float32
    assert recall(cls, ref_cls) >= 0.98
    true = (alpha * np.abs(F[:, None, :] - E[cls])).sum(axis=2)
    np.testing.assert_allclose(dist, true, rtol=1e-4)
    assert np.all(np.diff(dist, axis=1) >= 0)
    assert (cls == y[:, None]).any(axis=1).mean() > 0.9
    one, _ = ivf.search(F[7], 40)
    np.testing.assert_array_equal(one[0], cls[7])
    # fewer lists probed: faster and (on this data) visibly worse, so nprobe really bounds the work
    few, _ = FilterIndex(method="ivf", nprobe=1, random_state=1).fit(E, alpha).search(F, 40)
    assert recall(few, ref_cls) < recall(cls, ref_cls)


def test_ivf_probing_every_list_equals_the_exact_filter(problem):
    E, alpha, F, _ = problem
    ref_cls, ref_d = FilterIndex(method="exact").fit(E, alpha).search(F, 25)
    nlist = 40
    # all lists and a re-rank pool as large as the index: every class is compared exactly
    full = FilterIndex(method="ivf", nlist=nlist, nprobe=nlist, rerank=len(E)).fit(E, alpha)
    cls, dist = full.search(F, 25)
    np.testing.assert_array_equal(cls, ref_cls)
    np.testing.assert_allclose(dist, ref_d, rtol=1e-5)
    # all lists with the default re-rank pool (2p): only the uint8 coding can lose a candidate
    coded, _ = FilterIndex(method="ivf", nlist=nlist, nprobe=nlist).fit(E, alpha).search(F, 25)
    assert recall(coded, ref_cls) >= 0.99


def test_ivf_lists_partition_the_classes(problem, ivf):
    E, _, _, _ = problem
    C = len(E)
    starts, ids = ivf.ivf_starts_, ivf.ivf_ids_
    assert starts[0] == 0 and starts[-1] == C and np.all(np.diff(starts) >= 0)
    assert sorted(ids) == list(range(C))
    assert ivf.ivf_centroids_.shape == (len(starts) - 1, E.shape[1])


def test_saved_ivf_index_round_trips_through_a_safe_bundle(problem, ivf, tmp_path, monkeypatch):
    _, _, F, _ = problem
    meta, arrays = ivf.state()
    assert all(a.dtype != object for a in arrays.values())
    save_bundle(tmp_path / "idx", "index.json", {"format": "test-index", "version": 1, "meta": meta}, arrays)
    doc, loaded = load_bundle(tmp_path / "idx", "index.json", "test-index", 1)
    monkeypatch.setattr(ann_index, "have_faiss", lambda: False)  # IVF loads without faiss
    again = FilterIndex.from_state(doc["meta"], loaded)
    assert again.method_ == "ivf"
    a, da = again.search(F, 40)
    b, db = ivf.search(F, 40)
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(da, db)


def test_a_tampered_ivf_state_is_refused(ivf):
    meta, arrays = ivf.state()
    ids = arrays["ivf_ids_"].copy()
    ids[0] = ids[1]  # a class twice, another never
    for bad in (dict(arrays, ivf_ids_=ids),
                dict(arrays, ivf_ids_=arrays["ivf_ids_"] + len(ids)),
                dict(arrays, ivf_starts_=arrays["ivf_starts_"][::-1].copy()),
                dict(arrays, ivf_centroids_=arrays["ivf_centroids_"].astype(np.float64)),
                {k: v for k, v in arrays.items() if k != "ivf_starts_"}):
        with pytest.raises(ModelFormatError):
            FilterIndex.from_state(meta, bad)


def test_saved_index_loads_from_a_safe_bundle_with_the_same_answers(problem, hnsw, tmp_path):
    _, _, F, _ = problem
    meta, arrays = hnsw.state()
    assert all(a.dtype != object for a in arrays.values())
    save_bundle(tmp_path / "idx", "index.json", {"format": "test-index", "version": 1, "meta": meta}, arrays)
    doc, loaded = load_bundle(tmp_path / "idx", "index.json", "test-index", 1)
    again = FilterIndex.from_state(doc["meta"], loaded)
    assert again.method_ == "hnsw"
    np.testing.assert_array_equal(again.search(F, 40)[0], hnsw.search(F, 40)[0])


def test_a_tampered_graph_is_refused(hnsw):
    meta, arrays = hnsw.state()
    bad = dict(arrays)
    nb = bad["hnsw_neighbors_"].copy()
    nb[3] = hnsw.n_classes_ + 5  # an id past the end would read outside the vectors
    bad["hnsw_neighbors_"] = nb
    with pytest.raises(ModelFormatError, match="inconsistent"):
        FilterIndex.from_state(meta, bad)
    bad = dict(arrays, hnsw_offsets_=arrays["hnsw_offsets_"][:-1])
    with pytest.raises(ModelFormatError):
        FilterIndex.from_state(meta, bad)
    with pytest.raises(ModelFormatError):
        FilterIndex.from_state({"params": {}}, arrays)


def test_a_saved_hnsw_index_loads_as_exact_where_faiss_is_missing(problem, hnsw, monkeypatch):
    E, alpha, F, _ = problem
    meta, arrays = hnsw.state()
    monkeypatch.setattr(ann_index, "have_faiss", lambda: False)
    again = FilterIndex.from_state(meta, arrays)
    assert again.method_ == "exact"
    ref_cls, _ = weighted_l1_topp(F[:5], E, alpha, 10)
    assert recall(again.search(F[:5], 10)[0], ref_cls) == 1.0


def test_more_candidates_than_classes_are_padded(problem):
    E, alpha, F, _ = problem
    for method in ("exact", "hnsw", "ivf"):
        cls, dist = FilterIndex(method=method, M=8).fit(E[:7], alpha).search(F[:3], 10)
        assert sorted(cls[0, :7]) == list(range(7))
        assert np.all(cls[:, 7:] == -1) and np.all(np.isinf(dist[:, 7:]))


def test_bad_use_is_reported(problem):
    E, alpha, F, _ = problem
    with pytest.raises(NotFittedError):
        FilterIndex().search(F, 5)
    with pytest.raises(ConfigError, match="method"):
        FilterIndex(method="lsh").fit(E, alpha)
    with pytest.raises(ConfigError, match="alpha"):
        FilterIndex().fit(E, -alpha)
    with pytest.raises(ConfigError, match="dimensions"):
        FilterIndex(method="exact").fit(E, alpha).search(F[:, :10], 5)
    with pytest.raises(ConfigError, match="nprobe"):
        FilterIndex(method="ivf", nprobe=0).fit(E, alpha)


def test_classmap_uses_the_index_at_many_classes_with_the_same_answers(monkeypatch):
    from classmap_gui.core.classify import classmap as cm_module
    from classmap_gui.core.classify.classmap import ClassMap
    from classmap_gui.core.classify.ova import OneVsAllBank

    rng = np.random.default_rng(5)
    C, D = 120, 40
    mu = rng.normal(size=(C, 6)) @ rng.normal(size=(6, D)) / np.sqrt(6) + 0.5 * rng.normal(size=(C, D))
    y = np.repeat(np.arange(C), 10)
    Xtr, Xe, Xt = ((mu[y] + 1.5 * rng.normal(size=(len(y), D))).astype(np.float32) for _ in range(3))
    bank = OneVsAllBank(trainer="ridge", alpha=1.0).fit(Xtr, y)
    ye = y
    cm = ClassMap(d=12, p=10, refine="v2", n_triples=4000).fit(bank, Xe, ye)
    exact = cm.predict(bank, Xt[:150])
    exact_one = cm.predict(bank, Xt[:1], top=3)
    assert cm._filter_index() is None  # 120 classes: the fused scan
    monkeypatch.setattr(cm_module, "FILTER_INDEX_THRESHOLD", 100)
    assert cm._filter_index().method_ == "ivf"
    indexed = cm.predict(bank, Xt[:150])
    np.testing.assert_array_equal(indexed.top_classes, exact.top_classes)
    np.testing.assert_array_equal(indexed.evaluations, exact.evaluations)
    one = cm.predict(bank, Xt[:1], top=3)  # one row goes through the index too
    np.testing.assert_array_equal(one.top_classes, exact_one.top_classes)
    first = cm._filter_index()
    cm.class_embeddings_ = cm.class_embeddings_.copy()  # new embeddings (e.g. classes added) -> rebuilt
    assert cm._filter_index() is not first


@pytest.mark.parametrize("which", ["hnsw", "ivf"])
def test_concurrent_searches_with_different_p_agree_with_serial_ones(problem, which, request):
    from concurrent.futures import ThreadPoolExecutor

    index = request.getfixturevalue(which)
    _, _, F, _ = problem
    serial = {p: index.search(F, p)[0] for p in (5, 40)}
    with ThreadPoolExecutor(4) as pool:
        jobs = [(p, i, pool.submit(index.search, F[i], p)) for i in range(len(F)) for p in (5, 40)]
        for p, i, job in jobs:
            np.testing.assert_array_equal(job.result()[0][0], serial[p][i])


def test_the_code_distance_kernel_is_the_sum_of_absolute_byte_differences():
    rng = np.random.default_rng(0)
    codes = rng.integers(0, 256, (50, 32), dtype=np.uint8)
    qc = rng.integers(0, 256, 32, dtype=np.uint8)
    out = np.empty(20, np.uint32)
    ann_index._sad_rows(qc, codes, 10, 30, out)
    ref = np.abs(codes[10:30].astype(np.int64) - qc.astype(np.int64)).sum(axis=1)
    np.testing.assert_array_equal(out, ref)


@pytest.mark.parametrize("d", [5, 16, 20])
def test_ivf_with_every_list_is_exact_for_any_dimension(d):
    E, alpha, F, _ = synthetic_embeddings(400, d, n_queries=10, seed=d)
    ref_cls, ref_d = FilterIndex(method="exact").fit(E, alpha).search(F, 12)
    cls, dist = FilterIndex(method="ivf", nlist=9, nprobe=9, rerank=400).fit(E, alpha).search(F, 12)
    np.testing.assert_array_equal(cls, ref_cls)
    np.testing.assert_allclose(dist, ref_d, rtol=1e-5)
