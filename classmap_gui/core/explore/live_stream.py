"""What is streaming live now, headless: the Run panel publishes each recognised frame here and any view
that follows the stream (Explore's live map) subscribes, so neither panel reads the other's widgets.

Evented with psygnal, Qt-free: ``started(source)`` when a stream begins (a camera index, a video path, a
list of image files or a folder), ``frame(crop, result, name, frames_read)`` for each frame shown and
``ended(message)`` when it stops. Signals are delivered on the publisher's thread (the app publishes on
its UI thread). A new stream is a new ``session``, so a subscriber that caught up late can tell that the
frame in hand belongs to another stream than the one it set up for.
"""
from __future__ import annotations

from typing import Any

import numpy as np
from psygnal import Signal


class LiveStream:
    """The live stream's state and its events: ``source`` (of the newest stream; None before any),
    ``session`` (counts the streams started), ``frames`` (frames published in this session), ``running``."""

    started = Signal(object)                    # source
    frame = Signal(object, object, str, int)    # crop (h, w[, 3]) uint8, its result, file name or "", frames read
    ended = Signal(str)                         # why: "stopped", "end of video", ...

    def __init__(self):
        self.source: Any = None
        self.session = 0
        self.frames = 0
        self.running = False

    def start(self, source: Any) -> int:
        """A new stream of ``source`` begins; returns its session number."""
        self.source, self.running, self.frames = source, True, 0
        self.session += 1
        self.started.emit(source)
        return self.session

    def publish(self, crop: np.ndarray, result: Any, name: str = "", frames_read: int = 0) -> None:
        """One frame shown: its region ``crop``, what the recogniser made of it (None when not recognised),
        the file it came from ("" for video and cameras) and how many frames the source has given so far."""
        if not self.running:
            return
        self.frames += 1
        self.frame.emit(crop, result, name, int(frames_read))

    def end(self, message: str = "stopped") -> None:
        """The stream stopped (``message`` says why); nothing is published until the next :meth:`start`."""
        if not self.running:
            return
        self.running = False
        self.ended.emit(message)
