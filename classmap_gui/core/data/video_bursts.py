"""Capture bursts of a video file, split by what changes in it.

A camera burst is one press of the record button. A video file is different: a person records a class
from it in one or more holds, and every frame of the file could be near-identical to its neighbours
or not. Kept as one burst per file, a class recorded from a video had one burst, so training could
not hold any of it out and reported a flattering accuracy. Here the frames are grouped by content: a
frame joins the burst whose first frame it resembles (a small grey thumbnail, mean absolute
difference below :data:`CHANGE`), else it starts a new burst. Frames a burst holds are near
duplicates, so training keeps each burst on one side of its split; frames in different bursts differ
as much as a moved hand or a moved view does. A frame identical to one already recorded (the same
frame of the file, met again when the video loops or stands paused) is a :data:`REPEAT` and is not
recorded twice.

:data:`CHANGE` was set on the shipped demo video (a hand holding each pose 0.8 s in front of a
slowly panning scene, 15 frames/s): neighbouring frames differ by 4.6 grey levels (median), frames
half a second apart by 21. At 12 a pose held still stays one burst and the frames where the hand moves
to the next pose each start one: 20 frames around a pose make 4 to 12 bursts.
"""
from __future__ import annotations

import cv2
import numpy as np

#: thumbnail side: coarse enough that sensor noise averages out, fine enough to see a hand move
THUMB = 16
#: mean absolute grey-level difference (0-255) of thumbnails from which a frame starts a new burst
CHANGE = 12.0
#: ... and below which it is the same frame again (MJPG decodes a frame identically every time)
REPEAT = 0.1


def thumbnail(image: np.ndarray) -> np.ndarray:
    """``(THUMB * THUMB,)`` float32 grey thumbnail of an ``(h, w)`` or ``(h, w, 3)`` uint8 image."""
    grey = cv2.cvtColor(image, cv2.COLOR_RGB2GRAY) if image.ndim == 3 else image
    return cv2.resize(grey, (THUMB, THUMB), interpolation=cv2.INTER_AREA).astype(np.float32).ravel()


class ChangeBursts:
    """Assigns the frames recorded from one video into one class to bursts by content (see the module).

    ``assign(image)`` returns ``(burst, repeat)``: the burst index (0, 1, ...) and whether the frame was
    recorded before (then it should not be kept again).
    """

    def __init__(self, change: float = CHANGE, repeat: float = REPEAT):
        self.change, self.repeat = float(change), float(repeat)
        self._firsts = np.zeros((0, THUMB * THUMB), np.float32)   # first frame of every burst
        self._seen = np.zeros((0, THUMB * THUMB), np.float32)     # every frame kept
        self._seen_burst = np.zeros(0, np.int64)

    @property
    def n_bursts(self) -> int:
        """Bursts started so far."""
        return len(self._firsts)

    def assign(self, image: np.ndarray) -> tuple[int, bool]:
        """The burst of ``image`` (uint8, as captured) and whether it repeats a frame already kept."""
        t = thumbnail(image)
        if len(self._seen):
            d = np.abs(self._seen - t).mean(axis=1)
            k = int(np.argmin(d))
            if d[k] <= self.repeat:
                return int(self._seen_burst[k]), True
        d = np.abs(self._firsts - t).mean(axis=1) if len(self._firsts) else np.zeros(0, np.float32)
        if len(d) and d.min() < self.change:
            burst = int(np.argmin(d))
        else:
            burst = len(self._firsts)
            self._firsts = np.vstack([self._firsts, t[None]])
        self._seen = np.vstack([self._seen, t[None]])
        self._seen_burst = np.append(self._seen_burst, burst)
        return burst, False
