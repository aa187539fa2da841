"""The hand-vs-background detector: the window that frames the hand beats its parts and the clutter,
and it travels with the model."""
from __future__ import annotations

import copy

import numpy as np
import pytest

from classmap_gui.core.data.hand_scene import clutter_scene
from classmap_gui.core.detect.dense_hog import DenseHOG
from classmap_gui.core.detect.detector import HandDetector, train_detector, training_scene, window_ious
from classmap_gui.core.detect.pyramid import DEFAULT_SIDES, WindowPyramid
from classmap_gui.core.detect.scanner import Scanner
from classmap_gui.core.errors import ConfigError, ModelFormatError
from classmap_gui.core.recogniser import Recogniser


@pytest.fixture(scope="module")
def detector(hand_detector):
    return train_detector(hand_detector.features, 60, seed=3)


def test_the_window_framing_the_hand_beats_its_parts_and_the_clutter(hand_detector, detector):
    pyr = WindowPyramid(DenseHOG(hand_detector.features), DEFAULT_SIDES)
    above_parts, above_clutter = [], []
    for i in range(12):                                      # scenes the detector never saw (another seed)
        grey, box = training_scene(77, i)
        s = detector.score(pyr.features(grey))
        b = pyr.boxes(*grey.shape)
        o = window_ious(b, box)
        inside = ((b[:, 0] >= box[0] - 2) & (b[:, 1] >= box[1] - 2) & (b[:, 0] + b[:, 2] <= box[0] + box[2] + 2)
                  & (b[:, 1] + b[:, 3] <= box[1] + box[2] + 2) & (o < 0.5))   # parts of the hand
        best = int(np.argmax(o))
        assert o[best] >= 0.5
        if inside.any():                                     # (a small hand has no window inside it)
            above_parts.append(np.mean(s[best] > s[inside]))  # share of the hand's parts the framing window beats
        above_clutter.append(np.mean(s[best] > s[o == 0]))
    # above most of its parts in most scenes (a linear detector alone does not beat every part: docs/detect.md)
    assert len(above_parts) >= 4 and np.mean(np.asarray(above_parts) > 0.5) >= 0.75, above_parts
    assert np.median(above_clutter) >= 0.97, above_clutter
    # and the best-scoring window of a whole frame is often a hit (by chance: ~2 % of the windows are)
    hits = []
    for i in range(12):
        grey, box = training_scene(78, i)
        s = detector.score(pyr.features(grey))
        hits.append(window_ious(pyr.boxes(*grey.shape), box)[int(np.argmax(s))] >= 0.5)
    assert np.mean(hits) >= 0.4, hits


def test_clutter_alone_scores_below_a_hand(hand_detector, detector):
    import cv2
    pyr = WindowPyramid(DenseHOG(hand_detector.features), DEFAULT_SIDES)
    empty = [detector.score(pyr.features(cv2.cvtColor(clutter_scene(np.random.default_rng([5, i]), 240, 320),
                                                      cv2.COLOR_RGB2GRAY))).max() for i in range(6)]
    hand = [detector.score(pyr.features(training_scene(79, i)[0])).max() for i in range(6)]
    assert np.median(hand) > np.median(empty)


def test_the_detector_is_saved_and_loaded_with_the_model_and_both_methods_use_it(hand_detector, detector, tmp_path):
    rec = copy.deepcopy(hand_detector)
    rec.metadata["detection"] = {**rec.metadata.get("detection", {}), "detector": detector.to_json(),
                                 "detector_weight": 0.5}
    rec.save(tmp_path / "m")
    back = Recogniser.load(tmp_path / "m")
    assert "pickle" not in (tmp_path / "m" / "model.json").read_text()
    grey, box = training_scene(80, 0)
    for method in ("classmap", "brute_force"):
        sc = Scanner(back, method)
        assert sc.detector is not None and sc.detector_weight == 0.5
        hand, bg, det, boxes = sc.window_scores(grey, parts="all")
        np.testing.assert_allclose(det, detector.score(sc.pyramid.features(grey)), rtol=1e-4, atol=1e-4)
        score, _ = sc.window_scores(grey)
        np.testing.assert_allclose(score, hand - sc.background_weight * bg + 0.5 * det, rtol=1e-4, atol=1e-4)
        assert Scanner(back, method).scan(grey).evaluations == Scanner(hand_detector, method).scan(grey).evaluations + 1
    off = Scanner(back, "brute_force", detector_weight=0.0)
    score, _ = off.window_scores(grey)
    plain, _ = Scanner(hand_detector, "brute_force", background_weight=off.background_weight).window_scores(grey)
    np.testing.assert_allclose(score, plain, rtol=1e-5, atol=1e-5)


def test_clear_errors(hand_detector):
    with pytest.raises(ModelFormatError):
        HandDetector.from_json({"w": [1.0, 2.0], "b": 0.0}, 1764)
    with pytest.raises(ModelFormatError):
        HandDetector.from_json({"b": 0.0}, 1764)
    with pytest.raises(ConfigError):
        train_detector(hand_detector.features, 0)
