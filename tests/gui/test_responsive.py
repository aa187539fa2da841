"""The UI thread keeps running while work runs beside it: a 10 ms timer on the UI thread (the heartbeat,
:mod:`classmap_gui.bench.heartbeat`) keeps firing while training, streaming, computing the Explore map and
finding the hand, each with a CPU-burning process spinning on every core beside the app (started and killed
by the test, in the test's own session so the scheduler weighs it against the app's threads one for one).

These tests assert behaviour only: the window answered while the work ran (work done on the UI thread lets
no beat through until it ends), however fast the machine. How long the window pauses is a timing: ``classmap
bench responsiveness`` measures it in rounds with the load, against the bound a person notices (100 ms) and
the freeze bound (1 s, :data:`~classmap_gui.bench.responsiveness.FREEZE_MS`).
"""
import time

import pytest

from classmap_gui.bench.heartbeat import Heartbeat
from classmap_gui.bench.heartbeat import busy_cpu as _busy_cpu
from classmap_gui.bench.responsiveness import FREEZE_MS, froze


def beat_during(hb: Heartbeat, start: float, end: float) -> int:
    """How often the heartbeat ``hb`` fired strictly between ``start`` and ``end`` (``time.perf_counter``):
    work on the UI thread lets none through until it ends; work beside the window lets it answer throughout."""
    return sum(start < t < end for t in hb.times)


def answered(hb: Heartbeat, start: float, end: float, what: str) -> None:
    """The window answered (the timer fired, then fired again) while ``what`` ran from ``start`` to ``end``."""
    assert end > start and beat_during(hb, start, end) >= 2, \
        f"the window did not answer while {what} ran ({beat_during(hb, start, end)} beats in {end - start:.2f} s)"


def _ends(signal) -> list:
    """The times (``perf_counter``) ``signal`` fires from now on."""
    out = []
    signal.connect(lambda *_: out.append(time.perf_counter()))
    return out


def _when(flag) -> list:
    """A predicate for ``qtbot.waitUntil`` that records (once) the time ``flag()`` is first true."""
    out = []

    def check():
        if flag():
            out[:] = out or [time.perf_counter()]
            return True
        return False
    return out, check


@pytest.fixture
def busy_cpu():
    """A process spinning on every core for the length of the test (:func:`classmap_gui.bench.heartbeat.busy_cpu`)."""
    with _busy_cpu() as proc:
        yield proc


def test_a_real_freeze_of_the_window_is_caught_and_named(qtbot):
    """The instrument behind ``bench responsiveness``: work on the UI thread (1.2 s of its own CPU time, however
    loaded the machine) lets no beat through while it runs, the bench calls what it saw a freeze, and the check
    names it."""
    from PySide6.QtCore import QTimer

    ran = []

    def freeze():
        # 1.2 s of the UI thread's own CPU time, however loaded the machine (a sleep would be idle, not the app)
        ran.append(time.perf_counter())
        end = time.thread_time() + 1.2
        while time.thread_time() < end:
            pass
        ran.append(time.perf_counter())

    with Heartbeat(bound=FREEZE_MS / 1000) as hb:
        qtbot.wait(300)
        QTimer.singleShot(0, freeze)
        qtbot.waitUntil(lambda: len(hb.times) > 60, timeout=20000)
    summary = hb.summary()
    assert len(ran) == 2 and beat_during(hb, *ran) == 0, "a beat came through while the UI thread was busy"
    assert beat_during(hb, ran[1], float("inf")) > 0, "the heartbeat did not beat again after the freeze"
    assert froze(summary), summary  # the bench's verdict (its bound is the bench's, not this test's)
    with pytest.raises(AssertionError, match="the window froze for"):
        hb.check("a deliberate freeze", FREEZE_MS / 1000)


