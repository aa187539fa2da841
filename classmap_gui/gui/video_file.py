"""A video file played as a camera: looping, at a chosen speed, and pausable.

Capture records poses from a video, and a pose in the demo video lasts about a second: the preview
loops (the pose comes round again), plays slower (½× by default in Capture: the pose lasts twice as
long) and pauses on the frame a person wants. The frame source does this, not the stream's thread:
:class:`~.camera.FrameStream` reads it like ``cv2.VideoCapture`` and paces frames by its
:attr:`VideoFile.interval`. Speed and pause are plain attributes the UI thread sets while it plays.
"""
from __future__ import annotations

import cv2

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
        self._cap = cv2.VideoCapture(self.path)
        self._last = None

    def __str__(self) -> str:
        return self.path

    def isOpened(self) -> bool:  # noqa: N802 - the cv2.VideoCapture API it stands in for
        """True when the file opened as a video."""
        return self._cap.isOpened()

    def get(self, prop: int) -> float:
        """A property of the video (``cv2.CAP_PROP_*``), as ``cv2.VideoCapture.get``."""
        return self._cap.get(prop)

    @property
    def interval(self) -> float:
        """Seconds between frames at the chosen speed (0: as fast as possible, the file gives no rate)."""
        fps = self._cap.get(cv2.CAP_PROP_FPS)
        return 1.0 / (fps * self.speed) if fps and fps > 0 and self.speed > 0 else 0.0

    def read(self):
        """``(ok, bgr)``: the next frame; the held one while paused; the first again after the last when
        looping. ``ok`` False at the end of a file that does not loop."""
        if self.paused and self._last is not None:
            return True, self._last
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
        self._cap.release()
