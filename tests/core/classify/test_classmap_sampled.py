"""CM-Boosted on sampled candidates (the 10^5-class fit) and a filter index saved with the model."""
import numpy as np
import pytest

from classmap_gui.core.classify.filters.exact import ExactFilter
from classmap_gui.core.classify.filters.ivf import IVFFilter
from classmap_gui.core.classify.classmap.sampled import (class_output_sums, fit_classmap_sampled, set_class_means,
                                                         set_mean_class_embeddings)
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
    return back, back.classmap.current_filter(), F


def test_a_chosen_filter_index_is_saved_with_the_model_and_used_only_for_its_embeddings(problem, tmp_path):
    bank, _, Xe, ye, Xt, _ = problem
    cm = fit_classmap_sampled(bank, Xe, ye, d=10, p=20, n_candidates=60, n_triples=5000, n_hard_examples=100)
    index = IVFFilter(nlist=17, nprobe=5, rerank=1.5).fit(cm.class_embeddings_, cm.alpha_)
    cm.use_filter(index)
    assert cm.filter == "ivf" and cm.filter_params["nlist"] == 17    # the estimator names the index it uses
    back, restored, F = _saved_and_loaded(bank, cm, Xt, tmp_path / "m")
    assert isinstance(restored, IVFFilter) and len(restored.centroids_) == 17 and restored.nprobe == 5
    assert np.array_equal(restored.search(F, 20)[0], index.search(F, 20)[0])
    assert np.array_equal(restored.centroids_, index.centroids_)      # the lists, not a new k-means
    # new class embeddings: the filter is refitted on them (the same kind and parameters), not the old lists used
    back.classmap.class_embeddings_ = back.classmap.class_embeddings_ + 1
    again = back.classmap.current_filter()
    assert again is not restored and again.kind == "ivf" and again.matches(back.classmap.class_embeddings_,
                                                                          back.classmap.alpha_)
    with pytest.raises(ConfigError, match="another set of class embeddings"):
        cm.use_filter(ExactFilter().fit(cm.class_embeddings_[:50], cm.alpha_))


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


def test_a_chosen_graph_is_saved_with_the_model_and_its_library_is_required(problem, tmp_path, monkeypatch):
    bank, _, Xe, ye, Xt, _ = problem
    cm = fit_classmap_sampled(bank, Xe, ye, d=10, p=20, n_candidates=60, n_triples=5000, n_hard_examples=100)
    index = GraphFilterIndex(m=8, ef_search=50).fit(cm.class_embeddings_, cm.alpha_)
    cm.use_filter(index)
    back, restored, F = _saved_and_loaded(bank, cm, Xt, tmp_path / "g")
    assert isinstance(restored, GraphFilterIndex) and restored.ef_search == 50
    assert np.array_equal(restored.graph_, index.graph_)               # the saved graph, not a rebuilt one
    assert np.array_equal(restored.search(F, 20)[0], index.search(F, 20)[0])
    # a file whose graph holds other embeddings: the loaded model refits its filter on its own embeddings
    arrays = dict(np.load(tmp_path / "g" / "arrays.npz"))
    key = next(k for k in arrays if k.endswith("class_embeddings_"))
    arrays[key] = arrays[key] + 1
    np.savez(tmp_path / "g" / "arrays.npz", **arrays)
    moved = Recogniser.load(tmp_path / "g").classmap
    assert moved.filter_.kind == "hnsw" and not np.array_equal(moved.filter_.graph_, index.graph_)
    # without faiss the model does not quietly search another index: loading it says what is missing
    monkeypatch.setitem(__import__("sys").modules, "faiss", None)
    with pytest.raises(ModelFormatError, match=r"g.*HNSW graph.*needs the faiss library.*pip install faiss-cpu"):
        Recogniser.load(tmp_path / "g")
    # a model whose index needs no faiss (IVF lists) still loads without it
    cm.use_filter(IVFFilter(nlist=17).fit(cm.class_embeddings_, cm.alpha_))
    back, restored, F = _saved_and_loaded(bank, cm, Xt, tmp_path / "i")
    assert isinstance(restored, IVFFilter) and back.predict_features(Xt[:5], top=1).labels.shape == (5,)
