"""CompressiveClassifier: sketches, Parzen limit, streaming, merging, adding classes, sklearn contract."""
import numpy as np
import pytest
from sklearn.utils.estimator_checks import estimator_checks_generator

from classmap_gui.core import CompressiveClassifier
from classmap_gui.core.errors import ConfigError
from classmap_gui.core.features.random_features import gaussian_kernel


def _blobs(n=300, d=3, C=3, seed=0, spread=0.25):
    rng = np.random.default_rng(seed)
    centres = rng.uniform(-1, 1, (C, d))
    y = rng.integers(0, C, n)
    return (centres[y] + spread * rng.standard_normal((n, d))).astype(np.float32), y


def _parzen_scores(Xtr, ytr, Xte, sigma, classes):
    K = gaussian_kernel(Xte, Xtr, sigma)
    counts = np.array([(ytr == c).sum() for c in classes])
    means = np.stack([K[:, ytr == c].mean(1) for c in classes], 1)
    return means * counts / counts.sum()


def _contract_checks():
    """scikit-learn's estimator checks, less the array-API one: the classifier does not declare
    array-API support, so that check only reports itself as not applicable."""
    for est in (CompressiveClassifier(m=200, random_state=0),
                CompressiveClassifier(m=100, priors="uniform", random_state=0)):
        for estimator, check in estimator_checks_generator(est):
            name = getattr(check, "func", check).__name__
            if name != "check_array_api_input":
                yield pytest.param(estimator, check, id=f"{est.priors}-{name}")


@pytest.mark.parametrize("estimator, check", list(_contract_checks()))
def test_sklearn_estimator_contract(estimator, check):
    check(estimator)


def test_sketches_are_class_means_of_the_map_and_prediction_is_argmax():
    X, y = _blobs()
    clf = CompressiveClassifier(m=300, sigma=2.0, random_state=0).fit(X, y)
    F = clf.transform_sketch(X)
    assert clf.sketches_.shape == (3, 600) and clf.sketches_.dtype == np.float32
    for k in range(3):
        np.testing.assert_allclose(clf.sketches_[k], F[y == k].mean(0), atol=1e-5)
    np.testing.assert_array_equal(clf.counts_, np.bincount(y))
    S = clf.scores(X)
    assert S.shape == (300, 3)
    np.testing.assert_array_equal(clf.predict(X), S.argmax(1))
    assert clf.score(X, y) > 0.9


def test_converges_to_parzen_window_classifier_at_one_over_sqrt_m():
    X, y = _blobs(240, seed=1, spread=0.4)
    Xtr, ytr, Xte = X[:160], y[:160], X[160:]
    exact = _parzen_scores(Xtr, ytr, Xte, 2.0, np.arange(3))
    gaps = {}
    for m in (100, 10000):
        # average over draws so the rate, not one draw's luck, is compared
        gaps[m] = np.mean([np.abs(CompressiveClassifier(m=m, sigma=2.0, random_state=r).fit(Xtr, ytr).scores(Xte)
                                  - exact).max() for r in range(3)])
    ratio = gaps[100] / gaps[10000]
    assert 4 < ratio < 25  # 1/sqrt(m) predicts 10
    agree = (CompressiveClassifier(m=20000, sigma=2.0, random_state=0).fit(Xtr, ytr).scores(Xte).argmax(1)
             == exact.argmax(1)).mean()
    assert agree >= 0.97


def test_uniform_priors_ignore_class_counts():
    X, y = _blobs(200, seed=2)
    keep = (y != 2) | (np.arange(200) % 5 == 0)  # class 2 rare
    emp = CompressiveClassifier(m=200, random_state=0).fit(X[keep], y[keep])
    uni = CompressiveClassifier(m=200, priors="uniform", random_state=0).fit(X[keep], y[keep])
    np.testing.assert_allclose(uni.class_priors(), 1 / 3)
    np.testing.assert_allclose(emp.class_priors(), np.bincount(y[keep]) / keep.sum(), rtol=1e-6)
    np.testing.assert_array_equal(emp.sketches_, uni.sketches_)


def test_partial_fit_streaming_equals_one_fit():
    X, y = _blobs(300)
    full = CompressiveClassifier(m=64, random_state=5).fit(X, y)
    stream = CompressiveClassifier(m=64, random_state=5)
    for s in range(0, 300, 70):
        stream.partial_fit(X[s:s + 70], y[s:s + 70], classes=np.arange(3))
    np.testing.assert_allclose(stream.sketches_, full.sketches_, atol=1e-6)
    np.testing.assert_array_equal(stream.counts_, full.counts_)
    np.testing.assert_array_equal(stream.predict(X), full.predict(X))


def test_partial_fit_needs_classes_first_and_refuses_unknown_labels():
    X, y = _blobs(30)
    with pytest.raises(ValueError):
        CompressiveClassifier(m=8).partial_fit(X, y)
    clf = CompressiveClassifier(m=8, random_state=0).partial_fit(X[y < 2], y[y < 2], classes=[0, 1])
    with pytest.raises(ValueError, match="add_class"):
        clf.partial_fit(X, y)


