"""Box voting: the box a scan reports lands closer to the hand than the single best window, on every scale
and shift the window grid cannot hit exactly; it is settable, travels with the model, and bad settings say so."""
from __future__ import annotations

import copy

import numpy as np
import pytest

from classmap_gui.core.data.hand_video import find_hand_frames
from classmap_gui.core.detect.boxes import box_ious, iou, vote_box
from classmap_gui.core.detect.scanner import Scanner
from classmap_gui.core.errors import ModelFormatError


def grid_windows(h=240, w=320, sides=(86, 103, 125), stride_frac=8 / 64):
    """Windows as the pyramid lays them out: every side, one cell (side / 8) apart."""
    out = []
    for s in sides:
        st = s * stride_frac
        ys, xs = np.arange(0, h - s + 1e-6, st), np.arange(0, w - s + 1e-6, st)
        yy, xx = np.meshgrid(ys, xs, indexing="ij")
        out.append(np.stack([xx.ravel(), yy.ravel(), np.full(xx.size, s), np.full(xx.size, s)], 1))
    return np.concatenate(out).astype(np.float32)


def test_voting_moves_the_box_onto_a_hand_between_grid_positions():
    boxes = grid_windows()
    rng = np.random.default_rng(0)
    best_single, voted = [], []
    for _ in range(60):
        s = rng.uniform(86, 125)
        truth = np.array([rng.uniform(0, 320 - s), rng.uniform(0, 240 - s), s, s], np.float32)
        # a detector whose score falls with the misalignment, plus noise: the best window is off by up to a step
        score = box_ious(boxes, truth) + rng.normal(0, 0.03, len(boxes)).astype(np.float32)
        k = int(np.argmax(score))
        best_single.append(iou(boxes[k], truth))
        voted.append(iou(vote_box(boxes, score, k, 0.3, 0.05), truth))
    assert np.mean(voted) > np.mean(best_single) + 0.03, (np.mean(voted), np.mean(best_single))
    assert np.mean(np.asarray(voted) >= 0.9) > np.mean(np.asarray(best_single) >= 0.9) + 0.2


def test_a_vote_ignores_windows_that_do_not_overlap_or_have_no_score():
    boxes = np.array([[0, 0, 100, 100], [10, 0, 100, 100], [200, 100, 100, 100], [0, 10, 100, 100]], np.float32)
    score = np.array([1.0, 1.0, 5.0, -np.inf], np.float32)
    # the far window (IoU 0) and the unscored one (-inf) do not vote: the mean of the first two
    np.testing.assert_allclose(vote_box(boxes, score, 0, 0.3, 0.1), [5, 0, 100, 100], atol=1e-4)
    # a cold temperature: the best window's own box
    score2 = np.array([2.0, 1.0, 0.0, 0.0], np.float32)
    np.testing.assert_allclose(vote_box(boxes, score2, 0, 0.3, 1e-3), boxes[0], atol=1e-3)


def test_the_scanner_reports_the_voted_box_and_finds_the_hand_at_least_as_often(hand_detector, detector_poses):
    frames = [(f, b) for f, lab, b in find_hand_frames(poses=detector_poses, hold=0.4, move=0.2, seed=6)
              if lab is not None]
    for method in ("classmap", "brute_force"):
        plain = Scanner(hand_detector, method, vote_temperature=0.0)
        voting = Scanner(hand_detector, method, vote_overlap=0.3, vote_temperature=0.05)
        ious_plain, ious_vote = [], []
        for f, b in frames:
            truth = (b[0], b[1], b[2], b[2])
            rp, rv = plain.scan(f), voting.scan(f)
            # voting moves boxes, never which windows win nor their scores and classes
            np.testing.assert_array_equal(rp.labels, rv.labels)
            np.testing.assert_allclose(rp.scores, rv.scores)
            score, boxes = voting.window_scores(f)
            k = int(np.flatnonzero(score == score[np.isfinite(score)].max())[0])
            np.testing.assert_allclose(rv.best_box, vote_box(boxes, score, k, 0.3, 0.05), atol=1e-3)
            assert rp.best_box.tolist() in boxes.tolist()       # no voting: a window's own box
            ious_plain.append(iou(rp.best_box, truth))
            ious_vote.append(iou(rv.best_box, truth))
        assert np.mean(np.asarray(ious_vote) >= 0.5) >= np.mean(np.asarray(ious_plain) >= 0.5) - 0.05, method
        assert np.mean(np.asarray(ious_vote) >= 0.5) >= 0.75, method


def test_voting_settings_travel_with_the_model_and_bad_ones_get_a_clear_error(hand_detector, tmp_path):
    from classmap_gui.core.recogniser import Recogniser

    rec = copy.deepcopy(hand_detector)
    rec.metadata["detection"] = {**rec.metadata.get("detection", {}), "vote_overlap": 0.4, "vote_temperature": 0.02}
    rec.save(tmp_path / "m")
    back = Recogniser.load(tmp_path / "m")
    sc = Scanner(back, "classmap")                                # the Find-the-hand panel's scanner
    assert (sc.vote_overlap, sc.vote_temperature) == (0.4, 0.02)
    assert Scanner(back, "classmap", vote_temperature=0).vote_temperature == 0
    for bad in ({"vote_overlap": 0.0}, {"vote_overlap": 1.5}, {"vote_temperature": -1}, {"vote_temperature": "warm"}):
        broken = copy.deepcopy(hand_detector)
        broken.metadata["detection"] = bad
        with pytest.raises(ModelFormatError, match=r"detection\.vote_"):  # a saved setting: checked as one
            Scanner(broken, "brute_force")
