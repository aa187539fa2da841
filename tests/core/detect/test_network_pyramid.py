"""The window network's pyramid: every window of a frame embedded from one pass per scale, as its crop would be."""
import cv2
import numpy as np
import pytest

from classmap_gui.core.data.hand_video import find_hand_frames, random_key_poses
from classmap_gui.core.detect.pyramid import NetworkPyramid, is_window_network
from classmap_gui.core.errors import ConfigError
from classmap_gui.core.features.network import NetworkFeatures, WindowNetworkFeatures
from classmap_gui.core.features.network_input import CONTEXT, CROP, WINDOW


@pytest.fixture(scope="module")
def net():
    return WindowNetworkFeatures().fit()


@pytest.fixture(scope="module")
def frame():
    rgb = next(iter(find_hand_frames((240, 320), seed=3, poses=random_key_poses(3))))[0]
    return cv2.cvtColor(rgb, cv2.COLOR_RGB2GRAY)


def _crop_of(frame, pyr, box):
    """The window ``box`` cropped from its scale's shrunk frame with its context margin (reflected beyond the
    frame, as the pyramid pads it): what a person would feed the network for that window alone."""
    (sw, sh), _, f = min(pyr._levels, key=lambda lv: abs(WINDOW / lv[2] - box[2]))
    small = cv2.copyMakeBorder(cv2.resize(frame, (sw, sh), interpolation=cv2.INTER_AREA),
                               CONTEXT, CONTEXT, CONTEXT, CONTEXT, cv2.BORDER_REFLECT)
    x, y = int(round(box[0] * f)), int(round(box[1] * f))
    return small[y:y + CROP, x:x + CROP]


def test_a_windows_pooled_embedding_is_its_crops_embedding(net, frame):
    """Tolerance: cosine similarity >= 0.85 for every window and a median >= 0.98 (a crop is padded by reflecting
    its edge where the frame's pass reads the frame itself: measured min 0.89, 5th percentile 0.95, median 0.995
    over 180 windows of six frames)."""
    pyr = NetworkPyramid(net, (0.36, 0.52))
    X = pyr.features(frame).copy()
    boxes = pyr.boxes(*frame.shape)
    pick = np.random.default_rng(0).choice(len(X), 40, replace=False)
    E = net.transform(np.stack([_crop_of(frame, pyr, boxes[i]) for i in pick]))
    cos = np.sum(E * X[pick], 1) / (np.linalg.norm(E, axis=1) * np.linalg.norm(X[pick], axis=1))
    assert cos.min() >= 0.85 and np.median(cos) >= 0.98, cos


def test_every_window_lies_in_the_frame_one_cell_apart(net, frame):
    pyr = NetworkPyramid(net, (0.36, 0.43, 0.52))
    X = pyr.features(frame)
    b = pyr.boxes(*frame.shape)
    assert len(X) == len(b) == sum(s["windows"] for s in pyr.scales(*frame.shape))
    assert (b[:, 0] >= 0).all() and (b[:, 1] >= 0).all()
    assert (b[:, 0] + b[:, 2] <= 320 + 1e-3).all() and (b[:, 1] + b[:, 3] <= 240 + 1e-3).all()
    first = b[pyr.side_index(*frame.shape) == 0]
    assert np.isclose(first[1, 0] - first[0, 0], first[0, 2] / 8)      # one cell of the window's 8
    assert set(pyr.stage_seconds) == {"network", "levels"}


def test_only_a_window_network_makes_a_network_pyramid(net):
    crop_net = NetworkFeatures().fit()
    assert is_window_network(net) and not is_window_network(crop_net)
    with pytest.raises(ConfigError, match="no window grid"):
        crop_net.windows(np.zeros((1, 1, 96, 96), np.float32))
