"""The Run panel's capture box (core.detect.capture): a hand filling the box reads as the hand unless the
background class leads by the model's no-hand margin, chosen on demo-style validation videos."""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from classmap_gui.core.data.hand_pose import class_name
from classmap_gui.core.detect.capture import (background_lead, best_margin, capture_context, capture_crop,
                                              choose_capture)
from classmap_gui.core.detect.reading import CropReading

NAMES = [class_name("V", 0, 0, 20), class_name("V", 30, 0, 20), class_name("A", 0, 0, 20), "background"]


def _model(margin: float | None):
    reading = {"temperature": 0.01} if margin is None else {"temperature": 0.01, "no_hand_margin": margin}
    return SimpleNamespace(class_names=NAMES, metadata={"detection": {"reading": reading}})


def test_a_hand_filling_the_box_reads_as_the_hand_unless_the_background_leads_by_the_margin():
    ahead = (np.array([3, 0, 2]), np.array([10.0, 7.0, 1.0]))     # the background 3 ahead of the best hand class
    far = (np.array([3, 0, 2]), np.array([20.0, 7.0, 1.0]))       # 13 ahead: the box is empty
    assert not CropReading(_model(None)).read(*ahead).found       # a model built before the margin: as before
    r = CropReading(_model(5.0)).read(*ahead)
    assert r.found and r.shape == "V"
    assert not CropReading(_model(5.0)).read(*far).found


def test_the_background_lead_is_taken_over_the_candidates_only():
    classes = np.array([[3, 0, 2], [0, 2, 1], [3, 3, 3]])
    scores = np.array([[10.0, 7.0, 1.0], [5.0, 4.0, 3.0], [1.0, 1.0, 1.0]])
    lead = background_lead(NAMES, classes, scores)
    assert lead[0] == 3.0 and lead[1] == -np.inf and lead[2] == np.inf


def test_the_margin_separates_hand_frames_from_empty_scenes_in_the_middle_of_the_gap():
    hand = [np.array([-8.0, -2.0, 0.5, 10.0]), np.array([-5.0, 2.0, 10.0, -np.inf])]
    empty = [np.array([15.0, 30.0, np.inf]), np.array([16.0, 40.0])]
    margin, bal, per = best_margin(hand, empty)
    assert 10.0 < margin < 15.0 and bal == 1.0 and per == [1.0, 1.0]
    # overlapping leads: the margin with the most frames read right on both sides
    margin, bal, _ = best_margin([np.array([0.0, 1.0, 2.0, 20.0])], [np.array([3.0, 4.0, 5.0, 6.0])])
    assert 2.0 < margin < 3.0 and bal == 0.875


def test_the_capture_box_is_the_centred_square_of_the_frame():
    frame = np.zeros((240, 320, 3), np.uint8)
    frame[:, 40:280] = 255
    crop = capture_crop(frame, 1.0)
    assert crop.shape == (240, 240, 3) and crop.min() == 255 and crop.flags["C_CONTIGUOUS"]
    assert capture_crop(frame, 0.5).shape == (120, 120, 3)


def test_the_margin_chosen_on_a_validation_video_reads_it_at_least_as_well_as_none_and_calibrates_sure(hand_detector):
    chosen, records = choose_capture(hand_detector, [201], [0.05, 0.5], [0.1, 0.2])
    assert "capture_context" not in chosen and "capture_context" not in records     # HOG reads no border
    margin, scores = chosen["no_hand_margin"], records["no_hand_margin"]["scores"]
    assert scores["hand_frames"] > 10 * scores["empty_frames"] > 0
    at_zero = np.mean([0.5 * (scores[m]["hand_read_as_hand_at_0"] + scores[m]["empty_read_as_no_hand_at_0"])
                       for m in ("classmap", "brute_force")])
    assert scores["balanced_accuracy"] >= at_zero - 1e-12
    assert np.isfinite(margin) and choose_capture(hand_detector, [], [0.05]) == ({}, {})
    # "sure" from the confidence where the validation readings were right >= 95 % of the time (or never)
    sure, table = chosen["capture_unsure_below"], records["capture_unsure_below"]["scores"]
    assert 0.0 <= sure <= 1.0 and table["readings"] > 0 and chosen["capture_temperature"] in (0.05, 0.5)
    assert set(records["capture_temperature"]["scores"]) == {"0.05", "0.5"}    # each candidate's log loss
    assert sure == 1.0 or table["chosen_share"] > 0


def test_the_capture_box_is_read_with_the_border_the_build_chose_for_a_window_network_only():
    network = SimpleNamespace(context_=0.25)
    chosen = SimpleNamespace(features=network, metadata={"detection": {"reading": {"capture_context": 0.15}}})
    assert capture_context(chosen) == 0.15
    assert capture_context(SimpleNamespace(features=network, metadata={})) == 0.25       # built before the choice
    hog = SimpleNamespace(features=SimpleNamespace(), metadata={"detection": {"reading": {"capture_context": 0.15}}})
    assert capture_context(hog) == 0.0                                                    # no network: no border
