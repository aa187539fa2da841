"""Frame sources for capture and live recognition: cameras, video files, image files.

A :class:`FrameStream` reads frames on its own thread, crops the square region of interest,
optionally runs a ``process(crop)`` function there too (recognition), and hands the newest
result to the UI thread. When the UI is still busy with the previous frame the new one is
not queued (the UI never falls behind and never stalls); the counter of frames shown is what
the FPS figure measures.
"""
from __future__ import annotations

import os
import threading
import time
from pathlib import Path
from typing import Any, Callable

import cv2
import numpy as np
from PySide6.QtCore import Signal

from ..core.data.folder import IMAGE_EXTENSIONS
from ..core.detect.capture import square_region
from .threads import UiThread
from .video_file import VideoFile, check_video_file

os.environ.setdefault("OPENCV_LOG_LEVEL", "ERROR")  # missing cameras are expected, not warnings


def list_cameras(max_index: int = 4) -> list[int]:
    """Indices of the cameras that open and deliver a frame (0..max_index-1)."""
    found = []
    for i in range(max_index):
        if not Path(f"/dev/video{i}").exists() and os.name == "posix" and Path("/dev").exists():
            continue
        cap = cv2.VideoCapture(i)
        try:
            if cap.isOpened() and cap.read()[0]:
                found.append(i)
        finally:
            cap.release()
    return found


def image_files(paths: list[str | Path]) -> list[Path]:
    """The image files among ``paths``; a folder contributes its images (recursively, sorted)."""
    out: list[Path] = []
    for p in map(Path, paths):
        if p.is_dir():
            out.extend(sorted(f for f in p.rglob("*") if f.is_file() and f.suffix.lower() in IMAGE_EXTENSIONS))
        elif p.suffix.lower() in IMAGE_EXTENSIONS:
            out.append(p)
    return out


def pace(next_t: float, interval: float, stop: threading.Event) -> float:
    """Real-time playback of a file: wait (or until ``stop`` is set) for the next frame's time,
    ``next_t + interval``, and return it; a frame that came late restarts the clock from now instead of
    rushing to catch up."""
    next_t += interval
    delay = next_t - time.perf_counter()
    if delay > 0:
        stop.wait(delay)
        return next_t
    return time.perf_counter()


