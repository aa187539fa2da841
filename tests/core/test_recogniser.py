"""Recogniser, train() and evaluate(): what the GUI and CLI show a user after training."""
import numpy as np
import pytest

from classmap_gui.core.data import ImageSet, load_digits
from classmap_gui.core.errors import Cancelled, ConfigError, DataError
from classmap_gui.core.recogniser import Recogniser
from classmap_gui.core.features import KMeansFeatures
from classmap_gui.core.train.training import TrainConfig, evaluate, train


@pytest.fixture(scope="module")
def digits():
    return load_digits()


@pytest.fixture(scope="module")
def trained(digits):
    return train(digits, TrainConfig(features="pixels", bank="ova-ridge", seed=0))


def test_train_reports_test_accuracy_and_costs(trained, digits):
    rep = trained.report
    assert trained.report_on == "test"
    assert trained.sizes["train"] + trained.sizes["test"] == len(digits)
    assert rep.n == trained.sizes["test"]
    assert rep.accuracy > 0.85
    assert rep.top_accuracy >= rep.accuracy
    assert rep.evaluations_per_query == 10 and rep.brute_force_evaluations == 10 and rep.evaluations_ratio == 1
    assert rep.confusion.shape == (10, 10) and rep.confusion.dtype == np.int64
    assert rep.confusion.sum() == rep.n
    assert np.trace(rep.confusion) == round(rep.accuracy * rep.n)
    assert len(rep.misclassified) == rep.n - np.trace(rep.confusion)
    assert set(rep.timings) >= {"features", "classify", "total"}
    d = rep.to_dict()
    assert set(d["per_class_accuracy"]) == set(digits.class_names)
    assert trained.recogniser.metadata["test_accuracy"] == rep.accuracy


def test_predict_gives_top_candidates_evaluations_and_timings(trained, digits):
    rec = trained.recogniser
    p = rec.predict(digits.images[:20], top=3)
    assert p.top_classes.shape == (20, 3) and p.top_classes.dtype == np.int64
    assert p.top_scores.dtype == np.float32
    assert np.all(np.diff(p.top_scores, axis=1) <= 0)  # best first
    np.testing.assert_array_equal(p.labels, p.top_classes[:, 0])
    np.testing.assert_array_equal(p.evaluations, np.full(20, 10))
    assert set(p.timings) == {"features", "classify", "total"}
    assert (p.labels == digits.labels[:20]).mean() > 0.8
    # one image, any size, colour or grey: brought to the model's 8x8 grey
    big = np.kron(digits.images[3], np.ones((4, 4), np.uint8))
    colour = np.repeat(big[:, :, None], 3, axis=2)
    assert rec.prepare(colour).shape == (1, 8, 8)
    assert rec.predict(colour, top=1).labels[0] == rec.predict(digits.images[3:4], top=1).labels[0]
    assert rec.prepare([big, digits.images[0]]).shape == (2, 8, 8)


def test_evaluate_maps_class_names_by_name(trained, digits):
    rec = trained.recogniser
    order = np.arange(10)[::-1]
    flipped = ImageSet(digits.images[:200], order[digits.labels[:200]], [str(c) for c in order], name="flipped")
    a = evaluate(rec, flipped)
    b = evaluate(rec, digits.subset(np.arange(200)))
    assert a.accuracy == b.accuracy
    alien = ImageSet(digits.images[:4], [0, 1, 0, 1], ["0", "cat"])
    with pytest.raises(DataError, match="cat"):
        evaluate(rec, alien)


def test_untrainable_set_is_refused_before_training(digits):
    labels = digits.labels.copy()
    labels[:] = np.where(labels == 3, 4, labels)
    labels[0] = 3  # class '3' now has a single image
    one = ImageSet(digits.images, labels, digits.class_names, name="lonely")
    calls = []
    with pytest.raises(DataError, match="'3' \\(1\\)"):
        train(one, TrainConfig(features="pixels"), progress=lambda f, s: calls.append(s))
    assert calls == []  # nothing started


def test_bad_settings_and_cancel(digits):
    with pytest.raises(ConfigError):
        train(digits, TrainConfig(features="pixels", bank="nope"))
    with pytest.raises(ConfigError):
        train(digits, TrainConfig(features="pixels", features_params={"bogus": 1}))
    with pytest.raises(Cancelled):
        train(digits, TrainConfig(features="pixels"), should_stop=lambda: True)


def test_no_test_split_reports_on_training_data(digits):
    res = train(digits.subset(np.arange(300)), TrainConfig(features="pixels", bank="ova-ridge", test_fraction=0))
    assert res.report_on == "train" and res.report.n == 300


def test_small_images_adapt_kmeans_patch():
    from classmap_gui.core.features.kmeans import auto_sizes

    # the component adapts to the images it is fitted on; an explicit setting wins
    assert auto_sizes(8, 8) == (3, 400, 50_000) and auto_sizes(32, 32) == (6, 1600, 200_000)
    imgs = np.random.default_rng(0).integers(0, 256, (30, 8, 8), dtype=np.uint8)
    fm = KMeansFeatures(n_centroids=8, n_patches=500, random_state=0).fit(imgs)
    assert fm.patch_size_ == 3 and fm.transform(imgs).shape == (30, 32)
    assert KMeansFeatures(patch_size=2, n_centroids=8, n_patches=500).fit(imgs).patch_size_ == 2


def test_classmap_plugs_in_and_survives_save(tmp_path, digits):
    res = train(digits, TrainConfig(features="pixels", bank="ova-ridge", seed=0,
                                    classmap={"d": 4, "p": 4, "embedding": "random", "refine": "v2"}))
    rec = res.recogniser
    assert rec.classmap is not None
    p = rec.predict(digits.images[:50], top=3)
    assert p.top_classes.shape == (50, 3)
    assert res.report.accuracy > 0.7
    back = Recogniser.load(rec.save(tmp_path / "m"))
    q = back.predict(digits.images[:50], top=3)
    np.testing.assert_array_equal(p.top_classes, q.top_classes)
    np.testing.assert_array_equal(p.evaluations, q.evaluations)
