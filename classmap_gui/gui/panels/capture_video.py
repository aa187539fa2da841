"""Capture from a video file: the playback row (pause, speed) and the bursts the recorded frames make.

A video file is not a camera: its poses pass by at the file's pace, the count-down a camera needs (to
get a hand into place) only wastes them, and all of its frames used to count as one burst. The
playback row pauses the video on a pose and slows it down (:class:`~..video_file.VideoFile` loops,
so a pose comes round again); :class:`VideoBursts` splits the recorded frames into bursts by what
changes in the video (:mod:`~...core.data.video_bursts`) and skips a frame recorded before.
"""
from __future__ import annotations

import numpy as np
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QPushButton, QWidget

from ...core.data.capture_names import new_burst_token
from ...core.data.editing import NEW_GROUP
from ...core.data.video_bursts import ChangeBursts
from ..video_file import SPEEDS

#: count-down for a video file: none, the video does not need time to get a hand into place
VIDEO_COUNTDOWN = 0
#: default playback speed in Capture: half speed, so a pose of the demo video lasts long enough to record
CAPTURE_SPEED = 0.5


class PlaybackRow(QWidget):
    """Pause and speed of the video being previewed (enabled for a video file only). ``video`` is the
    :class:`~..video_file.VideoFile` playing, or None."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.video = None
        self.pause_btn = QPushButton("Pause video")
        self.pause_btn.setCheckable(True)
        self.pause_btn.setToolTip("Stop the video on the pose you want; holding ● plays it while you record "
                                  "and it pauses again when you let go")
        self.pause_btn.toggled.connect(lambda on: setattr(self.video, "paused", on) if self.video else None)
        self.speed = QComboBox()
        for factor, label in SPEEDS:
            self.speed.addItem(label, factor)
        self.speed.setCurrentIndex(self.speed.findData(CAPTURE_SPEED))
        self.speed.setToolTip("Playback speed of the video: slower gives more time to record a pose")
        self.speed.currentIndexChanged.connect(
            lambda _i: setattr(self.video, "speed", self.speed.currentData()) if self.video else None)
        lay = QHBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.pause_btn)
        lay.addWidget(self.speed)
        lay.addStretch(1)
        self.set_video(None, False)

    def set_video(self, video, is_file: bool) -> None:
        """A new preview (``video`` playing, or None when stopped); ``is_file``: the chosen source is a file."""
        self.video = video
        if video is not None:
            video.speed, video.paused = self.speed.currentData(), False
        self.pause_btn.setChecked(False)
        self.pause_btn.setEnabled(video is not None)
        self.speed.setEnabled(is_file)

    def play_while(self, recording: bool) -> None:
        """Recording started (True) or ended (False): a paused video plays while it records."""
        if self.video is not None and self.pause_btn.isChecked():
            self.video.paused = not recording


class VideoBursts:
    """The burst, file-name token and capture group of every frame recorded from a video file, per
    (video, class): bursts by change (:class:`~...core.data.video_bursts.ChangeBursts`), groups that stay
    the same while their images are in the project (a burst recorded in two holds is one group)."""

    def __init__(self):
        self._splits: dict[tuple[str, int], ChangeBursts] = {}
        self._tokens: dict[tuple[str, int, int], str] = {}
        self._groups: dict[tuple[str, int, int], int] = {}

    def start(self, imageset, video: str, cls: int) -> None:
        """A recording into ``cls`` begins: forget what was recorded before when none of it is left (a new
        project, or the images were deleted), so those frames can be recorded again."""
        key = (video, cls)
        mine = [g for (v, c, _b), g in self._groups.items() if (v, c) == key]
        if not mine or imageset.groups is None or not np.isin(mine, imageset.groups[imageset.labels == cls]).any():
            self._splits[key] = ChangeBursts()
            for k in [k for k in self._tokens if k[:2] == key]:
                self._tokens.pop(k)
                self._groups.pop(k, None)

    def take(self, video: str, cls: int, crop: np.ndarray) -> tuple[int, str] | None:
        """``(burst, token for its file names)`` of a frame, or None when it repeats a recorded frame."""
        burst, repeat = self._splits.setdefault((video, cls), ChangeBursts()).assign(crop)
        if repeat:
            return None
        return burst, self._tokens.setdefault((video, cls, burst), new_burst_token())

    def group(self, imageset, video: str, cls: int, burst: int):
        """The capture group for frames of ``burst`` added now: the group earlier frames of it have, or
        :data:`NEW_GROUP` (its id is remembered: the next free one, which ``add_images`` gives it)."""
        key = (video, cls, burst)
        g = self._groups.get(key)
        if g is not None and imageset.groups is not None and np.any((imageset.groups == g) & (imageset.labels == cls)):
            return g
        ids = imageset.group_ids()
        self._groups[key] = int(ids.max()) + 1 if len(ids) else 0
        return NEW_GROUP
