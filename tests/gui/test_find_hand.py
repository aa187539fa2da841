"""Find the hand: what it says when it cannot scan, and the boxes it draws."""
from __future__ import annotations

import numpy as np
from PySide6.QtCore import Qt


def test_find_the_hand_says_what_it_needs(qtbot, window, shapes_folder, tmp_path):
    win = window
    win.show_panel("run")
    qtbot.mouseClick(win.run.find_btn, Qt.LeftButton)
    fh = win.run.find_hand
    qtbot.mouseClick(fh.start_btn, Qt.LeftButton)
    assert fh.stream is None and "No trained recogniser" in fh.last_message


def test_a_model_without_hog_features_is_refused(qtbot, window, hand_detector, tmp_path):
    from classmap_gui.core.features.pixels import PixelFeatures
    from classmap_gui.core.recogniser import Recogniser

    win = window
    other = Recogniser(PixelFeatures().fit(np.zeros((2, 64, 64), np.uint8)), hand_detector.classifier,
                       hand_detector.classmap, hand_detector.class_names)
    win.project.reset(None, recogniser=other)
    win.show_panel("run")
    qtbot.mouseClick(win.run.find_btn, Qt.LeftButton)
    fh = win.run.find_hand
    path = tmp_path / "x.avi"
    path.write_bytes(b"")
    win.run.add_source("video", str(path))
    qtbot.mouseClick(fh.start_btn, Qt.LeftButton)
    assert fh.stream is None and "HOG" in fh.last_message


def test_boxes_are_drawn_on_a_copy():
    from types import SimpleNamespace

    from classmap_gui.gui.panels.find_hand import draw_boxes

    rgb = np.zeros((120, 160, 3), np.uint8)
    res = SimpleNamespace(boxes=np.array([[10, 20, 50, 50], [80, 30, 40, 40]], np.float32),
                          found=np.array([True, False]))
    out = draw_boxes(rgb, res)
    assert rgb.max() == 0                                    # the frame itself is untouched
    assert out[20, 30:60].any() and not out[30, 80:120].any()   # the found box drawn, the rejected one not


def test_both_shipped_demo_videos_are_offered_without_a_camera(qtbot, window):
    from classmap_gui.gui.demo import DEMO_VIDEO, FIND_HAND_VIDEO

    labels = [window.run.sources.combo.itemText(i) for i in range(window.run.sources.combo.count())]
    assert any(DEMO_VIDEO in t for t in labels) and any(FIND_HAND_VIDEO in t for t in labels), labels
    assert DEMO_VIDEO in window.run.sources.current_text()  # the hand-pose demo is the one chosen


def test_adding_a_background_class_retrains_through_the_project(qtbot, window, shapes_folder, small_settings,
                                                                monkeypatch):
    """The one-click fix adds the generated clutter as a class and asks the project for a training, which the
    Train panel runs with its settings: the new model knows the background class."""
    from classmap_gui.core.detect import background
    from gui_drive import import_folder, train_by_click

    win = window
    import_folder(qtbot, win, shapes_folder)
    train_by_click(qtbot, win, small_settings)
    first = win.project.recogniser
    rng = np.random.default_rng(0)
    monkeypatch.setattr(background, "background_images",  # a few generated crops: the clutter is not the point here
                        lambda n, size, **_kw: rng.integers(0, 255, (20, *size), dtype=np.uint8))
    asked = []
    win.project.trainingRequested.connect(lambda what: asked.append(what == ""))
    assert win.run.find_hand.add_background()
    qtbot.waitUntil(lambda: win.project.recogniser is not first and not win.runner.busy, timeout=120000)
    assert asked == [True] and "background" in win.project.recogniser.class_names, win.runner.last_error
