"""The map of a ClassMap embedding: layouts, neighbours in the filter's distance, and t-SNE's progress
and cancel, on tiny data."""
import numpy as np
import pytest

from classmap_gui.core.explore import embedding_map as em
from classmap_gui.core.errors import Cancelled, ConfigError


def _clusters(k=6, per=20, d=5, seed=0):
    """``k`` well separated clusters of ``per`` points in ``d`` dimensions and each point's cluster."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(scale=10, size=(k, d))
    lab = np.repeat(np.arange(k), per)
    return (centres[lab] + rng.normal(scale=0.3, size=(k * per, d))).astype(np.float32), lab


def _nn_same_cluster(Y, lab):
    d = ((Y[:, None, :] - Y[None, :, :]) ** 2).sum(-1)
    np.fill_diagonal(d, np.inf)
    return np.mean(lab[d.argmin(axis=1)] == lab)


def test_pca_layout_keeps_clusters_apart():
    P, lab = _clusters()
    Y = em.pca_layout(P)
    assert Y.shape == (len(P), 2) and Y.dtype == np.float32
    assert _nn_same_cluster(Y, lab) > 0.95


def test_pca_layout_of_one_dimension_pads_a_zero_axis():
    Y = em.pca_layout(np.arange(10, dtype=np.float32)[:, None])
    assert Y.shape == (10, 2) and np.all(Y[:, 1] == 0) and np.ptp(Y[:, 0]) > 0


def test_tsne_layout_keeps_neighbours_and_reports_progress():
    P, lab = _clusters()
    seen = []
    Y = em.tsne_layout(P, max_iter=300, progress=lambda f, s: seen.append((f, s)))
    assert Y.shape == (len(P), 2) and Y.dtype == np.float32 and np.all(np.isfinite(Y))
    assert _nn_same_cluster(Y, lab) > 0.95
    fr = [f for f, _ in seen]
    assert fr[0] == 0.0 and fr[-1] == 1.0 and fr == sorted(fr) and len(fr) > 10
    assert any("arranging" in s for _, s in seen)
    again = em.tsne_layout(P, max_iter=300)
    np.testing.assert_allclose(again, Y, atol=1e-4)  # init="pca" and a seed: repeatable


def test_tsne_layout_stops_on_request():
    P, _ = _clusters()
    calls = []

    def stop():
        calls.append(1)
        return len(calls) > 20  # stop in the middle of the optimisation

    with pytest.raises(Cancelled):
        em.tsne_layout(P, max_iter=500, should_stop=stop)
    assert len(calls) == 21


def test_tsne_layout_rejects_bad_input():
    P, _ = _clusters()
    with pytest.raises(ConfigError, match="250"):
        em.tsne_layout(P, max_iter=100)
    bad = P.copy()
    bad[3, 1] = np.nan
    with pytest.raises(ConfigError, match="non-finite"):
        em.tsne_layout(bad)
    with pytest.raises(ConfigError, match="at least 3"):
        em.pca_layout(P[:2])


def test_tiny_map_caps_perplexity():
    Y = em.tsne_layout(np.eye(5, dtype=np.float32) * 3, max_iter=250)
    assert Y.shape == (5, 2) and np.all(np.isfinite(Y))


def test_nearest_classes_in_l1_leave_the_class_out():
    E = np.array([[0, 0], [1, 0], [0, 3], [2, 2], [10, 10]], np.float32)
    idx, dist = em.nearest_classes(E, 0, k=3)
    # L1 from (0, 0): 1, 3, 4, 20 (Euclidean would put (2, 2) before (0, 3))
    assert idx.tolist() == [1, 2, 3] and dist.tolist() == [1, 3, 4]
    assert em.nearest_classes(E, 4, k=10)[0].tolist() == [3, 2, 1, 0]
    with pytest.raises(ConfigError):
        em.nearest_classes(E, 5)


class _FakeClassMap:
    """A fitted ClassMap's parts the map reads: alpha_, class_embeddings_ and the reference outputs."""

    def __init__(self):
        self.alpha_ = np.array([2.0, 0.5], np.float32)
        self.class_embeddings_ = np.array([[1, 1], [3, -1], [0, 4]], np.float32)
        self.W = np.array([[1, 0, 0], [0, 1, 1]], np.float32)

    def reference_outputs(self, bank, X):
        return X @ self.W.T


def test_map_points_scale_by_alpha_so_l1_is_the_filters_distance():
    cm = _FakeClassMap()
    X = np.array([[1, 2, 3], [0, 0, 1]], np.float32)
    pts = em.map_points(cm, None, X)
    np.testing.assert_allclose(pts.classes, [[2, 0.5], [6, -0.5], [0, 2]])
    np.testing.assert_allclose(pts.queries, [[2, 2.5], [0, 0.5]])
    assert pts.stacked.shape == (5, 2)
    # the filter's weighted L1 of query 0 to class 1 equals plain L1 between the scaled points
    filt = np.sum(cm.alpha_ * np.abs(X[0] @ cm.W.T - cm.class_embeddings_[1]))
    assert np.isclose(np.abs(pts.queries[0] - pts.classes[1]).sum(), filt)
