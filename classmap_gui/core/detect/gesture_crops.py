"""A recorded gesture as the hand model reads it: the hand's crop in every frame where the scan finds a hand.

Adding a gesture to the hand model (:meth:`..recogniser.Recogniser.add_class`) needs images framed as the model's
classes were trained and as :class:`.reading.HandReader` re-crops the hand it reads: the scan's voted box made
square, widened by the window network's context, at the model's image size (:func:`.reading.square_crop`). A
frame where the scan finds no hand gives no crop (it is listed as skipped). :func:`video_frames` reads a video
file's frames for the CLI (``classmap add-class --images VIDEO``).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..errors import DataError
from ..progress import ProgressFn, StopFn, check_stop, report

#: frames read from one video at most (a gesture takes seconds: 5 s at 30 fps is 150 frames)
MAX_VIDEO_FRAMES = 3000


@dataclass
class GestureCrops:
    """``crops (m, h, w) uint8`` (the model's size), ``frames`` the index of the frame each came from, ``boxes``
    ``(m, 4)`` the scan's box (x, y, w, h) in that frame, ``skipped`` the frames with no hand found."""

    crops: np.ndarray
    frames: np.ndarray
    boxes: np.ndarray
    skipped: list[int] = field(default_factory=list)


def hand_crops(recogniser, frames, *, method: str = "brute_force", scanner=None, shifts: int = 1,
               progress: ProgressFn = None, should_stop: StopFn = None, total: int | None = None) -> GestureCrops:
    """Scan each of ``frames`` (``(h, w, 3)`` RGB or ``(h, w)`` grey uint8) with the hand model ``recogniser``
    (``scanner``: a :class:`.scanner.Scanner` of it to reuse, else one of ``method``) and crop the hand found;
    ``shifts`` > 1: also the reader's shifted re-crops of the box (up to 9, :class:`.reading.HandReader`'s), the
    framings it reads the hand in (each frame then gives ``shifts`` crops, the centred one first)."""
    import cv2

    from .reading import RECROP_SHIFTS, square_crop
    from .scanner import Scanner

    sc = scanner if scanner is not None else Scanner(recogniser, method)
    ctx = float(getattr(recogniser.features, "context_", 0.0))
    crops, used, boxes, skipped = [], [], [], []
    for i, frame in enumerate(frames):
        check_stop(should_stop)
        frame = np.asarray(frame)
        res = sc.scan(frame)
        if res.best_box is None or not res.hand_found:
            skipped.append(i)
            continue
        grey = frame if frame.ndim == 2 else cv2.cvtColor(frame, cv2.COLOR_RGB2GRAY)
        for sh in RECROP_SHIFTS[:max(1, min(len(RECROP_SHIFTS), int(shifts)))]:
            crops.append(square_crop(grey, res.best_box, recogniser.image_size, sh, ctx))
            used.append(i)
            boxes.append(np.asarray(res.best_box, np.float32))
        if total:
            report(progress, (i + 1) / total, "finding the hand")
    h, w = recogniser.image_size
    return GestureCrops(np.asarray(crops, np.uint8).reshape(-1, h, w), np.asarray(used, np.int64),
                        np.asarray(boxes, np.float32).reshape(-1, 4), skipped)


def video_frames(path: str | Path, max_frames: int = MAX_VIDEO_FRAMES):
    """The frames of the video file ``path`` as ``(h, w, 3)`` RGB uint8, in order (at most ``max_frames``);
    DataError naming the file when OpenCV cannot read it or it holds no frame."""
    import cv2

    path = Path(path)
    cap = cv2.VideoCapture(str(path))
    if not cap.isOpened():
        raise DataError(f"{path}: not a video OpenCV can read")
    frames = []
    try:
        while len(frames) < int(max_frames):
            ok, bgr = cap.read()
            if not ok:
                break
            frames.append(cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB))
    finally:
        cap.release()
    if not frames:
        raise DataError(f"{path}: the video holds no readable frame")
    return frames


__all__ = ["GestureCrops", "MAX_VIDEO_FRAMES", "hand_crops", "video_frames"]
