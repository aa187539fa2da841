"""The numbers behind the app's inspection views, checked without a window."""
import numpy as np
import pytest

from classmap_gui.core.explore import views


def test_confusion_from_labels_and_rates():
    true = np.array([0, 0, 1, 1, 1, 2])
    pred = np.array([0, 1, 1, 1, 0, 2])
    conf = views.confusion_from_labels(true, pred, 3)
    assert conf.tolist() == [[1, 1, 0], [1, 2, 0], [0, 0, 1]]
    rates = views.confusion_rates(conf)
    assert rates.dtype == np.float32
    np.testing.assert_allclose(rates.sum(axis=1), 1.0)
    assert views.cell_examples(true, pred, 1, 0).tolist() == [4]


def test_confusion_rates_empty_row_is_zero():
    rates = views.confusion_rates(np.array([[0, 0], [1, 3]]))
    assert rates[0].tolist() == [0.0, 0.0]


@pytest.mark.parametrize("k,channels", [(7, 1), (16, 3), (1, 1)])
def test_centroid_mosaic_has_k_tiles(k, channels, mosaic_tile_count):
    rng = np.random.default_rng(0)
    cents = rng.normal(size=(k, 5 * 5 * channels)).astype(np.float32)
    cols = int(np.ceil(np.sqrt(k)))
    m = views.centroid_mosaic(cents, 5, channels, pad=1, scale=2)
    assert m.dtype == np.uint8 and m.ndim == (2 if channels == 1 else 3)
    assert mosaic_tile_count(m, 5, columns=cols, pad=1, scale=2) == k
    # each tile is stretched on its own: its darkest pixel is 0 and brightest 255
    t = m[:10, :10] if channels == 1 else m[:10, :10, 0]
    assert t.min() == 0


def test_centroid_mosaic_rejects_wrong_shape():
    with pytest.raises(ValueError):
        views.centroid_mosaic(np.zeros((4, 10), np.float32), 5, 1)


def test_test_part_is_the_split_train_reports_on():
    from classmap_gui.core.data import load_digits
    from classmap_gui.core.train.training import TrainConfig, train

    ims = load_digits().subset(np.arange(400))
    cfg = TrainConfig(features="pixels", bank="ova-ridge", classmap={"d": 4, "p": 3, "embedding": "random"},
                      test_fraction=0.25, seed=3)
    res = train(ims, cfg)
    test = views.test_part(ims, cfg)
    assert len(test) == res.report.n
    pred = res.recogniser.predict(test.images, top=1).labels
    assert np.mean(pred == test.labels) == pytest.approx(res.report.accuracy)


def test_top_confusions_counts_shares_and_order():
    true = np.array([0, 0, 0, 0, 1, 1, 2, 2, 2])
    pred = np.array([1, 1, 2, 0, 0, 1, 0, 1, 2])
    c = views.top_confusions(true, pred, 3)
    # (0->1) twice; then the single mistakes ordered by true, then predicted class
    assert list(zip(c.true.tolist(), c.pred.tolist(), c.count.tolist())) == [(0, 1, 2), (0, 2, 1), (1, 0, 1),
                                                                             (2, 0, 1), (2, 1, 1)]
    np.testing.assert_allclose(c.share, [2 / 4, 1 / 4, 1 / 2, 1 / 3, 1 / 3], rtol=1e-6)
    assert len(views.top_confusions(true, pred, 3, k=2)) == 2
    assert len(views.top_confusions(true, true, 3)) == 0  # no mistakes, no rows


def test_top_confusions_never_builds_a_square_table():
    # 100 000 classes: a dense table would be 80 GB; the list only holds the mistakes
    true = np.array([5, 99_999, 7])
    pred = np.array([6, 3, 7])
    c = views.top_confusions(true, pred, 100_000)
    assert sorted(zip(c.true.tolist(), c.pred.tolist())) == [(5, 6), (99_999, 3)]


def test_top_confusions_rejects_bad_labels():
    with pytest.raises(ValueError, match="0..2"):
        views.top_confusions(np.array([0, 3]), np.array([0, 1]), 3)
    with pytest.raises(ValueError, match="length"):
        views.top_confusions(np.array([0, 1]), np.array([0]), 3)


def test_most_confused_with_counts_both_directions():
    true = np.array([0, 0, 0, 1, 2, 2, 3])
    pred = np.array([1, 2, 0, 0, 0, 0, 3])
    classes, counts = views.most_confused_with(true, pred, 0, k=5)
    # class 0: one image taken for 1, one for 2; class 1 once and class 2 twice taken for 0
    assert classes.tolist() == [2, 1] and counts.tolist() == [3, 2]
    assert views.most_confused_with(true, pred, 3)[0].tolist() == []
