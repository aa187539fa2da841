"""The background class: generated clutter and near misses, merged into a set under BACKGROUND_CLASS."""
from __future__ import annotations

import numpy as np
import pytest

from classmap_gui.core.data.imageset import BACKGROUND_CLASS, ImageSet
from classmap_gui.core.detect.background import background_images, hard_negatives, with_background
from classmap_gui.core.errors import DataError


def test_background_crops_are_deterministic_and_varied():
    a = background_images(60, (32, 32), seed=4)
    b = background_images(60, (32, 32), seed=4)
    c = background_images(60, (32, 32), seed=5)
    assert a.shape == (60, 32, 32) and a.dtype == np.uint8
    assert np.array_equal(a, b) and not np.array_equal(a, c)
    assert len({im.tobytes() for im in a}) == 60 and a.std() > 10     # no blank or repeated crops


def test_with_background_adds_or_extends_the_class():
    ims = ImageSet(np.zeros((4, 8, 8), np.uint8), np.array([0, 0, 1, 1]), ["a", "b"], name="t")
    bg = np.full((3, 8, 8), 7, np.uint8)
    out = with_background(ims, bg)
    assert out.class_names == ["a", "b", BACKGROUND_CLASS] and out.counts().tolist() == [2, 2, 3]
    again = with_background(out, bg[:1])
    assert again.class_names == out.class_names and again.counts().tolist() == [2, 2, 4]
    with pytest.raises(DataError, match="background images"):
        with_background(ims, np.zeros((2, 9, 9), np.uint8))


def test_an_encoded_set_takes_the_background_as_feature_rows():
    """The hand model's build joins its background crops as feature rows: the same labels and names as joining the
    images, the rows after the set's own."""
    from classmap_gui.core.features.pixels import PixelFeatures
    from classmap_gui.core.train.encode import encode, encode_set

    ims = ImageSet(np.arange(256, dtype=np.uint8).reshape(4, 8, 8), np.array([0, 0, 1, 1]), ["a", "b"], name="t")
    bg = np.full((3, 8, 8), 7, np.uint8)
    pixels = PixelFeatures().fit(ims.images)
    out, joined = with_background(encode_set(ims, pixels), encode(pixels, bg)), with_background(ims, bg)
    assert out.class_names == joined.class_names and np.array_equal(out.labels, joined.labels)
    assert np.array_equal(out.X, pixels.transform(joined.images)) and out.features is pixels
    with pytest.raises(DataError, match="background features"):
        with_background(out, np.zeros((2, 5), np.float32))


def test_hard_negatives_are_windows_that_miss_the_hand(hand_detector):
    crops = hard_negatives(hand_detector, 12, seed=3, per_scene=4)
    assert crops.shape == (12, *hand_detector.image_size) and crops.std() > 5
    # the detector scored them as hands: they are where its background class needs more examples
    from classmap_gui.core.detect.scanner import Scanner

    sc = Scanner(hand_detector, "brute_force")
    X = hand_detector.transform(crops)
    S = X @ sc.W.T + sc.b
    bg = S[:, sc.background].copy()
    S[:, sc.background] = -np.inf
    clutter = background_images(24, seed=8, near_miss=0.0)
    Sc = hand_detector.transform(clutter) @ sc.W.T + sc.b
    bgc = Sc[:, sc.background].copy()
    Sc[:, sc.background] = -np.inf
    assert np.median(S.max(1) - bg) > np.median(Sc.max(1) - bgc)   # harder than plain clutter


def test_bench_scan_refuses_bad_frame_sizes():
    from classmap_gui.bench.scan import run
    from classmap_gui.core.errors import ConfigError

    with pytest.raises(ConfigError, match="WxH"):
        run(frames="320by240")
    with pytest.raises(ConfigError, match="too small"):
        run(frames="64x48")