def test_ui_keeps_beating_while_training_and_streaming(qtbot, window, small_settings, shapes_folder, shapes_video,
                                                        busy_cpu):
    win = window
    with qtbot.waitSignal(win.runner.finished, timeout=20000):
        win.dataset.import_folder(str(shapes_folder))
    # enough work (about a second) for the heartbeat to mean something
    s = dict(small_settings, features_params=dict(small_settings["features_params"], n_centroids=400, stride=1,
                                                  n_patches=40000))
    win.train.apply_settings(s)
    ends = _ends(win.runner.finished)
    with Heartbeat() as hb_train:
        start = time.perf_counter()
        with qtbot.waitSignal(win.runner.finished, timeout=120000):
            win.train.start_training()
    assert win.project.recogniser is not None, win.runner.last_error
    answered(hb_train, start, ends[0], "training")
    win.run.add_source("video", str(shapes_video))
    win.run.full_speed.setChecked(True)
    ended, stream_ended = _when(lambda: win.run.stream is None)
    with Heartbeat() as hb_run:
        start = time.perf_counter()
        win.run.start()
        qtbot.waitUntil(stream_ended, timeout=120000)
    assert win.run.frames_shown > 0
    answered(hb_run, start, ended[0], "streaming")


def test_ui_keeps_beating_while_the_map_is_computed(qtbot, window, busy_cpu):
    from gui_drive import train_hand_pose
    from PySide6.QtCore import Qt

    win = window
    # 300 classes and their held-out images: a t-SNE of about a thousand points, seconds of work
    train_hand_pose(qtbot, win, shapes="V,A,L,B,Y,5,1,S,C,O", orientations=30, images_per_class=6)
    ex = win.explore
    win.show_panel("explore")
    ends = _ends(win.runner.finished)
    with Heartbeat() as hb_views:
        start_views = time.perf_counter()
        with qtbot.waitSignal(win.runner.finished, timeout=60000):
            qtbot.mouseClick(ex.compute_btn, Qt.LeftButton)
        # on an idle machine the views outrun the clock: keep beating for a second, as a person watches the map and
        # curve appear (the map is painted on one turn of the event loop, the curve, centroids and candidates on the next)
        qtbot.waitUntil(lambda: len(hb_views.times) > 100, timeout=20000)
    assert ex.data is not None, win.runner.last_error
    fractions = []
    win.runner.progressed.connect(lambda f, stage, _eta: stage.startswith("t-SNE") and fractions.append(f))
    with Heartbeat() as hb_tsne:
        start_tsne = time.perf_counter()
        with qtbot.waitSignal(win.runner.finished, timeout=300000):
            ex.mode.setCurrentIndex(ex.mode.findData("tsne"))
    assert "tsne" in ex.data.layouts, win.runner.last_error
    assert len(fractions) >= 5 and fractions[-1] == 1.0  # the progress bar moved while it ran
    answered(hb_views, start_views, ends[0], "computing the views (predictions, PCA, accuracy curve)")
    answered(hb_tsne, start_tsne, ends[-1], f"t-SNE of {len(ex.data.layouts['tsne'])} points")

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


def test_ui_keeps_beating_while_finding_the_hand(qtbot, window, hand_detector, detector_poses, tmp_path, busy_cpu):
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
        start = time.perf_counter()
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
    shape = fh.reading.shape.text()                                          # the shape named large, or no hand
    assert shape == "no hand" or shape in {n.partition(" · ")[0] for n in hand_detector.class_names}
    assert not fh.view.pixmap().isNull()
    assert fh.stream.frames_scanned >= fh.frames_shown
    scanning_until = time.perf_counter()
    qtbot.mouseClick(fh.start_btn, Qt.LeftButton)                            # stop
    qtbot.waitUntil(lambda: fh.stream is None, timeout=20000)
    assert "ended" in fh.last_message
    qtbot.mouseClick(win.run.find_btn, Qt.LeftButton)                        # back to recognition
    assert win.run.view.isVisible() and not fh.isVisible()
    answered(hb, start, scanning_until, "finding the hand")
