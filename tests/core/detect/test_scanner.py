"""Finding the hand: ClassMap and brute force agree where they must, the hand is found, clutter is not a hand."""
from __future__ import annotations

import numpy as np
import pytest

from classmap_gui.core.data.hand_scene import clutter_scene
from classmap_gui.core.data.hand_video import find_hand_frames
from classmap_gui.core.data.imageset import BACKGROUND_CLASS
from classmap_gui.core.detect.boxes import iou
from classmap_gui.core.detect.scanner import Scanner
from classmap_gui.core.errors import ConfigError, NotFittedError
from classmap_gui.core.recogniser import Recogniser


@pytest.fixture(scope="module")
def frames(detector_poses):
    return list(find_hand_frames(poses=detector_poses, hold=0.4, move=0.2, seed=5))


def truth(box):
    return (box[0], box[1], box[2], box[2])


def test_the_hand_is_found_in_most_frames(hand_detector, frames):
    # frames holding one of the model's 6 poses (in between, the tiny model knows no class like the hand)
    assert BACKGROUND_CLASS in hand_detector.class_names
    held = [(f, box) for f, lab, box in frames if lab is not None]
    for method in ("classmap", "brute_force"):
        sc = Scanner(hand_detector, method)
        hits = [iou(sc.scan(f).best_box, truth(box)) >= 0.5 for f, box in held]
        assert np.mean(hits) >= 0.75, (method, np.mean(hits))


def test_classmap_with_every_candidate_gives_the_brute_force_boxes(hand_detector, frames):
    # ClassMap's refine over all classes (best response) is brute force: the same windows must win
    cm = hand_detector.classmap
    p_before = cm.p
    cm.set_params(p=hand_detector.n_classes)
    try:
        a, b = Scanner(hand_detector, "classmap"), Scanner(hand_detector, "brute_force")
        for f, _, _ in frames[::4]:
            ra, rb = a.scan(f), b.scan(f)
            np.testing.assert_allclose(ra.boxes, rb.boxes, atol=1e-3)   # voted boxes: scores equal to 1e-4
            np.testing.assert_array_equal(ra.labels, rb.labels)
            np.testing.assert_allclose(ra.scores, rb.scores, rtol=1e-4, atol=1e-4)
            assert ra.evaluations < rb.evaluations + 1 + len(cm.reference_) + 1
    finally:
        cm.set_params(p=p_before)


def test_classmap_evaluates_fewer_classifiers_per_window(hand_detector, frames):
    r = Scanner(hand_detector, "classmap").scan(frames[0][0])
    assert r.windows > 500                                   # >= 3 scales, one cell apart
    assert r.evaluations < Scanner(hand_detector, "brute_force").scan(frames[0][0]).evaluations + 4
    assert r.hand_found and 0 <= r.label < hand_detector.n_classes
    assert hand_detector.class_names[r.label] != BACKGROUND_CLASS
    assert BACKGROUND_CLASS not in [hand_detector.class_names[c] for c in r.top_classes]


def test_an_empty_scene_scores_below_the_hand(hand_detector, frames):
    sc = Scanner(hand_detector, "brute_force")
    hand = np.median([sc.scan(f).scores[0] for f, _, _ in frames[::3]])
    empty = [sc.scan(clutter_scene(np.random.default_rng([9, i]), 240, 320)) for i in range(4)]
    assert max(r.scores[0] for r in empty) < hand


def test_a_calibrated_hand_found_says_no_hand_on_clutter_and_hand_on_hands(hand_detector, frames):
    # "hand found" from a threshold calibrated on other frames and other clutter scenes (as the hand model's
    # choice does on validation videos), then checked on frames and scenes it never saw
    from classmap_gui.core.detect.choice import found_threshold

    sc = Scanner(hand_detector, "brute_force")
    pos = np.array([sc.scan(f).scores[0] for f, _, _ in frames[::4]])
    neg = np.array([sc.scan(clutter_scene(np.random.default_rng([19, i]), 240, 320)).scores[0] for i in range(8)])
    t, _ = found_threshold(pos, neg)
    calibrated = Scanner(hand_detector, "brute_force", found_threshold=t)
    empty = [calibrated.scan(clutter_scene(np.random.default_rng([9, i]), 240, 320)) for i in range(6)]
    hands = [calibrated.scan(f) for f, _, _ in frames[2::4]]
    assert np.mean([r.hand_found for r in empty]) <= 0.34
    assert np.mean([r.hand_found for r in hands]) >= 0.75


def test_clear_errors(hand_detector):
    with pytest.raises(ConfigError, match="scan method"):
        Scanner(hand_detector, "fastest")
    with pytest.raises(NotFittedError):
        Scanner(None)
    no_cm = Recogniser(hand_detector.features, hand_detector.classifier, None, hand_detector.class_names)
    with pytest.raises(ConfigError, match="no ClassMap"):
        Scanner(no_cm, "classmap")
    Scanner(no_cm, "brute_force")                            # brute force needs none
    from classmap_gui.core.features.pixels import PixelFeatures

    other = Recogniser(PixelFeatures(), hand_detector.classifier, None, hand_detector.class_names)
    with pytest.raises(ConfigError, match="HOG"):
        Scanner(other, "brute_force")


