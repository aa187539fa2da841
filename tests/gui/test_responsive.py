"""The UI thread keeps running while work runs beside it: a 10 ms timer on the UI thread measures the
gaps between its beats while training, streaming, computing the Explore map and finding the hand, each with
a CPU-burning process spinning on every core beside the app (started and killed by the test, in the test's
own session so the scheduler weighs it against the app's threads one for one).

The bound is what a person notices: no pause over 100 ms caused by the app. In a gap between beats the UI
thread runs (the app's work on it), waits for a CPU (the machine's load), or is blocked: on the GIL another
thread holds, or idle until the next beat. Linux schedstat gives each thread's time on a CPU and waiting for
one; the app caused the UI thread's running and, of its blocked time, at most as much as its other threads
ran (a GIL holder that is itself waiting for a CPU, or a process where nothing runs, is the load, not the app).
That part must stay under 100 ms at every beat; the raw gaps are printed beside it.
"""
import ctypes
import gc
import os
import platform
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pytest
from PySide6.QtCore import QTimer

from classmap_gui.gui.app import settle_heap

BOUND = 0.1  # seconds: the longest pause of the window a person does not notice


# libc through ctypes.PyDLL: calls that keep the GIL. Reading a thread's schedstat takes microseconds; through
# Python's os/open (each call releases and retakes the GIL) a beat would queue for the GIL some 30 times behind a
# busy worker (the switch interval, 5 ms, each time): the heartbeat itself would make the gaps it measures.
_libc = ctypes.PyDLL(None, use_errno=True)
_libc.open.argtypes = [ctypes.c_char_p, ctypes.c_int]
_libc.read.restype = ctypes.c_ssize_t
_libc.read.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_size_t]
_libc.syscall.restype = ctypes.c_long
_SYS_GETDENTS64 = {"x86_64": 217, "aarch64": 61}.get(platform.machine())
_BUF = ctypes.create_string_buffer(1 << 16)  # the UI thread's own: only the beat reads through it


def _read(path: bytes) -> bytes:
    fd = _libc.open(path, os.O_RDONLY)
    if fd < 0:
        return b""
    try:
        n = _libc.read(fd, _BUF, len(_BUF))
        return ctypes.string_at(_BUF, max(n, 0))
    finally:
        _libc.close(fd)


def _threads() -> list[int]:
    """The ids of this process's threads (getdents64 on /proc/self/task, the GIL kept)."""
    if _SYS_GETDENTS64 is None:  # another machine: listed through Python (the GIL let go once a beat)
        return [int(t) for t in os.listdir("/proc/self/task")] if os.path.isdir("/proc/self/task") else []
    fd = _libc.open(b"/proc/self/task", os.O_RDONLY | os.O_DIRECTORY)
    if fd < 0:
        return []
    try:
        n = _libc.syscall(_SYS_GETDENTS64, fd, _BUF, len(_BUF))
        raw, out, off = ctypes.string_at(_BUF, max(n, 0)), [], 0
        while off < len(raw):
            reclen = int.from_bytes(raw[off + 16:off + 18], "little")
            name = raw[off + 19:off + reclen].split(b"\0", 1)[0]
            if name.isdigit():
                out.append(int(name))
            off += reclen
        return out
    finally:
        _libc.close(fd)


def _schedstats(tids=None) -> dict[int, tuple[int, int]]:
    """``{thread id: (ns on a CPU, ns runnable but waiting for one)}`` (Linux schedstat; empty elsewhere)."""
    out = {}
    for tid in (_threads() if tids is None else tids):
        fields = _read(b"/proc/self/task/%d/schedstat" % tid).split()
        if len(fields) >= 2:
            out[tid] = (int(fields[0]), int(fields[1]))
    return out


def _where(frame) -> list[tuple[str, int, str]]:
    """A thread's stack as (file, line, function), outermost first: no source lines read (the watcher holds
    the GIL while it walks, so it must be quick)."""
    out = []
    while frame is not None:
        out.append((frame.f_code.co_filename, frame.f_lineno, frame.f_code.co_name))
        frame = frame.f_back
    return out[::-1]


