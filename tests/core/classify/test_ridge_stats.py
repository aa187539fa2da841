"""A ridge bank keeps its training statistics and adds a class from them in closed form (issue 48)."""
import numpy as np
import pytest

from classmap_gui.core.classify import OneVsAllRidge
from classmap_gui.core.classify.banks.ridge_stats import RidgeStatistics, pack, unpack, worth_keeping
from classmap_gui.core.errors import ConfigError


def _data(n=300, D=20, C=5, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, D)).astype(np.float32)
    return X, rng.integers(0, C, n), rng


@pytest.mark.parametrize("n", [300, 15])   # the primal solve, and the dual one (fewer rows than features)
def test_added_class_is_the_from_scratch_column_and_the_others_stay(n):
    X, y, rng = _data(n)
    Z = (rng.normal(size=(40, X.shape[1])) + 1).astype(np.float32)
    bank = OneVsAllRidge(alpha=3.0, keep_statistics="always").fit(X, y)
    before_W, before_b = bank.coef_.copy(), bank.intercept_.copy()
    bank.add_class(5, Z)
    scratch = OneVsAllRidge(alpha=3.0).fit(np.vstack([X, Z]), np.r_[y, np.full(len(Z), 5)])
    np.testing.assert_allclose(bank.coef_[5], scratch.coef_[5], atol=1e-5)
    np.testing.assert_allclose(bank.intercept_[5], scratch.intercept_[5], atol=1e-5)
    np.testing.assert_array_equal(bank.coef_[:5], before_W)         # the other classes are not changed
    np.testing.assert_array_equal(bank.intercept_[:5], before_b)
    assert bank.classes_.tolist() == [0, 1, 2, 3, 4, 5] and bank.predict(Z).tolist().count(5) > 30


def test_a_second_class_sees_the_first_among_its_negatives_and_undo_restores_the_statistics():
    X, y, rng = _data()
    Z1 = (rng.normal(size=(40, 20)) + 1).astype(np.float32)
    Z2 = (rng.normal(size=(30, 20)) - 1).astype(np.float32)
    bank = OneVsAllRidge(alpha=3.0, keep_statistics="always").fit(X, y)
    first = OneVsAllRidge(alpha=3.0, keep_statistics="always").fit(X, y).add_class(5, Z1)
    bank.add_class(5, Z1).add_class(6, Z2)
    scratch = OneVsAllRidge(alpha=3.0).fit(np.vstack([X, Z1, Z2]), np.r_[y, np.full(40, 5), np.full(30, 6)])
    np.testing.assert_allclose(bank.coef_[6], scratch.coef_[6], atol=1e-5)
    bank.remove_class(6, Z2)
    assert bank.classes_.tolist() == [0, 1, 2, 3, 4, 5] and bank.n_samples_seen_ == first.n_samples_seen_ == 340
    np.testing.assert_allclose(bank.gram_, first.gram_, rtol=1e-5, atol=1e-3)
    np.testing.assert_allclose(bank.mean_, first.mean_, atol=1e-12)


def test_statistics_are_kept_with_many_classes_only_and_a_bank_without_them_says_retrain():
    assert worth_keeping(2431, 512) and not worth_keeping(10, 512)
    X, y, _ = _data()
    bank = OneVsAllRidge(alpha=3.0).fit(X, y)                     # auto: 5 classes of 20 features -> not kept
    assert not hasattr(bank, "gram_")
    with pytest.raises(ConfigError, match="retrain"):
        bank.add_class(5, X[:3])
    kept = OneVsAllRidge(alpha=3.0, keep_statistics="always").fit(X, y)
    assert kept.gram_.dtype == np.float32 and kept.gram_.shape == (20 * 21 // 2,)
    with pytest.raises(ConfigError, match="exists already"):
        kept.add_class(4, X[:3])


def test_packing_and_statistics_of_rows():
    rng = np.random.default_rng(3)
    A, B = rng.normal(size=(50, 6)), rng.normal(size=(20, 6)) + 2
    G = (A - A.mean(0)).T @ (A - A.mean(0))
    np.testing.assert_allclose(unpack(pack(G), 6), G, rtol=1e-6)
    both = RidgeStatistics(G, A.mean(0), 50).with_rows(B)
    U = np.vstack([A, B])
    np.testing.assert_allclose(both.gram, (U - U.mean(0)).T @ (U - U.mean(0)), rtol=1e-10)
    back = both.with_rows(B, sign=-1)
    np.testing.assert_allclose(back.gram, G, rtol=1e-9, atol=1e-9)
    assert back.n == 50


def test_a_weighted_class_is_the_solve_on_its_rows_repeated_and_undo_takes_the_weight_out():
    X, y, rng = _data()
    Z = (rng.normal(size=(12, 20)) + 1).astype(np.float32)
    bank = OneVsAllRidge(alpha=3.0, keep_statistics="always").fit(X, y)
    before = bank.gram_.copy(), bank.mean_.copy(), bank.n_samples_seen_
    bank.add_class(5, Z, weight=3.0)                        # each row counts three times
    scratch = OneVsAllRidge(alpha=3.0).fit(np.vstack([X, Z, Z, Z]), np.r_[y, np.full(36, 5)])
    np.testing.assert_allclose(bank.coef_[5], scratch.coef_[5], atol=1e-5)
    np.testing.assert_allclose(bank.intercept_[5], scratch.intercept_[5], atol=1e-5)
    assert bank.n_samples_seen_ == 336
    half = OneVsAllRidge(alpha=3.0, keep_statistics="always").fit(X, y).add_class(5, np.vstack([Z, Z]), weight=0.5)
    np.testing.assert_allclose(half.coef_[5], OneVsAllRidge(alpha=3.0, keep_statistics="always").fit(X, y)
                               .add_class(5, Z).coef_[5], atol=1e-5)      # two copies at half weight: one row each
    bank.remove_class(5, Z, weight=3.0)
    np.testing.assert_allclose(bank.gram_, before[0], rtol=1e-5, atol=1e-3)
    np.testing.assert_allclose(bank.mean_, before[1], atol=1e-12)
    assert bank.n_samples_seen_ == before[2]
    with pytest.raises(ConfigError, match="weight"):
        bank.add_class(5, Z, weight=0.0)
