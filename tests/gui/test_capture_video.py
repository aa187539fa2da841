"""Capture from a video file as a person does it: the preview loops, plays at the chosen speed and pauses
on a pose; holding ● plays a paused video while it records; the frames make bursts where the picture
changes and a frame met again (the video looped) is not recorded twice; the record button stays where
it is whatever the texts around it say."""
import cv2
import numpy as np
import pytest
from PySide6.QtCore import Qt
from gui_drive import import_folder as _import

SEGMENTS, FRAMES = 3, 6  # three still scenes of six frames (a blob that dims a little), 15 frames/s


@pytest.fixture
def scenes_video(tmp_path):
    path = tmp_path / "scenes.avi"
    vw = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), 15.0, (96, 96))
    for k in range(SEGMENTS):
        for j in range(FRAMES):
            img = np.full((96, 96, 3), 40, np.uint8)
            cv2.circle(img, (28 + 20 * k, 48), 18, (230 - 4 * j,) * 3, -1)
            vw.write(img)
    vw.release()
    return path


def _select(qtbot, d, row):
    item = d.classes.item(row)
    d.classes.scrollToItem(item)
    qtbot.mouseClick(d.classes.viewport(), Qt.LeftButton, pos=d.classes.visualItemRect(item).center())
    assert d.current_class() == row


def _type(qtbot, widget, text):
    widget.setFocus()
    qtbot.keyClick(widget, Qt.Key_A, Qt.ControlModifier)
    qtbot.keyClicks(widget, text)


def test_video_loops_and_records_bursts_by_change_without_repeats(qtbot, window, shapes_folder, scenes_video):
    win = window
    _import(qtbot, win, shapes_folder)
    d, cap = win.dataset, win.dataset.capture
    d.add_class("blob")
    cap.choose_video(str(scenes_video))
    assert cap.countdown.text() == "none" and "no count-down" in cap.last_message
    assert cap.playback.speed.currentText().startswith("½×")  # slower than real time by default
    cap.playback.speed.setFocus()
    qtbot.keyClick(cap.playback.speed, Qt.Key_Up)
    assert cap.playback.speed.currentText().startswith("1×")
    _type(qtbot, cap.rate, "30")
    qtbot.mouseClick(cap.start_btn, Qt.LeftButton)
    video = cap.stream.source
    qtbot.waitUntil(lambda: video.loops >= 1, timeout=10000)  # past its end (1.2 s) ...
    assert cap.stream is not None and "ended" not in cap.last_message  # ... the preview goes on
    _select(qtbot, d, 4)
    qtbot.mousePress(cap.record_btn, Qt.LeftButton)
    start = video.loops
    qtbot.waitUntil(lambda: video.loops >= start + 2, timeout=15000)  # held through a whole pass and more
    qtbot.mouseRelease(cap.record_btn, Qt.LeftButton, pos=cap.record_btn.rect().center())
    ims = win.project.imageset
    mine = np.flatnonzero(ims.labels == 4)
    assert 0 < len(mine) <= SEGMENTS * FRAMES                      # no frame twice though the video looped
    assert "skipped, recorded before" in cap.last_message
    assert len(np.unique(ims.groups[mine])) == SEGMENTS            # one burst per scene
    assert f"{SEGMENTS} burst(s)" in cap.progress_note.text()
    qtbot.mouseClick(cap.start_btn, Qt.LeftButton)
    qtbot.waitUntil(lambda: cap.stream is None, timeout=5000)