def test_find_hand_video_is_deterministic_and_scales_with_the_frame(detector_poses):
    a = list(find_hand_frames(poses=detector_poses[:2], seed=2))
    b = list(find_hand_frames(poses=detector_poses[:2], seed=2))
    big = list(find_hand_frames((480, 640), poses=detector_poses[:2], seed=2))
    assert len(a) == len(big) and all(np.array_equal(x[0], y[0]) for x, y in zip(a, b))
    for (f, lab, box), (_, lab2, box2) in zip(a, big):
        assert lab == lab2 and np.allclose(np.array(box2), 2 * np.array(box))
        x, y, s = box
        assert -1 <= x and x + s <= 321 and -1 <= y and y + s <= 241 and 0.3 * 240 < s < 0.6 * 240
    assert {lab for _, lab, _ in a if lab} == set(detector_poses[:2])


def test_a_refine_that_stops_early_still_scores_every_window(hand_detector, frames):
    # refine v3 leaves the candidates after its stop unevaluated (NaN): the window keeps the one it chose
    import copy

    v3 = copy.copy(hand_detector.classmap)                       # the fitted embedding, refine v3
    v3.__dict__ = {k: v for k, v in hand_detector.classmap.__dict__.items() if k != "_cache"}
    v3.refine, v3.threshold_ = "v3", -1e9                       # stop at the first candidate
    rec = Recogniser(hand_detector.features, hand_detector.classifier, v3, hand_detector.class_names)
    sc = Scanner(rec, "classmap")
    X = sc.pyramid.features(sc._grey(frames[0][0])).copy()
    pred = v3.predict_result(X, bank=hand_detector.classifier)
    assert np.isnan(pred.top_scores).any()                     # the situation under test
    score, best, _, _ = sc._classify(X)
    first = pred.top_classes[:, 0]
    ok = first != sc.background                                  # (a window that only met background: -inf)
    assert not np.isnan(score).any() and np.isfinite(score[ok]).all()
    np.testing.assert_array_equal(best[ok], first[ok])          # ClassMap's own choice wins each window


def test_the_model_chosen_scales_and_weight_are_the_panels_defaults(hand_detector, frames):
    # bench scan / the screenshot script store their validation choice in the model; a scanner built
    # with no arguments (the Find-the-hand panel's) scans those scales with that weight
    import copy

    rec = copy.copy(hand_detector)
    rec.metadata = {**(hand_detector.metadata or {}), "detection": {"sides": [0.36, 0.43, 0.52], "background_weight": 0.25}}
    sc = Scanner(rec, "brute_force")
    assert sc.pyramid.sides == (0.36, 0.43, 0.52) and sc.background_weight == 0.25
    full = Scanner(hand_detector, "brute_force", sides=(0.30, 0.36, 0.43, 0.52, 0.62))
    idx = full.pyramid.side_index(240, 320)
    assert sc.scan(frames[0][0]).windows == int(np.isin(idx, [1, 2, 3]).sum()) < full.scan(frames[0][0]).windows
    np.testing.assert_allclose(full.pyramid.boxes(240, 320)[np.isin(idx, [1, 2, 3])], sc.pyramid.boxes(240, 320))


def test_the_background_response_is_the_background_classifiers_output(hand_detector, frames):
    sc = Scanner(hand_detector, "classmap")
    X = sc.pyramid.features(sc._grey(frames[2][0])).copy()
    hand, bg, _ = sc.window_scores(frames[2][0], parts=True)
    np.testing.assert_allclose(bg, X @ sc.W[sc.background] + sc.b[sc.background], rtol=1e-5, atol=1e-5)


def test_the_cascade_reads_only_the_windows_its_detector_ranks_best():
    """A model whose features are not HOG (the crop network) reads with its network only the ``candidates``
    windows the HOG hand detector scores highest (issue 46: reading every window passed this file's tests,
    and costs ~20x the network's work per frame)."""
    from classmap_gui.core.data.hand_scene import random_hand_scene
    from classmap_gui.core.detect.pose_model import build_hand_model

    rec, _ = build_hand_model({"shapes": 3, "orientations": 2, "images_per_class": 12, "background": 60,
                               "bootstrap_rounds": 0, "detector_scenes": 12, "d": 3, "p_sweep": "2,3",
                               "features": "network", "candidates": 7})
    grey, _ = random_hand_scene(np.random.default_rng(3), 240, 320)
    for method in ("classmap", "brute_force"):
        sc = Scanner(rec, method)
        r = sc.scan(grey)
        det = sc._detector_response(sc.pyramid.features(grey))     # the detector on every window's HOG
        assert r.windows == 7 < len(det)
        assert sorted(sc.window_index.tolist()) == sorted(np.argsort(-det, kind="stable")[:7].tolist())