class Heartbeat:
    """Ticks every 10 ms on the UI thread and records the gaps between ticks (seconds), each thread's time
    on a CPU and waiting for one (Linux schedstat, read without letting go of the GIL) and, when a beat is
    late, every thread's stack (taken by a watcher thread), so a failure says what froze the window.

    The watcher samples with the GIL (``sys._current_frames``): a thread that holds the GIL in one long call
    shows just past it. faulthandler's GIL-free watchdog is not used: re-armed at every beat, each beat waits
    for the previous watchdog thread to get a CPU and end (the heartbeat made gaps of its own, up to 150 ms
    measured under load); left repeating, it reads thread states as threads come and go and crashed the test.
    """

    def __init__(self):
        self.times: list[float] = []
        self.waits: list[dict[int, int]] = []  # every thread's time waiting for a CPU at each beat, ns
        self.ran: list[int] = []               # the UI thread's time on a CPU at each beat, ns
        self.runs: list[dict[int, int]] = []   # every thread's time on a CPU at each beat, ns
        self.stacks: dict[int, dict] = {}      # gap i (after beat i) -> every thread's stack 60 ms into it
        self._ui = threading.get_native_id()
        self._done = threading.Event()
        self._watcher = threading.Thread(target=self._watch, name="heartbeat-watcher", daemon=True)
        self.timer = QTimer()
        self.timer.setInterval(10)
        self.timer.timeout.connect(self._beat)

    def _beat(self) -> None:
        self.times.append(time.perf_counter())
        stats = _schedstats()
        self.waits.append({tid: wait for tid, (_run, wait) in stats.items()})
        self.runs.append({tid: run for tid, (run, _wait) in stats.items()})
        self.ran.append(stats.get(self._ui, (0, 0))[0])

    def _watch(self) -> None:
        while not self._done.wait(0.02):
            i = len(self.times) - 1
            if i >= 0 and i not in self.stacks and time.perf_counter() - self.times[i] > 0.6 * BOUND:
                self.stacks[i] = {tid: _where(frame) for tid, frame in sys._current_frames().items()}

    def __enter__(self):
        # as the app at start-up (app.settle_heap): what is alive now is frozen out of the cyclic collector. This
        # process also holds the objects of the tests before (some 340 000 objects, a full collection over them
        # 200 ms), which the app never has; released on exit
        settle_heap()
        self.timer.start()
        self._watcher.start()
        return self

    def __exit__(self, *exc):
        self.timer.stop()
        self._done.set()
        self._watcher.join()
        gc.unfreeze()

    def _per_thread(self, stat: list[dict[int, int]], i: int) -> dict:
        """``{thread: ms}`` of a schedstat figure in gap ``i`` (threads that ran or waited), largest first."""
        w0, w1 = stat[i], stat[i + 1]
        names = {t: _read(b"/proc/self/task/%d/comm" % t).strip().decode() or "?" for t in w1}
        return {("UI" if t == self._ui else f"{names[t]}:{t}"): round(1e-6 * (w1[t] - w0[t]))
                for t in sorted(w1.keys() & w0.keys(), key=lambda t: w0[t] - w1[t]) if w1[t] - w0[t] > 5e5}

    def gaps(self) -> np.ndarray:
        return np.diff(self.times)

    def check(self, name: str) -> None:
        """The timer kept firing while the work ran, and the app never held the window up for long."""
        g = self.gaps()
        assert len(g) > 20
        # what the app did in each gap: the UI thread ran (its own work), or it was blocked while another of the
        # app's threads ran (holding the GIL, at most as long as they ran together). The UI thread's own wait for
        # a CPU, and its blocked time while no other thread of the app ran (the GIL holder itself waiting for a
        # CPU, or nobody running at all) are the machine's load, not the app's doing.
        ran_ui = np.array([1e-9 * (r1 - r0) for r0, r1 in zip(self.ran, self.ran[1:])])
        wait_ui = np.array([1e-9 * (w1.get(self._ui, 0) - w0.get(self._ui, 0))
                            for w0, w1 in zip(self.waits, self.waits[1:])])
        others = np.array([1e-9 * sum(r1[t] - r0[t] for t in r1.keys() & r0.keys() if t != self._ui)
                           for r0, r1 in zip(self.runs, self.runs[1:])])
        blocked = np.maximum(0.0, g - ran_ui - wait_ui)
        held = np.minimum(g, ran_ui + np.minimum(blocked, others))
        i = int(held.argmax())
        where = "\n".join(f"Thread {tid}:" + "".join(f"\n  {f}:{n} in {fn}" for f, n, fn in stack if "classmap_gui" in f)
                          for tid, stack in self.stacks.get(i, {}).items()) or "(no stack taken)"
        print(f"{name}: {len(g)} beats, longest gap {1000 * g.max():.0f} ms, 99th percentile "
              f"{1000 * np.percentile(g, 99):.0f} ms, load {os.getloadavg()[0]:.1f}; the longest the app caused "
              f"{1000 * held[i]:.0f} ms (of {1000 * g[i]:.0f} ms: the UI thread ran {1000 * ran_ui[i]:.0f} ms, waited "
              f"{1000 * wait_ui[i]:.0f} ms for a CPU, was blocked {1000 * blocked[i]:.0f} ms while the others ran "
              f"{1000 * others[i]:.0f} ms; "
              f"each thread's wait, ms: {self._per_thread(self.waits, i)}, time on a CPU: "
              f"{self._per_thread(self.runs, i)})"
              f"\n{where}")
        assert held.max() <= BOUND, \
            f"{name}: the window froze for {1000 * g[i]:.0f} ms; every thread 60 ms into it:\n{where}"


