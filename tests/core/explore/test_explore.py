"""The Explore views computed without a window: what the panel draws, with progress and cancel."""
import numpy as np
import pytest

from classmap_gui.core.data import load_digits
from classmap_gui.core.errors import Cancelled
from classmap_gui.core.explore.overview import explore_views
from classmap_gui.core.train.training import TrainConfig, train
from classmap_gui.core.explore import views


@pytest.fixture(scope="module")
def trained():
    d = load_digits().subset(np.arange(600))
    cfg = TrainConfig(features="kmeans", features_params={"n_centroids": 20, "patch_size": 4, "n_patches": 2000},
                      bank="ova-ridge", classmap={"d": 4, "p": 3, "embedding": "random"}, seed=0)
    return train(d, cfg).recogniser, views.test_part(d, cfg)


def test_explore_views_predict_every_image_and_lay_out_the_sample(trained):
    rec, test = trained
    dots = np.array([5, 1, 9, 3, 20, 7])   # the map's sample, in the panel's (unsorted) order
    seen = []
    data = explore_views(rec, test.images, test.labels, dots, progress=lambda f, s: seen.append((f, s)))
    n = len(test)
    assert data.tested_pred.shape == (n,) and data.tested_labels.tolist() == test.labels.tolist()
    assert np.mean(data.tested_pred == test.labels) > 0.6           # a working recogniser's predictions
    assert data.labels.tolist() == test.labels[dots].tolist() and data.pred.tolist() == data.tested_pred[dots].tolist()
    np.testing.assert_array_equal(data.images, test.images[dots])
    np.testing.assert_allclose(data.X, rec.transform(test.images[dots]), rtol=1e-5, atol=1e-5)  # dot i's own features
    assert data.layouts["pca"].shape == (10 + len(dots), 2)          # classes first, then the dots
    assert data.trade is not None and data.trade.accuracy[-1] >= data.trade.accuracy[0] - 1e-6
    assert data.mosaic is not None and data.mosaic_k == 20 and data.mosaic.dtype == np.uint8
    fr = [f for f, _ in seen]
    assert fr == sorted(fr) and fr[0] == 0.0 and any("recognising" in s for _, s in seen)


def test_explore_views_stop_on_request(trained):
    rec, test = trained
    with pytest.raises(Cancelled):
        explore_views(rec, test.images, test.labels, should_stop=lambda: True)


def test_the_training_images_of_a_class_are_the_ones_training_used():
    """The class view's "training images" are the train part of the split training made (capture groups kept
    whole), and every image when the saved settings no longer describe a split."""
    from classmap_gui.core.explore.overview import training_part

    d = load_digits().subset(np.arange(300))
    groups = np.arange(len(d)) // 3                       # bursts of three frames
    d = type(d)(d.images, d.labels, d.class_names, groups=groups)
    settings = {"features": "pixels", "bank": "ova-ridge", "test_fraction": 0.25, "seed": 4}
    part = training_part(d, settings)
    cfg = TrainConfig.from_dict(settings)
    from classmap_gui.core.train.training import split_parts
    assert part.tolist() == split_parts(d.labels, cfg, d.groups)["train"].tolist() and 0 < len(part) < len(d)
    assert not set(groups[part]) & set(np.delete(groups, part))  # no burst on both sides
    assert training_part(d, {"test_fraction": "half"}).tolist() == list(range(len(d)))
