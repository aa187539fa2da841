"""Dataset panel: import, class edits, image edits, capture from a video file as the camera."""
from PySide6.QtCore import Qt

from classmap_gui.gui.camera import FrameStream


def _import(qtbot, win, folder):
    with qtbot.waitSignal(win.runner.finished, timeout=20000):
        assert win.dataset.import_folder(str(folder))


def test_import_folder_lists_classes_with_counts(qtbot, window, shapes_folder):
    _import(qtbot, window, shapes_folder)
    d = window.dataset
    assert [d.classes.item(i).text() for i in range(d.classes.count())] == \
        ["  14 · bars", "  14 · columns", "  14 · cross", "  14 · ring"]
    assert "56 images, 4 classes" in d.summary.text()
    assert "1 file(s) skipped" in window.statusBar().currentMessage()
    # the import report lists every skipped file with its reason, in a window that stays open
    rep = d.report_dialog
    assert rep is not None and rep.isVisible()
    assert "broken.png" in rep.text.toPlainText() and "header is damaged" in rep.text.toPlainText()
    d.classes.setCurrentRow(2)
    assert d.grid.count() == 14 and "cross" in d.grid_label.text()
    # freshly imported, nothing edited: nothing to lose, so no "*" and no "discard?" question
    assert not window.project.dirty and "*" not in window.windowTitle()
    d.add_class("extra")
    assert window.project.dirty and "*" in window.windowTitle()


def test_import_in_colour_keeps_colour(qtbot, window, shapes_folder):
    with qtbot.waitSignal(window.runner.finished, timeout=20000):
        assert window.dataset.import_folder(str(shapes_folder), size=(24, 24), colour=True)
    ims = window.project.imageset
    assert ims.is_color and ims.image_size == (24, 24)
    assert "24×24 colour" in window.dataset.summary.text()


def test_class_and_image_edits(qtbot, window, shapes_folder):
    _import(qtbot, window, shapes_folder)
    d, p = window.dataset, window.project
    assert d.add_class("fist") == 4
    assert d.classes.count() == 5 and d.classes.currentRow() == 4
    d.classes.setCurrentRow(0)
    d.rename_class("stripes")
    assert p.class_names[0] == "stripes"
    assert d.add_class("stripes") is None  # duplicate refused, and said why
    assert d.classes.count() == 5 and "already a class named" in d.last_error
    d.classes.setCurrentRow(1)
    d.grid.item(0).setSelected(True)
    d.grid.item(1).setSelected(True)
    d.move_selected(4)
    assert p.imageset.counts().tolist() == [14, 12, 14, 14, 2]
    d.classes.setCurrentRow(4)
    d.grid.item(0).setSelected(True)
    d.delete_selected()
    assert p.imageset.counts().tolist() == [14, 12, 14, 14, 1]
    d.classes.setCurrentRow(3)
    d.delete_class(confirm=False)
    assert p.class_names == ["stripes", "columns", "cross", "fist"]
    assert p.imageset.counts().tolist() == [14, 12, 14, 1]


def test_capture_burst_from_video_saves_every_frame(qtbot, window, shapes_folder, shapes_video, tmp_path):
    _import(qtbot, window, shapes_folder)
    d = window.dataset
    d.add_class("new")
    cap = d.capture
    cap.countdown.setValue(0)
    cap.rate.setValue(30)
    cap.choose_video(str(shapes_video))
    assert cap.start_preview()
    qtbot.waitUntil(lambda: cap.latest_crop is not None, timeout=5000)
    qtbot.mousePress(cap.record_btn, Qt.LeftButton)
    qtbot.waitUntil(lambda: len(cap.burst) >= 5, timeout=10000)
    files = sorted((tmp_path / "captures" / "new").glob("*.png"))
    assert len(files) == len(cap.burst)  # written as they were taken, before the burst ends
    qtbot.wait(400)  # a hold, not a click (a click would keep recording until the next one)
    qtbot.mouseRelease(cap.record_btn, Qt.LeftButton, pos=cap.record_btn.rect().center())
    n = window.project.imageset.counts()[4]
    assert n >= 5 and n == len(list((tmp_path / "captures" / "new").glob("*.png")))
    assert window.project.imageset.images.shape[1:] == (64, 64)  # brought to the set's size
    assert "Recorded" in cap.last_message
    cap.stop_preview()
    qtbot.waitUntil(lambda: cap.stream is None, timeout=5000)


