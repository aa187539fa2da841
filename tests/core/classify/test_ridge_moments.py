"""The ridge bank from moments (Gram once, per-class sums) is the product's ridge bank, for any penalty."""
import numpy as np
import pytest

from classmap_gui.core.classify.banks.ova import OneVsAllRidge
from classmap_gui.core.classify.banks.ridge_moments import ova_ridge_bank, ridge_moments, top_k_linear
from classmap_gui.core.errors import DataError


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    C, D, n = 30, 24, 900
    centres = rng.standard_normal((C, D)).astype(np.float32)
    y = rng.integers(0, C, n)
    X = (centres[y] + 0.8 * rng.standard_normal((n, D)) + 3.0).astype(np.float32)  # off-centre, like HOG
    return X, y, C


@pytest.mark.parametrize("alpha", [0.5, 30.0])
def test_weights_equal_the_ridge_banks(data, alpha):
    X, y, C = data
    ref = OneVsAllRidge(alpha=alpha).fit(X, y)
    W, b = ridge_moments(X, y, C, chunk=128).path().weights(alpha)
    scale = np.abs(ref.coef_).max()
    assert np.abs(W - ref.coef_).max() <= 1e-5 * scale and np.abs(b - ref.intercept_).max() <= 1e-5
    bank = ova_ridge_bank(W, b, alpha)
    assert np.array_equal(bank.predict(X), ref.predict(X))


def test_moments_of_parts_add_up_and_do_not_depend_on_chunks_or_row_order(data, tmp_path):
    X, y, C = data
    whole = ridge_moments(X, y, C, chunk=1000)
    rows = np.random.default_rng(1).permutation(len(X))
    a = ridge_moments(X, y[rows[:400]], C, rows=rows[:400], shift=whole.shift, chunk=77)
    b = ridge_moments(X, y[rows[400:]], C, rows=rows[400:], shift=whole.shift, chunk=50)
    np.save(tmp_path / "X.npy", X)
    from_file = ridge_moments(str(tmp_path / "X.npy"), y, C, chunk=1000)
    for m in (a + b, from_file):
        Wm, bm = m.path().weights(3.0)
        W0, b0 = whole.path().weights(3.0)
        assert np.abs(Wm - W0).max() <= 1e-5 * np.abs(W0).max() and np.abs(bm - b0).max() <= 1e-5


def test_validation_scores_for_many_penalties_match_the_weights(data):
    X, y, C = data
    path = ridge_moments(X[:600], y[:600], C).path()
    tops = path.top_k(X[600:], [0.1, 10.0, 1000.0], k=3)
    for alpha, top in tops.items():
        W, b = path.weights(alpha)
        S = X[600:] @ W.T + b
        assert np.array_equal(top[:, 0], S.argmax(1))
        assert np.array_equal(top_k_linear(X[600:], W, b, 3, block=7), np.argsort(-S, 1, kind="stable")[:, :3])


def test_a_class_without_rows_is_reported(data):
    X, y, C = data
    with pytest.raises(DataError, match="no training rows"):
        ridge_moments(X, y, C + 2).path()
    with pytest.raises(DataError, match="labels for"):
        ridge_moments(X, y[:10], C)
