"""CM-Boosted on sampled candidates (the 10^5-class fit) and a filter index saved with the model."""
import numpy as np
import pytest

from classmap_gui.core.classify.filters.ivf import FilterIndex
from classmap_gui.core.classify.classmap.sampled import (fit_classmap_sampled, keep_filter_index, keep_graph_index,
                                                         restore_filter_index, set_mean_class_embeddings,
                                                         class_output_sums, set_class_means)
from classmap_gui.core.classify.filters.graph import GraphFilterIndex
from classmap_gui.core.classify.banks.ridge_moments import ova_ridge_bank, ridge_moments
from classmap_gui.core.errors import ConfigError, DataError, ModelFormatError
from classmap_gui.core.features.pixels import PixelFeatures
from classmap_gui.core.recogniser import Recogniser


@pytest.fixture(scope="module")
def problem():
    rng = np.random.default_rng(0)
    C, D = 300, 32
    centres = rng.standard_normal((C, D)).astype(np.float32) * 2

    def draw(k):
        y = np.repeat(np.arange(C), k)
        return (centres[y] + rng.standard_normal((len(y), D))).astype(np.float32), y

    (Xtr, ytr), (Xe, ye), (Xt, yt) = draw(4), draw(2), draw(2)
    path = ridge_moments(Xtr, ytr, C).path()
    bank = ova_ridge_bank(*path.weights(10.0), 10.0)
    return bank, path, Xe, ye, Xt, yt


def test_sampled_boosting_matches_brute_force_with_few_evaluations(problem):
    bank, path, Xe, ye, Xt, yt = problem
    brute = np.mean(bank.predict(Xt) == yt)
    cm = fit_classmap_sampled(bank, Xe, ye, d=20, p=30, n_candidates=120, n_triples=20_000, n_hard_examples=200)
    assert cm.class_embeddings_.shape == (300, len(cm.reference_)) and len(cm.reference_) == 20
    pred = cm.predict_result(Xt, top=1, bank=bank)
    assert np.mean(pred.labels == yt) >= brute - 0.02
    assert pred.evaluations.max() <= 50  # d + p of 300
    # references from a 10x smoother bank, asked only for the sampled candidates
    asked = []

    def rows(r):
        asked.append(len(r))
        return path.weight_rows(100.0, r)

    cm2 = fit_classmap_sampled(bank, Xe, ye, d=20, p=30, n_candidates=120, n_triples=20_000, n_hard_examples=200,
                               reference_rows=rows)
    assert asked == [120] and cm2.reference_coef_.shape == (20, 32)
    assert np.mean(cm2.predict_result(Xt, top=1, bank=bank).labels == yt) >= brute - 0.02


def test_every_class_needs_two_embedding_examples(problem):
    bank, _, Xe, ye, *_ = problem
    with pytest.raises(DataError, match="two embedding examples"):
        fit_classmap_sampled(bank, Xe[::2], ye[::2])


def _saved_and_loaded(bank, cm, Xt, path):
    """``cm`` saved in a model at ``path`` and loaded back: ``(loaded recogniser, its restored filter index,
    the query embeddings of 50 test images)``."""
    rec = Recogniser(PixelFeatures().fit(np.zeros((1, 4, 8), np.uint8)), bank, cm, [f"c{i}" for i in range(300)],
                     (4, 8), True)
    back = Recogniser.load(rec.save(path))
    F = (Xt[:50] @ bank.coef_[cm.reference_].T + bank.intercept_[cm.reference_]).astype(np.float32)
    return back, back.classmap._caches()["index"][2], F


def test_a_kept_filter_index_is_restored_on_load_only_for_its_embeddings(problem, tmp_path):
    bank, _, Xe, ye, Xt, _ = problem
    cm = fit_classmap_sampled(bank, Xe, ye, d=10, p=20, n_candidates=60, n_triples=5000, n_hard_examples=100)
    index = FilterIndex(method="ivf", nlist=17, nprobe=5, rerank=1.5).fit(cm.class_embeddings_, cm.alpha_)
    keep_filter_index(cm, index)
    back, restored, F = _saved_and_loaded(bank, cm, Xt, tmp_path / "m")
    assert restored.lists_.nlist == 17 and restored.nprobe == 5
    assert np.array_equal(restored.search(F, 20)[0], index.search(F, 20)[0])
    # lists built for other class embeddings are not used
    back.classmap.class_embeddings_ = back.classmap.class_embeddings_ + 1
    assert not restore_filter_index(back.classmap)
    with pytest.raises(ConfigError, match="another set of class embeddings"):
        keep_filter_index(cm, FilterIndex(method="exact").fit(cm.class_embeddings_[:50], cm.alpha_))