def test_merge_equals_sketching_the_union():
    X, y = _blobs(400, C=4)
    a_rows = np.arange(400) < 150
    # site A never saw class 3, site B saw everything: the union has all four classes
    a_rows &= y != 3
    b_rows = ~a_rows
    union = CompressiveClassifier(m=128, random_state=7).fit(X, y)
    a = CompressiveClassifier(m=128, random_state=7).fit(X[a_rows], y[a_rows])
    b = CompressiveClassifier(m=128, random_state=7).fit(X[b_rows], y[b_rows])
    merged = a.merge(b)
    np.testing.assert_array_equal(merged.classes_, union.classes_)
    np.testing.assert_array_equal(merged.counts_, union.counts_)
    np.testing.assert_allclose(merged.sketches_, union.sketches_, atol=1e-6)
    np.testing.assert_allclose(merged.scores(X), union.scores(X), atol=1e-6)
    # the inputs are untouched
    assert len(a.classes_) == 3


def test_merge_refuses_sketches_of_different_maps():
    X, y = _blobs(60)
    a = CompressiveClassifier(m=16, random_state=1).fit(X, y)
    with pytest.raises(ConfigError, match="different sketch maps"):
        a.merge(CompressiveClassifier(m=16, random_state=2).fit(X, y))
    with pytest.raises(ConfigError):
        a.merge(CompressiveClassifier(m=32, random_state=1).fit(X, y))


def test_add_class_touches_no_other_sketch_and_is_recognised():
    X, y = _blobs(300, C=4, seed=3)
    clf = CompressiveClassifier(m=256, random_state=0).fit(X[y < 3], y[y < 3])
    before = clf.sketches_.copy()
    clf.add_class(3, X[y == 3])
    np.testing.assert_array_equal(clf.sketches_[:3], before)
    np.testing.assert_array_equal(clf.classes_, [0, 1, 2, 3])
    assert clf.counts_[3] == (y == 3).sum()
    ref = CompressiveClassifier(m=256, random_state=0).fit(X, y)
    np.testing.assert_allclose(clf.sketches_, ref.sketches_, atol=1e-6)
    assert (clf.predict(X[y == 3]) == 3).mean() > 0.8
    with pytest.raises(ConfigError, match="exists already"):
        clf.add_class(3, X[:2])


def test_add_class_with_string_labels():
    X, y = _blobs(90)
    names = np.array(["cat", "dog", "eel"])[y]
    clf = CompressiveClassifier(m=32, random_state=0).fit(X[y < 2], names[y < 2])
    clf.add_class("elephant", X[y == 2])
    assert list(clf.classes_) == ["cat", "dog", "elephant"]
    assert clf.predict(X[y == 2][:1])[0] in clf.classes_


def test_identity_map_sketches_given_features():
    X, y = _blobs(100)
    clf = CompressiveClassifier(map="identity").fit(np.abs(X), y)
    assert clf.map_ is None and clf.sketches_.shape == (3, 3)
    np.testing.assert_allclose(clf.sketches_[0], np.abs(X[y == 0]).mean(0), rtol=1e-5)


def test_bad_settings_are_config_errors():
    X, y = _blobs(20)
    with pytest.raises(ConfigError):
        CompressiveClassifier(priors="flat").fit(X, y)
    with pytest.raises(ConfigError):
        CompressiveClassifier(map="wavelets").fit(X, y)


def test_bank_interface_and_store_round_trip(tmp_path):
    from classmap_gui.core.registry import make_bank
    from classmap_gui.core.store import dump_estimator, load_estimator

    X, y = _blobs(120, C=2)
    bank = make_bank("compressive", sketch="rff", m=32, sigma=2.0).fit(X, y)
    S = bank.decision_function(X)
    assert S.shape == (120, 2) and S.dtype == np.float32  # (n, C) even for two classes
    sub = bank.decision_function_subset(X[:5], np.array([[1], [0], [1], [0], [1]]))
    np.testing.assert_allclose(sub[:, 0], S[np.arange(5), [1, 0, 1, 0, 1]], rtol=1e-5)
    assert bank.n_classifiers_ == 2
    arrays = {}
    spec = dump_estimator(bank, arrays, "classifier")
    back = load_estimator(spec, arrays)
    np.testing.assert_array_equal(back.decision_function(X), S)
    back.add_class(2, X[:10] + 3)
    assert back.n_classifiers_ == 3


def test_random_cnn_map_stores_and_reloads():
    from classmap_gui.core.registry import make_features
    from classmap_gui.core.store import dump_estimator, load_estimator

    imgs = np.random.default_rng(0).integers(0, 256, (12, 16, 16), dtype=np.uint8)
    cnn = make_features("cnn", m=40, random_state=1).fit(imgs)
    F = cnn.transform(imgs)
    assert F.shape == (12, 40) and F.dtype == np.float32 and np.all(np.isfinite(F))
    arrays = {}
    back = load_estimator(dump_estimator(cnn, arrays, "features"), arrays)
    np.testing.assert_array_equal(back.transform(imgs), F)


def test_adding_a_class_to_thousands_changes_no_other_sketch():
    rng = np.random.default_rng(0)
    C, per, d = 2430, 3, 16
    X = rng.standard_normal((C * per, d)).astype(np.float32)
    y = np.repeat(np.arange(C), per)
    clf = CompressiveClassifier(m=64, sigma=1.0, random_state=0).fit(X, y)
    before = clf.sketches_.copy()
    clf.add_class(C, X[:5] + 10)
    assert clf.sketches_.shape == (C + 1, 128)
    np.testing.assert_array_equal(clf.sketches_[:C], before)
    assert clf.predict(X[:5] + 10).tolist() == [C] * 5
