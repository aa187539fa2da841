"""Frames recorded in the Capture panel, imported again as a folder, come back in the bursts they were
recorded in (the capture groups training splits by)."""
from pathlib import Path

import numpy as np
from PySide6.QtCore import Qt


def _record(qtbot, cap, frames):
    qtbot.mousePress(cap.record_btn, Qt.LeftButton)
    qtbot.waitUntil(lambda: len(cap.burst) >= frames, timeout=10000)
    qtbot.wait(400)  # a hold, not a click
    qtbot.mouseRelease(cap.record_btn, Qt.LeftButton, pos=cap.record_btn.rect().center())
    assert not cap.recording


def _partition(paths, groups):
    by = {}
    for p, g in zip(paths, groups.tolist()):
        by.setdefault(g, set()).add(Path(p).name)
    return sorted(sorted(s) for s in by.values())


def test_recorded_bursts_come_back_when_the_capture_folder_is_imported(qtbot, window, shapes_folder, shapes_video):
    win = window
    with qtbot.waitSignal(win.runner.finished, timeout=20000):
        win.dataset.import_folder(str(shapes_folder))
    d, cap = win.dataset, win.dataset.capture
    cap.countdown.setValue(0)
    cap.rate.setValue(30)
    cap.choose_video(str(shapes_video))
    assert cap.start_preview()
    qtbot.waitUntil(lambda: cap.latest_crop is not None, timeout=5000)
    d.classes.setCurrentRow(0)
    _record(qtbot, cap, 3)
    _record(qtbot, cap, 2)
    d.classes.setCurrentRow(2)
    _record(qtbot, cap, 3)
    cap.stop_preview()
    qtbot.waitUntil(lambda: cap.stream is None, timeout=5000)
    ims = win.project.imageset
    captured = np.flatnonzero(ims.group_ids() >= 56)  # the 56 imported files are groups 0..55
    before = _partition([ims.sources[i] for i in captured], ims.groups[captured])
    assert len(before) >= 2  # a video's frames are split into bursts by what changes in it
    root = win.project.capture_dir(0).parent
    with qtbot.waitSignal(win.runner.finished, timeout=20000):
        win.dataset.import_folder(str(root))
    back = win.project.imageset
    assert len(back) == len(captured) and back.groups is not None
    assert _partition(back.sources, back.groups) == before