def test_class_embeddings_from_more_images_are_their_mean_outputs_and_find_the_class_more_often(problem):
    bank, path, Xe, ye, Xt, yt = problem
    cm = fit_classmap_sampled(bank, Xe, ye, d=10, p=5, n_candidates=60, n_triples=5000, n_hard_examples=100)
    near = lambda: np.mean(cm.predict_result(Xt, top=5, bank=bank).top_classes == yt[:, None]) * 5  # noqa: E731 - the true class in the top p
    before = near()
    rng = np.random.default_rng(3)
    extra = (Xe[ye < 150] + 0.1 * rng.standard_normal((300, 32))).astype(np.float32), ye[ye < 150]
    set_mean_class_embeddings(cm, bank, iter([(Xe[:7], ye[:7]), (Xe[7:], ye[7:]), extra]))
    F = np.concatenate([Xe, extra[0]]) @ bank.coef_[cm.reference_].T + bank.intercept_[cm.reference_]
    y = np.concatenate([ye, extra[1]])
    assert np.allclose(cm.class_embeddings_[7], F[y == 7].mean(axis=0), atol=1e-4)
    assert cm.class_embeddings_.dtype == np.float32 and cm.class_embeddings_.shape == (300, 10)
    assert near() >= before - 0.02  # averaging near-duplicates does not lose the classes
    with pytest.raises(DataError, match="class 150 has no examples"):
        set_mean_class_embeddings(cm, bank, iter([extra]))
    # sums over more images add to earlier sums: the means over both parts, read in two passes, are the same
    first = class_output_sums(cm, bank, iter([(Xe, ye)]))
    both = class_output_sums(cm, bank, iter([extra]), first)
    assert np.array_equal(first[1], np.bincount(ye, minlength=300))  # the earlier sums are not changed
    assert np.allclose(set_class_means(cm, both).class_embeddings_[7], F[y == 7].mean(axis=0), atol=1e-4)


def test_a_kept_graph_index_is_restored_on_load_only_for_its_embeddings(problem, tmp_path, monkeypatch):
    bank, _, Xe, ye, Xt, _ = problem
    cm = fit_classmap_sampled(bank, Xe, ye, d=10, p=20, n_candidates=60, n_triples=5000, n_hard_examples=100)
    index = GraphFilterIndex(m=8, ef_search=50).fit(cm.class_embeddings_, cm.alpha_)
    keep_graph_index(cm, index)
    back, restored, F = _saved_and_loaded(bank, cm, Xt, tmp_path / "g")
    assert isinstance(restored, GraphFilterIndex) and restored.ef_search == 50
    assert np.array_equal(restored.search(F, 20)[0], index.search(F, 20)[0])
    back.classmap.class_embeddings_ = back.classmap.class_embeddings_ + 1
    assert not restore_filter_index(back.classmap)
    # without faiss the model does not quietly search another index: loading it says what is missing
    monkeypatch.setitem(__import__("sys").modules, "faiss", None)
    with pytest.raises(ModelFormatError, match=r"g.*HNSW graph.*needs the faiss library.*pip install faiss-cpu"):
        Recogniser.load(tmp_path / "g")
    # a model whose index needs no faiss (IVF lists) still loads without it
    keep_filter_index(cm, FilterIndex(method="ivf", nlist=17).fit(cm.class_embeddings_, cm.alpha_))
    back, restored, F = _saved_and_loaded(bank, cm, Xt, tmp_path / "i")
    assert isinstance(restored, FilterIndex) and back.predict_features(Xt[:5], top=1).labels.shape == (5,)
