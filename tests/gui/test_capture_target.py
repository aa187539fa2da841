"""Capture panel: recorded bursts become capture groups (a video file's frames by what changes in it,
tests/gui/test_capture_video.py), the per-class target shows progress, and one click adds the background class."""
import numpy as np
from PySide6.QtCore import Qt

from classmap_gui.core.data.imageset import BACKGROUND_CLASS


def _import(qtbot, win, folder):
    with qtbot.waitSignal(win.runner.finished, timeout=20000):
        win.dataset.import_folder(str(folder))


def _record(qtbot, cap, frames):
    qtbot.mousePress(cap.record_btn, Qt.LeftButton)
    qtbot.waitUntil(lambda: len(cap.burst) >= frames, timeout=10000)
    qtbot.wait(400)  # a hold, not a click
    qtbot.mouseRelease(cap.record_btn, Qt.LeftButton, pos=cap.record_btn.rect().center())
    assert not cap.recording


def test_bursts_become_capture_groups_and_progress_counts_them(qtbot, window, shapes_folder, shapes_video):
    win = window
    _import(qtbot, win, shapes_folder)
    d, cap = win.dataset, win.dataset.capture
    d.add_class("new")
    cap.countdown.setValue(0)
    cap.rate.setValue(30)
    cap.target.clear()
    qtbot.keyClicks(cap.target, "20")
    assert cap.target.value() == 20 and win.project.settings["capture_target"] == 20
    assert cap.progress.format() == "new: 0 / 20" and cap.progress.value() == 0
    cap.choose_video(str(shapes_video))
    assert cap.start_preview()
    qtbot.waitUntil(lambda: cap.latest_crop is not None, timeout=5000)
    _record(qtbot, cap, 4)
    ims = win.project.imageset
    new = np.flatnonzero(ims.labels == 4)
    n1 = len(new)
    bursts = len(np.unique(ims.groups[new]))
    assert n1 >= 4 and bursts >= 1 and not set(ims.groups[new]) & set(ims.groups[ims.labels != 4])
    assert len(np.unique(ims.groups[ims.labels != 4])) == 56                 # imported files: each its own
    assert cap.progress.format() == f"new: {n1} / 20" and cap.progress.value() == min(n1, 20)
    assert f"{bursts} burst(s)" in cap.progress_note.text()
    _record(qtbot, cap, 3)                                                    # same video, same class
    ims = win.project.imageset
    new = np.flatnonzero(ims.labels == 4)
    assert len(new) > n1
    assert cap.progress.value() == min(len(new), 20)
    assert f"{int(len(new) >= 20)} of 5 class(es) at the target" in cap.progress_note.text()
    # recorded into another class, the same video is another group
    d.classes.setCurrentRow(0)
    assert cap.progress.format() == "bars: 14 / 20"
    _record(qtbot, cap, 2)
    ims = win.project.imageset
    g0 = ims.groups[ims.labels == 0][-1]
    assert g0 not in set(ims.groups[ims.labels == 4].tolist())
    cap.stop_preview()
    qtbot.waitUntil(lambda: cap.stream is None, timeout=5000)


def test_background_class_in_one_click(qtbot, window, shapes_folder, tmp_path):
    win = window
    _import(qtbot, win, shapes_folder)
    cap = win.dataset.capture
    qtbot.mouseClick(cap.background_btn, Qt.LeftButton)
    names = win.project.class_names
    assert names[-1] == BACKGROUND_CLASS and win.dataset.current_class() == len(names) - 1
    assert cap.progress.format() == f"{BACKGROUND_CLASS}: 0 / {cap.target.value()}"
    assert "without the object" in cap.last_message
    win.dataset.classes.setCurrentRow(0)
    qtbot.mouseClick(cap.background_btn, Qt.LeftButton)                       # a second click selects it again
    assert win.project.class_names.count(BACKGROUND_CLASS) == 1
    assert win.dataset.current_class() == len(names) - 1


def test_groups_and_target_survive_save_and_reopen(qtbot, window, shapes_folder, tmp_path):
    win = window
    _import(qtbot, win, shapes_folder)
    p = win.project
    p.add_images(0, list(p.imageset.images[:3]), group="new")
    p.settings["capture_target"] = 33
    with qtbot.waitSignal(win.runner.finished, timeout=60000):
        win.save_project(str(tmp_path / "p"))
    groups = p.imageset.groups.copy()
    with qtbot.waitSignal(win.runner.finished, timeout=60000):
        win.open_project(str(tmp_path / "p"))
    assert np.array_equal(win.project.imageset.groups, groups)
    assert win.dataset.capture.target.value() == 33
