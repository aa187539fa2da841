"""How sure the hand model is, as a person reads it (issue 39, majors 3 and 4): *sure* in green, *unsure*
in amber below the model's validation threshold (``metadata["detection"]["reading"]["unsure_below"]``),
*no hand* in grey when the background wins; and Find the hand's big name is its own table's first row."""
import copy

import cv2
import numpy as np
import pytest
from PySide6.QtCore import Qt


def _with_threshold(rec, threshold):
    """A copy of the session's detector whose metadata carries ``threshold`` (the fixture stays as it is)."""
    out = copy.copy(rec)
    out.metadata = copy.deepcopy(getattr(rec, "metadata", None) or {})
    out.metadata.setdefault("detection", {}).setdefault("reading", {})["unsure_below"] = threshold
    return out


@pytest.fixture
def poses_then_clutter(tmp_path, hand_detector):
    """A 128x128 video: training-like images of two of the detector's classes, then background clutter."""
    from classmap_gui.core.data.hand_pose import generate_hand_pose
    from classmap_gui.core.data.hand_style import CLEAN
    from classmap_gui.core.detect.background import background_images

    size = tuple(hand_detector.image_size)
    hands = generate_hand_pose(shapes="5,V", orientations=2, images_per_class=6, size=size, style=CLEAN, seed=5)
    frames = list(hands.images) + list(background_images(12, size, seed=9))
    path = tmp_path / "poses.avi"
    vw = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), 15.0, (128, 128))
    for f in frames:
        g = cv2.resize(np.asarray(f), (128, 128), interpolation=cv2.INTER_LINEAR)
        vw.write(cv2.cvtColor(g, cv2.COLOR_GRAY2BGR) if g.ndim == 2 else cv2.cvtColor(g, cv2.COLOR_RGB2BGR))
    vw.release()
    return path, len(frames)


def _names_shown(run) -> int:
    """How many labels of the Run panel's right column name the reading's shape (a class name starting with it)."""
    from PySide6.QtWidgets import QLabel

    shape = run.reading.shape.text()
    return sum(1 for lbl in run.results.findChildren(QLabel)
               if lbl.isVisibleTo(run.results) and lbl.text().partition(" · ")[0] == shape)


def _run_through(qtbot, win, video, n):
    """Start the Run panel on ``video`` at full speed and collect what the reading view said per frame."""
    run = win.run
    win.show_panel("run")
    run.add_source("video", str(video))
    if not run.full_speed.isChecked():
        qtbot.mouseClick(run.full_speed, Qt.LeftButton)
    seen = []
    run.project.live.frame.connect(lambda *_: seen.append((run.reading.reading, run.reading.state, run.reading.colour(),
                                                        run.reading.text(), run.reading.bar.value(),
                                                        run.winner.text(), _names_shown(run))))
    qtbot.mouseClick(run.start_btn, Qt.LeftButton)
    qtbot.waitUntil(lambda: run.stream is None, timeout=60000)           # the file ends
    assert len(seen) == n, run.last_message
    return seen


def test_the_reading_says_sure_unsure_or_no_hand_by_the_models_threshold(qtbot, window, hand_detector,
                                                                         poses_then_clutter):
    from classmap_gui.gui.hand_reading import STATE_COLOURS

    video, n = poses_then_clutter
    win = window
    probe = _with_threshold(hand_detector, 0.5)
    win.project.reset(None, recogniser=probe)
    seen = _run_through(qtbot, win, video, n)
    found = sorted(r.confidence for r, *_ in seen if r is not None and r.found)
    assert found and any(s == "no hand" for _, s, *_ in seen[-12:])       # clutter: "no hand", said so
    # a threshold between the readings' confidences: the same frames, some sure, some unsure
    thr = found[len(found) // 2]
    assert found[0] < thr, found
    win.project.reset(None, recogniser=_with_threshold(hand_detector, thr))
    seen = _run_through(qtbot, win, video, n)
    states = {s for _, s, *_ in seen}
    assert "unsure" in states and "no hand" in states, states
    for reading, state, colour, text, bar, winner, names in seen:
        assert colour == STATE_COLOURS[state]
        if state != "no hand":
            assert winner == reading.shape and names == 1                  # one shape name on screen
        if state == "no hand":
            assert "no hand" in text and bar == 0
        elif state == "unsure":
            assert reading.confidence < thr and "unsure" in text and f"maybe {reading.shape}" in text
            assert bar == round(100 * reading.confidence)
        else:
            assert reading.confidence >= thr and "sure" in text and "unsure" not in text
    # the winner's big name is never drawn in the sure green for a guess
    assert win.run.winner.styleSheet().count(STATE_COLOURS[seen[-1][1]]) == 1


def test_a_model_without_a_threshold_uses_the_documented_default(hand_detector):
    from classmap_gui.gui.hand_reading import UNSURE_BELOW, unsure_below

    assert unsure_below(hand_detector) == UNSURE_BELOW == 0.5
    assert unsure_below(_with_threshold(hand_detector, 0.3)) == 0.3
    assert unsure_below(_with_threshold(hand_detector, "junk")) == UNSURE_BELOW
    # the Run panel's capture box has a threshold of its own (its readings are not the scan's); older models: the one
    both = _with_threshold(hand_detector, 0.3)
    assert unsure_below(both, capture=True) == 0.3
    both.metadata["detection"]["reading"]["capture_unsure_below"] = 0.9
    assert unsure_below(both, capture=True) == 0.9 and unsure_below(both) == 0.3


def test_find_the_hand_names_what_its_table_ranks_first(qtbot, window, hand_detector, detector_poses, tmp_path):
    from test_responsive import write_hand_video

    win = window
    video = write_hand_video(tmp_path / "hand.avi", detector_poses[:3], seed=3)
    win.project.reset(None, recogniser=hand_detector)
    win.show_panel("run")
    win.run.add_source("video", str(video))
    qtbot.mouseClick(win.run.find_btn, Qt.LeftButton)
    fh = win.run.find_hand
    checked = []

    def agree():
        big = fh.reading.shape.text()
        if fh.reading.reading is not None and fh.reading.reading.found and fh.cands.rowCount():
            first = fh.cands.item(0, 0).toolTip() or fh.cands.item(0, 0).text()
            assert first.partition(" · ")[0] == big, (big, first)
            values = [float(fh.cands.item(r, 1).text().rstrip(" %")) for r in range(fh.cands.rowCount())]
            shape_rows = [v for r, v in enumerate(values)
                          if (fh.cands.item(r, 0).toolTip() or fh.cands.item(r, 0).text()).startswith(big + " ·")]
            assert values[0] == max(shape_rows)                          # the best of its shape, first
            checked.append(big)
    errors = []

    def after_each_frame(*_):                                            # runs after the view drew the frame
        try:
            agree()
        except AssertionError as exc:
            errors.append(exc)
    qtbot.mouseClick(fh.start_btn, Qt.LeftButton)
    fh.stream.frame.connect(after_each_frame)
    qtbot.waitUntil(lambda: fh.frames_shown >= 12 or fh.stream is None, timeout=120000)
    qtbot.mouseClick(fh.start_btn, Qt.LeftButton)
    assert not errors, errors[0]
    assert checked, "no frame with a hand was read"
    # another model: nothing of the last one's reading stays on screen
    win.project.reset(None, recogniser=_with_threshold(hand_detector, 0.5))
    assert fh.reading.shape.text() == "–" and fh.cands.rowCount() == 0
