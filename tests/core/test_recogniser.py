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


# ------------------------------------------------------------------ a class added without retraining (issue 48)
def _ridge_model(classmap: bool):
    from sklearn.datasets import load_digits as sk_digits

    from classmap_gui.core.classify import OneVsAllRidge
    from classmap_gui.core.classify.classmap.estimator import ClassMap
    from classmap_gui.core.features import PixelFeatures

    d = sk_digits()
    images, y = (d.images * 15).astype(np.uint8), d.target
    old = y < 9
    f = PixelFeatures().fit(images)
    X = f.transform(images[old])
    bank = OneVsAllRidge(alpha=10.0, keep_statistics="always").fit(X[:1200], y[old][:1200])
    cm = ClassMap(d=6, p=5, n_triples=3000, filter="exact").fit_embedding(bank, X[1200:], y[old][1200:]) \
        if classmap else None
    rec = Recogniser(f, bank, cm, class_names=[str(k) for k in range(9)], image_size=(8, 8))
    return rec, images[~old], images[old][1200:], y[old][1200:]


@pytest.mark.parametrize("classmap", [False, True])
def test_a_class_added_to_a_ridge_model_is_named_saved_and_removed(tmp_path, classmap):
    rec, nines, others, others_y = _ridge_model(classmap)
    before = rec.predict(others, top=1).labels
    added = rec.add_class("nine", nines[:120])
    assert (added.label, added.name, added.examples, added.warning) == (9, "nine", 120, None)
    assert added.held_out == 30 and added.recall > 0.4     # chance: 0.1; the old classes never saw a nine
    fresh = nines[120:]
    assert (rec.predict(fresh, top=1).labels == 9).mean() > 0.45                # the new class is named
    after = rec.predict(others, top=1).labels
    assert (after == others_y).mean() > (before == others_y).mean() - 0.05      # the old classes still are
    rec.save(tmp_path / "m")
    back = Recogniser.load(tmp_path / "m")
    assert back.class_names[-1] == "nine" and back.class_examples["nine"].shape == (120, 8, 8)
    assert np.array_equal(back.predict(fresh, top=1).labels, rec.predict(fresh, top=1).labels)
    back.remove_class("nine")                                                   # the undo
    assert back.n_classes == 9 and "nine" not in back.class_examples
    assert np.array_equal(back.predict(others, top=1).labels, before)
    with pytest.raises(DataError, match="was not added"):
        back.remove_class("3")


def test_a_class_counted_as_chosen_rows_is_weighed_so_saved_and_removed_cleanly(tmp_path):
    """Issue 48: add_class(rows=) lets a few hundred recorded crops weigh as a typical class's rows: the
    classifier is the one of the crops repeated rows/len times, the count survives saving, and the undo takes out
    exactly what went in."""
    rec, nines, _, _ = _ridge_model(False)
    stats = rec.classifier.gram_.copy(), rec.classifier.n_samples_seen_
    light = Recogniser.load(rec.save(tmp_path / "a"))
    rec.add_class("nine", nines[:60], rows=20)
    light.add_class("nine", nines[:60])
    assert rec.classifier.n_samples_seen_ == stats[1] + 20 and light.classifier.n_samples_seen_ == stats[1] + 60
    assert rec.classifier.intercept_[9] < light.classifier.intercept_[9]   # a third of the rows: a rarer class
    back = Recogniser.load(rec.save(tmp_path / "b"))
    assert back.metadata["added_rows"] == {"nine": 20.0}
    back.remove_class("nine")
    assert back.classifier.n_samples_seen_ == stats[1] and "nine" not in back.metadata["added_rows"]
    np.testing.assert_allclose(back.classifier.gram_, stats[0], rtol=1e-5, atol=1e-3)


def test_a_class_like_an_existing_one_gets_a_message_naming_it():
    rec, _, others, others_y = _ridge_model(False)
    threes = others[others_y == 3]
    added = rec.add_class("my three", threes)
    assert added.closest == "3" and added.closest_share > 0.5
    assert "'my three' looks like '3'" in added.warning


def test_adding_needs_a_new_name_and_a_model_that_kept_its_statistics(trained, digits):
    rec, nines, _, _ = _ridge_model(False)
    with pytest.raises(ConfigError, match="exists already"):
        rec.add_class("3", nines[:5])
    rec.classifier.__dict__.pop("gram_")       # a model saved before the statistics were kept
    rec.classmap = object()
    with pytest.raises(ConfigError, match="retrain it with this version"):
        rec.add_class("nine", nines[:5])


def test_a_colour_model_saved_and_loaded_stays_colour(tmp_path):
    """Issue 46: a colour recogniser must come back colour (Recogniser.save / load, here beside them). The classes differ only in hue at one
    brightness, so a model that reloaded as grey could not tell them apart even where it ran."""
    rng = np.random.default_rng(0)
    hues = np.array([[200, 40, 40], [40, 200, 40], [40, 40, 200]], np.float64)  # BGR at equal grey level
    labels = np.arange(60) % 3
    images = np.clip(hues[labels][:, None, None, :] + rng.normal(0, 6, (60, 6, 6, 3)), 0, 255).astype(np.uint8)
    ims = ImageSet(images, labels, ["blue", "green", "red"])
    model = train(ims, TrainConfig(features="pixels", bank="ova-ridge", test_fraction=0, seed=0)).recogniser
    assert not model.grey
    back = Recogniser.load(model.save(tmp_path / "colour"))
    assert not back.grey and back.image_size == (6, 6)
    got = back.predict(images)
    np.testing.assert_array_equal(got.top_scores, model.predict(images).top_scores)
    assert (got.labels == labels).mean() == 1.0