class FrameStream(UiThread):
    """Streams frames from ``source``: a camera index (int), a video file (a path, or a :class:`~.video_file.VideoFile`
    that loops, plays slower or pauses), or a list of image files.

    Signals: ``frame(view, crop, result, name)`` — the full RGB frame with the region drawn (flipped left to
    right when ``mirror``: mirroring is for the person looking at the screen), the RGB crop of the region
    as the camera gives it (never mirrored: what a model reads and a project stores), ``process(crop)`` (or None;
    ``process(crop, frame)`` with the whole RGB frame when ``with_frame``) and the image file's path ("" for cameras and
    videos); ``unreadable(path, reason)`` for an image file that cannot be decoded (the stream goes
    on); ``ended(message)`` once, when the stream stops for any reason (end of file, camera lost, stop()).
    The UI never waits for it: :meth:`stop` returns at once and the thread deletes itself when done.
    """

    frame = Signal(object, object, object, str)
    unreadable = Signal(str, str)
    ended = Signal(str)

    def __init__(self, source: int | str | list, *, process: Callable[[np.ndarray], Any] | None = None,
                 mirror: bool = False, region: float = 1.0, realtime: bool = True, image_interval: float = 1.0,
                 with_frame: bool = False, parent=None):
        super().__init__(parent)
        self.source = source
        self.process = process
        self.with_frame = with_frame
        self.mirror = mirror
        self.region = region
        self.realtime = realtime
        self.image_interval = image_interval
        self._stop = self.stop_event
        self._paused = threading.Event()
        self._step = threading.Semaphore(0)
        self._ui_free = threading.Event()
        self._ui_free.set()
        self.frames_read = 0
        self.error: str | None = None

    # -- control (UI thread)
    def stop(self) -> None:
        """Ask the stream's thread to stop (also wakes a paused or stepped stream); returns at once."""
        self.request_stop()
        self._step.release()

    def set_paused(self, paused: bool) -> None:
        """Pause or resume delivering frames (the Run panel's pause button)."""
        (self._paused.set if paused else self._paused.clear)()

    @property
    def paused(self) -> bool:
        """True while the stream is paused."""
        return self._paused.is_set()

    def step(self) -> None:
        """Advance one frame while paused."""
        self._step.release()

    def frame_shown(self) -> None:
        """The UI calls this after drawing a frame; until then newer frames are skipped."""
        self._ui_free.set()

    # -- worker thread
    def _open(self):
        if isinstance(self.source, (list, tuple)):
            files = image_files(list(self.source))
            if not files:
                raise OSError("no image files found in the chosen files or folder")
            return None, files
        if isinstance(self.source, VideoFile):
            cap = self.source
            cap.open()
        elif isinstance(self.source, int):
            cap = cv2.VideoCapture(self.source)
        else:
            check_video_file(str(self.source))  # a FIFO or device: refused, never a read that blocks or never ends
            cap = cv2.VideoCapture(str(self.source))
        if not cap.isOpened():
            cap.release()
            what = f"camera {self.source}" if isinstance(self.source, int) else f"video file {self.source}"
            raise OSError(f"could not open {what}. Check that it is connected / readable and not used by another program.")
        return cap, None

    def run(self) -> None:  # one loop with the stream's states
        """The thread's loop: open the source, read, crop and emit frames at the source's pace until stopped
        or the source ends, then emit ``ended`` with the reason."""
        try:
            cap, files = self._open()
        except OSError as exc:
            self.error = str(exc)
            self.ended.emit(str(exc))
            return
        is_camera = isinstance(self.source, int)
        fps = cap.get(cv2.CAP_PROP_FPS) if cap is not None else 0.0
        interval = (1.0 / fps if fps and fps > 0 else 0.0) if cap is not None else self.image_interval
        next_t = time.perf_counter()
        message = "stopped"
        name = ""
        i = 0
        try:
            while not self._stop.is_set():
                if self._paused.is_set():
                    if not self._step.acquire(timeout=0.05):
                        continue
                    if self._stop.is_set():
                        break
                if cap is not None:
                    ok, bgr = cap.read()
                    if not ok or bgr is None:
                        if is_camera:
                            message = f"camera {self.source} stopped delivering frames; the stream has ended"
                            self.error = message
                        else:
                            message = f"end of video ({self.frames_read} frames)"
                        break
                    rgb = cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB)
                else:
                    if i >= len(files):
                        message = f"shown all {len(files)} images"
                        break
                    name = str(files[i])
                    reason = "not a readable image (empty, corrupt or unsupported format)"
                    try:
                        buf = np.fromfile(name, dtype=np.uint8)
                    except OSError as exc:
                        buf, reason = np.zeros(0, np.uint8), exc.strerror or "cannot be read"
                    bgr = cv2.imdecode(buf, cv2.IMREAD_COLOR) if buf.size else None
                    i += 1
                    if bgr is None:
                        self.unreadable.emit(name, reason)
                        continue
                    rgb = cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB)
                self.frames_read += 1
                x, y, s = square_region(rgb.shape, self.region)
                crop = np.ascontiguousarray(rgb[y:y + s, x:x + s])
                if not is_camera and not self.realtime:
                    # a file at full speed: every frame is recognised, the UI sets the pace
                    while not self._ui_free.wait(0.05) and not self._stop.is_set():
                        pass
                if self._ui_free.is_set() or self._paused.is_set():
                    result = None if self.process is None else \
                        self.process(crop, rgb) if self.with_frame else self.process(crop)
                    view = rgb.copy() if self.region < 1.0 or is_camera else rgb
                    if self.region < 1.0:
                        cv2.rectangle(view, (x, y), (x + s - 1, y + s - 1), (255, 200, 0), max(1, s // 100))
                    if self.mirror:  # for the person watching: the crop (read, stored) stays as the camera gives it
                        view = cv2.flip(view, 1)
                    self._ui_free.clear()
                    self.frame.emit(view, crop, result, name)
                if isinstance(cap, VideoFile):  # its speed may change while it plays
                    interval = cap.interval
                if self.realtime and interval and not is_camera and not self._paused.is_set():
                    next_t = pace(next_t, interval, self._stop)
        except Exception:  # noqa: BLE001 - a failing source or model ends the stream, not the app
            import logging
            import traceback
            logging.getLogger("classmap_gui").error("stream failed\n%s", traceback.format_exc())
            from .errorlog import where
            message = f"the stream stopped because of an internal error. {where()}"
            self.error = message
        finally:
            if cap is not None:
                cap.release()
        self.ended.emit(message)