def test_countdown_then_release_records_nothing(qtbot, window, shapes_folder, shapes_video):
    _import(qtbot, window, shapes_folder)
    cap = window.dataset.capture
    cap.choose_video(str(shapes_video))
    assert cap.countdown.text() == "none"  # a video file needs no count-down; a person may still set one
    cap.countdown.setValue(3)
    cap.start_preview()
    qtbot.mousePress(cap.record_btn, Qt.LeftButton)
    assert "in 3" in cap.last_message
    qtbot.wait(500)  # held past a click, released during the count-down
    qtbot.mouseRelease(cap.record_btn, Qt.LeftButton)
    assert "cancelled" in cap.last_message and not cap.recording
    assert window.project.imageset.counts().tolist() == [14, 14, 14, 14]
    cap.stop_preview()


def test_click_starts_and_next_click_stops_and_a_limit_stops_anyway(qtbot, window, shapes_folder, shapes_video,
                                                                    tmp_path):
    _import(qtbot, window, shapes_folder)
    cap = window.dataset.capture
    cap.countdown.setValue(0)
    cap.rate.setValue(30)
    cap.choose_video(str(shapes_video))
    assert cap.start_preview()
    qtbot.waitUntil(lambda: cap.latest_crop is not None, timeout=5000)
    qtbot.mouseClick(cap.record_btn, Qt.LeftButton)  # a click: recording goes on after the button is up
    assert cap.recording and "click to stop" in cap.record_btn.text()
    qtbot.waitUntil(lambda: len(cap.burst) >= 3, timeout=10000)
    qtbot.mouseClick(cap.record_btn, Qt.LeftButton)
    assert not cap.recording and "Recorded" in cap.last_message
    n = window.project.imageset.counts()[0]
    cap.max_seconds.setValue(1)
    qtbot.mouseClick(cap.record_btn, Qt.LeftButton)
    qtbot.waitUntil(lambda: not cap.recording, timeout=5000)  # nobody clicked: the limit stopped it
    assert "maximum of 1 s" in cap.last_message
    assert window.project.imageset.counts()[0] > n
    cap.stop_preview()


def test_no_camera_is_a_clear_message_and_the_demo_video_is_listed(qtbot, window, shapes_folder, monkeypatch):
    from classmap_gui.gui import camera

    _import(qtbot, window, shapes_folder)
    monkeypatch.setattr(camera, "list_cameras", lambda: [])
    cap = window.dataset.capture
    assert cap.refresh_cameras() == []
    assert "No camera found" in cap.last_message
    assert "demo" in cap.sources.current_text().lower()  # the shipped video: no camera needed
    cap.sources.combo.clear()
    assert not cap.start_preview()
    assert "no camera was found" in cap.last_message.lower()
    cap.choose_video("/tmp/some-video.avi")
    assert "no camera" not in cap.last_message.lower()  # the "No source" note goes once a video is chosen
    assert "no count-down" in cap.last_message  # and what differs for a video file is said


def test_camera_that_cannot_open_or_stops_ends_cleanly(qtbot, shapes_video):
    s = FrameStream(97)  # no such camera
    with qtbot.waitSignal(s.ended, timeout=5000) as sig:
        s.start()
    assert "could not open camera 97" in sig.args[0]
    s.wait()
    got = []
    s2 = FrameStream(str(shapes_video), realtime=False)
    s2.frame.connect(lambda v, c, r: (got.append(c.shape), s2.frame_shown()))
    with qtbot.waitSignal(s2.ended, timeout=10000) as sig2:
        s2.start()
    s2.wait()
    assert "end of video" in sig2.args[0] and len(got) == 60


def test_a_stream_with_frame_hands_process_the_whole_frame_beside_its_crop(qtbot, shapes_video):
    """``with_frame``: process(crop, frame) sees the whole frame (Add a gesture's scan looks for the hand there)."""
    got = []
    s = FrameStream(str(shapes_video), realtime=False, region=0.5, with_frame=True,
                    process=lambda crop, frame: (crop.shape, frame.shape))
    s.frame.connect(lambda v, c, r, name: (got.append(r), s.frame_shown()))
    with qtbot.waitSignal(s.ended, timeout=10000):
        s.start()
    s.wait()
    assert got and set(got) == {((48, 48, 3), (96, 96, 3))}
