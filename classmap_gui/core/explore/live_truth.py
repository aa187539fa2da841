"""The true class of the frames of a labelled live source, where it can be known.

* The shipped demo video (``demo-hands.avi``): every frame's key pose is known from its generator
  (:func:`~.data.hand_video.demo_labels`); frames between poses have no truth.
* Image files and folders: an image inside a folder named like a class (a folder of one class, or a data
  set's class folders) is of that class.
* Cameras and other videos: unknown.

A live stream skips frames while the window is busy, and the count of frames read may run one or two
ahead of the frame shown; a video frame is therefore given a truth only when the frames just before it
hold the same pose.
"""
from __future__ import annotations

from pathlib import Path
from typing import Callable, Sequence

import numpy as np

#: the shipped demo video whose poses are known frame by frame (see :mod:`.data.hand_video`)
DEMO_VIDEO_NAME = "demo-hands.avi"
#: frames a shown frame may lag the count of frames read
READ_AHEAD = 2

#: ``truth(frames_read, file_name) -> class index or -1``
Truth = Callable[[int, str], int]


def demo_video_classes(class_names: Sequence[str], n_frames: int | None = None) -> np.ndarray | None:
    """``(F,) int64``: the class index of each frame of the demo video (-1 between poses or for a pose the
    model does not know); None when the model knows none of its poses or ``n_frames`` (the file's frame
    count, when known) is not the generator's."""
    from ..data.hand_pose import class_name
    from ..data.hand_video import demo_labels

    labels = demo_labels()
    if n_frames is not None and int(n_frames) != len(labels):
        return None
    index = {n: i for i, n in enumerate(class_names)}
    out = np.array([-1 if lab is None else index.get(class_name(*lab), -1) for lab in labels], np.int64)
    return out if (out >= 0).any() else None


def video_truth(per_frame: np.ndarray) -> Truth:
    """A :data:`Truth` for a video whose frame ``f`` (0-based) is of class ``per_frame[f]`` (looping)."""
    per_frame = np.asarray(per_frame, np.int64)
    n = len(per_frame)

    def truth(frames_read: int, _name: str = "") -> int:
        f = int(frames_read) - 1
        if f < 0 or n == 0:
            return -1
        near = per_frame[[(f - j) % n for j in range(READ_AHEAD + 1)]]
        return int(near[0]) if (near == near[0]).all() else -1
    return truth


def folder_truth(class_names: Sequence[str]) -> Truth:
    """A :data:`Truth` for image files: the class named like the nearest enclosing folder, else -1."""
    index = {n: i for i, n in enumerate(class_names)}

    def truth(_frames_read: int, name: str) -> int:
        for part in reversed(Path(name).parent.parts if name else ()):
            if part in index:
                return index[part]
        return -1
    return truth


def source_truth(source, class_names: Sequence[str]) -> Truth | None:
    """The :data:`Truth` of a Run source (camera index, video path, or list of image files / folders), or
    None when no frame's class can be known."""
    if isinstance(source, (list, tuple)):
        return folder_truth(class_names)
    if isinstance(source, (str, Path)) and Path(source).name == DEMO_VIDEO_NAME:
        import cv2

        cap = cv2.VideoCapture(str(source))
        n_frames = int(cap.get(cv2.CAP_PROP_FRAME_COUNT)) if cap.isOpened() else None
        cap.release()
        per_frame = demo_video_classes(class_names, n_frames)
        return None if per_frame is None else video_truth(per_frame)
    return None
