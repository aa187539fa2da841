"""A video file played as a camera: looping, at a chosen speed, and pausable.

Capture records poses from a video, and a pose in the demo video lasts about a second: the preview
loops (the pose comes round again), plays slower (½× by default in Capture: the pose lasts twice as
long) and pauses on the frame a person wants. The frame source does this, not the stream's thread:
:class:`~.camera.FrameStream` reads it like ``cv2.VideoCapture`` and paces frames by its
:attr:`VideoFile.interval`. Speed and pause are plain attributes the UI thread sets while it plays.
Nothing opens the file until :meth:`VideoFile.open`, which the stream's thread calls: a path that blocks
(a FIFO nobody writes to) can never hold the window, and one that is no regular file is refused.
"""
from __future__ import annotations

import os

import cv2

from ..core.guards.regular_files import regular_fd

#: playback speeds offered for a video file: (factor, label)
SPEEDS = ((1.0, "1× (real time)"), (0.5, "½× (poses last twice as long)"), (0.25, "¼×"))


class VideoFile:
    """``cv2.VideoCapture``'s ``isOpened / read / get / release`` over a video file, plus ``loop`` (start
    again at the end), ``speed`` (1.0 real time, 0.5 half speed) and ``paused`` (``read`` returns the same
    frame again). ``position`` is the index of the last frame read, ``loops`` how often it started over."""

    def __init__(self, path: str, *, loop: bool = False, speed: float = 1.0):
        self.path = str(path)
        self.loop, self.speed, self.paused = loop, speed, False
        self.position, self.loops = -1, 0
        self._cap = None  # opened by open(), on the stream's thread
        self._last = None

    def open(self) -> bool:
        """Open the file (on the stream's thread, never the UI's); OSError naming it when it is not a regular
        file (a FIFO, device or socket would block or never end). True when it opened as a video."""
        check_video_file(self.path)
        self._cap = cv2.VideoCapture(self.path)
        return self._cap.isOpened()

    def __str__(self) -> str:
        return self.path

    def isOpened(self) -> bool:  # noqa: N802 - the cv2.VideoCapture API it stands in for
        """True when the file was opened (:meth:`open`) as a video."""
        return self._cap is not None and self._cap.isOpened()

    def get(self, prop: int) -> float:
        """A property of the video (``cv2.CAP_PROP_*``), as ``cv2.VideoCapture.get``; 0 before it is open."""
        return self._cap.get(prop) if self._cap is not None else 0.0

    @property
    def interval(self) -> float:
        """Seconds between frames at the chosen speed (0: as fast as possible, the file gives no rate)."""
        fps = self.get(cv2.CAP_PROP_FPS)
        return 1.0 / (fps * self.speed) if fps and fps > 0 and self.speed > 0 else 0.0

    def read(self):
        """``(ok, bgr)``: the next frame; the held one while paused; the first again after the last when
        looping. ``ok`` False at the end of a file that does not loop."""
        if self.paused and self._last is not None:
            return True, self._last
        if self._cap is None:
            return False, None
        ok, bgr = self._cap.read()
        if (not ok or bgr is None) and self.loop and self.position >= 0:
            self._cap.set(cv2.CAP_PROP_POS_FRAMES, 0)
            self.position, self.loops = -1, self.loops + 1
            ok, bgr = self._cap.read()
        if ok and bgr is not None:
            self.position += 1
            self._last = bgr
        return ok, bgr

    def release(self) -> None:
        """Close the file."""
        if self._cap is not None:
            self._cap.release()


def check_video_file(path: str) -> None:
    """OSError ``"video file X is a FIFO, not a regular file; ..."`` unless ``path`` is a regular file: checked
    without blocking (:func:`~classmap_gui.core.regular_files.regular_fd`) before OpenCV opens it, which
    would wait for a FIFO's writer forever, or read a device without end."""
    try:
        os.close(regular_fd(path))
    except OSError as exc:
        reason = exc.strerror or str(exc).replace(f"{path} ", "").replace("; refused", "")
        raise OSError(f"could not open video file {path}: {reason}. Choose a video file") from None
