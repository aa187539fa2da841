"""The UI thread keeps running while training and while streaming: a timer heartbeat measures it."""
import time

import numpy as np
from PySide6.QtCore import QTimer


class Heartbeat:
    """Ticks every 10 ms on the UI thread and records the gaps between ticks (seconds)."""

    def __init__(self):
        self.times = []
        self.timer = QTimer()
        self.timer.setInterval(10)
        self.timer.timeout.connect(lambda: self.times.append(time.perf_counter()))

    def __enter__(self):
        self.timer.start()
        return self

    def __exit__(self, *exc):
        self.timer.stop()

    def gaps(self) -> np.ndarray:
        return np.diff(self.times)


def test_ui_keeps_beating_while_training_and_streaming(qtbot, window, small_settings, shapes_folder, shapes_video):
    win = window
    with qtbot.waitSignal(win.runner.finished, timeout=20000):
        win.dataset.import_folder(str(shapes_folder))
    # enough work (about a second) for the heartbeat to mean something
    s = dict(small_settings, features_params=dict(small_settings["features_params"], n_centroids=400, stride=1,
                                                  n_patches=40000))
    win.train.apply_settings(s)
    with Heartbeat() as hb_train:
        with qtbot.waitSignal(win.runner.finished, timeout=120000):
            win.train.start_training()
    assert win.project.recogniser is not None, win.runner.last_error
    win.run.add_source("video", str(shapes_video))
    win.run.full_speed.setChecked(True)
    with Heartbeat() as hb_run:
        win.run.start()
        qtbot.waitUntil(lambda: win.run.stream is None, timeout=30000)
    for name, hb in (("training", hb_train), ("streaming", hb_run)):
        g = hb.gaps()
        print(f"{name}: {len(g)} beats, longest gap {1000 * g.max():.0f} ms, "
              f"99th percentile {1000 * np.percentile(g, 99):.0f} ms")
        assert len(g) > 20  # the timer kept firing while the work ran
        # The design bound is 100 ms. The test machine is shared and loaded, so a rare scheduler hiccup
        # is tolerated: at most 1% of the beats may be late, and none by more than half a second.
        assert np.mean(g > 0.1) <= 0.01 and g.max() < 0.5


def test_ui_keeps_beating_while_tsne_arranges_the_map(qtbot, window):
    from conftest import train_hand_pose

    win = window
    # 300 classes and their held-out images: a t-SNE of about a thousand points, seconds of work
    train_hand_pose(qtbot, win, shapes="V,A,L,B,Y,5,1,S,C,O", orientations=30, images_per_class=6)
    ex = win.explore
    with qtbot.waitSignal(win.runner.finished, timeout=60000):
        ex.compute()
    assert ex.data is not None, win.runner.last_error
    fractions = []
    win.runner.progressed.connect(lambda f, stage, _eta: stage.startswith("t-SNE") and fractions.append(f))
    with Heartbeat() as hb:
        with qtbot.waitSignal(win.runner.finished, timeout=300000):
            ex.mode.setCurrentIndex(ex.mode.findData("tsne"))
    assert "tsne" in ex.data.layouts, win.runner.last_error
    assert len(fractions) >= 5 and fractions[-1] == 1.0  # the progress bar moved while it ran
    g = hb.gaps()
    print(f"t-SNE of {len(ex.data.layouts['tsne'])} points: {len(g)} beats, longest gap {1000 * g.max():.0f} ms, "
          f"99th percentile {1000 * np.percentile(g, 99):.0f} ms")
    assert len(g) > 20
    assert np.mean(g > 0.1) <= 0.01 and g.max() < 0.5  # the same bound as above

def write_hand_video(path, poses, seed=7):
    """A short MJPG video of a hand moving across clutter (the find-the-hand demo's generator)."""
    import cv2

    from classmap_gui.core.data.hand_video import find_hand_frames

    vw = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), 15.0, (320, 240))
    assert vw.isOpened()
    for frame, _, _ in find_hand_frames(poses=poses, hold=0.4, move=0.2, seed=seed):
        vw.write(cv2.cvtColor(frame, cv2.COLOR_RGB2BGR))
    vw.release()
    return path


def test_ui_keeps_beating_while_finding_the_hand(qtbot, window, hand_detector, detector_poses, tmp_path):
    from PySide6.QtCore import Qt

    win = window
    video = write_hand_video(tmp_path / "hand.avi", detector_poses[:2])
    win.project.reset(None, recogniser=hand_detector)
    win.show_panel("run")
    win.run.add_source("video", str(video))
    qtbot.mouseClick(win.run.find_btn, Qt.LeftButton)
    fh = win.run.find_hand
    assert fh.isVisible() and not win.run.view.isVisible()
    with Heartbeat() as hb:
        qtbot.mouseClick(fh.start_btn, Qt.LeftButton)
        qtbot.waitUntil(lambda: fh.frames_shown >= 6, timeout=120000)
        # on an idle machine the scan outruns the clock: beat for at least a quarter second while it scans
        qtbot.waitUntil(lambda: len(hb.times) > 25 or fh.stream is None, timeout=10000)
        qtbot.mouseClick(fh.method_btns["brute_force"], Qt.LeftButton)      # switch live
        # what a person sees: brute force's own frame rate on its label (the worker measures the rate a
        # moment before the window shows that frame, so wait for the label, not the worker's figure)
        qtbot.waitUntil(lambda: fh.stream is not None and fh.frames_shown >= 14
                        and any(ch.isdigit() for ch in fh.fps_labels["brute_force"].text()), timeout=120000)
    # both methods' live frame rates are shown, the best window is boxed and named
    for m in ("classmap", "brute_force"):
        text = fh.fps_labels[m].text()
        assert "frames/s" in text and any(ch.isdigit() for ch in text), text
    r = fh.last_result
    assert r is not None and len(r.boxes) >= 1 and r.windows > 500
    assert fh.winner.text().removeprefix("no hand (closest: ").removesuffix(")") in hand_detector.class_names
    assert not fh.view.pixmap().isNull()
    assert fh.stream.frames_scanned >= fh.frames_shown
    qtbot.mouseClick(fh.start_btn, Qt.LeftButton)                            # stop
    qtbot.waitUntil(lambda: fh.stream is None, timeout=20000)
    assert "ended" in fh.last_message
    qtbot.mouseClick(win.run.find_btn, Qt.LeftButton)                        # back to recognition
    assert win.run.view.isVisible() and not fh.isVisible()
    g = hb.gaps()
    print(f"find the hand: {len(g)} beats, longest gap {1000 * g.max():.0f} ms, "
          f"99th percentile {1000 * np.percentile(g, 99):.0f} ms")
    assert len(g) > 20
    assert np.mean(g > 0.1) <= 0.01 and g.max() < 0.5      # the same bound and tolerance as above
