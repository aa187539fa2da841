"""A recorded gesture's frames: a video read back in order, and a clear line for a file that is none."""
import cv2
import numpy as np
import pytest

from classmap_gui.core.detect.gesture_crops import video_frames
from classmap_gui.core.errors import DataError


def test_a_video_is_read_in_order_as_rgb_frames(tmp_path):
    path = tmp_path / "take.avi"
    out = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), 10, (64, 48))
    for k in range(7):
        frame = np.zeros((48, 64, 3), np.uint8)
        frame[:, :, 2] = 30 * k                      # BGR: the red channel grows frame by frame
        out.write(frame)
    out.release()
    frames = video_frames(path)
    assert len(frames) == 7 and frames[0].shape == (48, 64, 3)
    reds = [int(np.median(f[..., 0])) for f in frames]
    assert all(abs(r - 30 * k) <= 6 for k, r in enumerate(reds))
    assert len(video_frames(path, max_frames=3)) == 3


def test_a_file_that_is_not_a_video_is_one_clear_error(tmp_path):
    bad = tmp_path / "notes.avi"
    bad.write_text("not a video")
    with pytest.raises(DataError, match="notes.avi"):
        video_frames(bad)