@pytest.fixture
def busy_cpu():
    """A process spinning on every core (it forks one spinner per core) for the length of the test; its own
    process group (to end it and its spinners), the test's session (scheduled against the app's threads)."""
    spin = "import os\nfor _ in range(os.cpu_count() - 1):\n    if os.fork() == 0: break\nwhile True: pass\n"
    proc = subprocess.Popen([sys.executable, "-c", spin], process_group=0)
    time.sleep(0.3)  # the spinners are running before the work starts
    yield proc
    os.killpg(proc.pid, signal.SIGKILL)  # the spinners are the group this test started
    proc.wait()


def test_ui_keeps_beating_while_training_and_streaming(qtbot, window, small_settings, shapes_folder, shapes_video,
                                                        busy_cpu):
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
        qtbot.waitUntil(lambda: win.run.stream is None, timeout=120000)
    hb_train.check("training")
    hb_run.check("streaming")


def test_ui_keeps_beating_while_the_map_is_computed(qtbot, window, busy_cpu):
    from conftest import train_hand_pose
    from PySide6.QtCore import Qt

    win = window
    # 300 classes and their held-out images: a t-SNE of about a thousand points, seconds of work
    train_hand_pose(qtbot, win, shapes="V,A,L,B,Y,5,1,S,C,O", orientations=30, images_per_class=6)
    ex = win.explore
    win.show_panel("explore")
    with Heartbeat() as hb_views:
        with qtbot.waitSignal(win.runner.finished, timeout=60000):
            qtbot.mouseClick(ex.compute_btn, Qt.LeftButton)
        # on an idle machine the views outrun the clock: keep beating for a second, as a person watches the map and
        # curve appear (the map is painted on one turn of the event loop, the curve, centroids and candidates on the next)
        qtbot.waitUntil(lambda: len(hb_views.times) > 100, timeout=20000)
    assert ex.data is not None, win.runner.last_error
    fractions = []
    win.runner.progressed.connect(lambda f, stage, _eta: stage.startswith("t-SNE") and fractions.append(f))
    with Heartbeat() as hb_tsne:
        with qtbot.waitSignal(win.runner.finished, timeout=300000):
            ex.mode.setCurrentIndex(ex.mode.findData("tsne"))
    assert "tsne" in ex.data.layouts, win.runner.last_error
    assert len(fractions) >= 5 and fractions[-1] == 1.0  # the progress bar moved while it ran
    hb_views.check("computing the views (predictions, PCA, accuracy curve)")
    hb_tsne.check(f"t-SNE of {len(ex.data.layouts['tsne'])} points")

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
    qtbot.mouseClick(fh.start_btn, Qt.LeftButton)                            # stop
    qtbot.waitUntil(lambda: fh.stream is None, timeout=20000)
    assert "ended" in fh.last_message
    qtbot.mouseClick(win.run.find_btn, Qt.LeftButton)                        # back to recognition
    assert win.run.view.isVisible() and not fh.isVisible()
    hb.check("find the hand")