def test_pause_holds_the_frame_and_recording_plays_it(qtbot, window, shapes_folder, scenes_video):
    win = window
    _import(qtbot, win, shapes_folder)
    d, cap = win.dataset, win.dataset.capture
    cap.choose_video(str(scenes_video))
    assert not cap.playback.pause_btn.isEnabled()  # nothing plays yet: nothing to pause
    qtbot.mouseClick(cap.start_btn, Qt.LeftButton)
    qtbot.waitUntil(lambda: cap.latest_crop is not None, timeout=5000)
    qtbot.mouseClick(cap.playback.pause_btn, Qt.LeftButton)
    qtbot.wait(200)
    held = cap.latest_crop.copy()
    qtbot.wait(400)
    assert np.array_equal(cap.latest_crop, held)  # paused: the same picture
    _select(qtbot, d, 1)
    before = win.project.imageset.counts()[1]
    qtbot.mousePress(cap.record_btn, Qt.LeftButton)
    qtbot.waitUntil(lambda: len(cap.burst) >= 4, timeout=10000)  # it plays while ● is held
    qtbot.mouseRelease(cap.record_btn, Qt.LeftButton, pos=cap.record_btn.rect().center())
    assert win.project.imageset.counts()[1] >= before + 4
    assert cap.playback.pause_btn.isChecked()
    qtbot.wait(200)
    held = cap.latest_crop.copy()
    qtbot.wait(400)
    assert np.array_equal(cap.latest_crop, held)  # let go: paused again
    qtbot.mouseClick(cap.start_btn, Qt.LeftButton)
    qtbot.waitUntil(lambda: cap.stream is None, timeout=5000)
    assert not cap.playback.pause_btn.isEnabled()


def test_record_button_keeps_its_place_whatever_the_texts_say(qtbot, window, shapes_folder, scenes_video):
    win = window
    win.resize(1280, 800)
    _import(qtbot, win, shapes_folder)
    d, cap = win.dataset, win.dataset.capture
    d.add_class("a hand shape with a very long name that says which way the palm faces, where the fingers "
                "point, how far the wrist turns and leans, and a little more besides")
    _select(qtbot, d, 0)
    qtbot.wait(50)
    place = cap.record_btn.mapTo(win, cap.record_btn.rect().topLeft())
    _select(qtbot, d, 4)  # the long name: the progress note and bar say more
    qtbot.mouseClick(cap.start_btn, Qt.LeftButton)  # the status changes
    qtbot.waitUntil(lambda: cap.latest_crop is not None, timeout=5000)
    qtbot.mousePress(cap.record_btn, Qt.LeftButton)
    qtbot.waitUntil(lambda: len(cap.burst) >= 2, timeout=10000)
    qtbot.wait(400)  # a hold, not a click
    assert cap.record_btn.mapTo(win, cap.record_btn.rect().topLeft()) == place
    qtbot.mouseRelease(cap.record_btn, Qt.LeftButton, pos=cap.record_btn.rect().center())
    qtbot.wait(50)
    assert "Recorded" in cap.last_message
    assert cap.record_btn.mapTo(win, cap.record_btn.rect().topLeft()) == place
    assert cap.progress.toolTip().startswith("a hand shape with a very long name")
    fm = cap.progress.fontMetrics()
    assert fm.horizontalAdvance(cap.progress.format()) < cap.progress.width()  # one line inside the bar
    qtbot.mouseClick(cap.start_btn, Qt.LeftButton)
    qtbot.waitUntil(lambda: cap.stream is None, timeout=5000)


@pytest.mark.timeout(120)
def test_a_fifo_chosen_as_the_video_is_refused_and_the_window_stays_usable(qtbot, window, shapes_folder, tmp_path,
                                                                            scenes_video):
    """Issue 49 item 5: a FIFO nobody writes to, chosen as the video, froze the whole window at Start preview
    (OpenCV waited for a writer on the UI thread). Now the stream's thread refuses it with a sentence."""
    import os

    win = window
    _import(qtbot, win, shapes_folder)
    d, cap = win.dataset, win.dataset.capture
    fifo = tmp_path / "camera.avi"
    os.mkfifo(fifo)
    cap.choose_video(str(fifo))
    qtbot.mouseClick(cap.start_btn, Qt.LeftButton)
    qtbot.waitUntil(lambda: "FIFO" in cap.last_message, timeout=20000)
    assert str(fifo) in cap.last_message and "Choose a video file" in cap.last_message
    assert cap.stream is None and not cap.start_btn.isChecked() and cap.sources.isEnabled()
    _select(qtbot, d, 1)  # the window answers the person
    cap.choose_video(str(scenes_video))  # and a real video still plays afterwards
    qtbot.mouseClick(cap.start_btn, Qt.LeftButton)
    qtbot.waitUntil(lambda: cap.latest_crop is not None, timeout=20000)
    qtbot.mouseClick(cap.start_btn, Qt.LeftButton)
    qtbot.waitUntil(lambda: cap.stream is None, timeout=10000)
