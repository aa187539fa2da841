"""Dense window HOG equals the recogniser's per-window HOG, window for window."""
from __future__ import annotations

import cv2
import numpy as np
import pytest

from classmap_gui.core.detect.dense_hog import DenseHOG
from classmap_gui.core.detect.pyramid import WindowPyramid
from classmap_gui.core.errors import ConfigError, DataError
from classmap_gui.core.features.hog import HOGFeatures


def textured(h, w, seed=0):
    rng = np.random.default_rng(seed)
    img = cv2.GaussianBlur(rng.integers(0, 256, (h, w)).astype(np.uint8), (0, 0), 1.2)
    cv2.circle(img, (w // 3, h // 2), min(h, w) // 4, 250, 3)     # strong edges across window borders
    cv2.line(img, (0, h - 1), (w - 1, 0), 10, 2)
    return img


@pytest.mark.parametrize("win", [(64, 64), (48, 64)])
def test_every_window_equals_the_per_window_hog(win):
    frame = textured(112, 136)
    hog = HOGFeatures().fit(np.zeros((1, *win), np.uint8))
    dense = DenseHOG(hog)
    X = dense.window_features(frame)
    rows, cols = dense.grid(*frame.shape)
    assert X.shape == (rows * cols, hog.n_features_out_)
    crops = np.stack([frame[r * 8:r * 8 + win[0], c * 8:c * 8 + win[1]] for r in range(rows) for c in range(cols)])
    ref_numpy = HOGFeatures(backend="numpy").fit(crops).transform(crops)
    ref_opencv = HOGFeatures(backend="opencv").fit(crops).transform(crops)
    # windows in the corners, on the edges and inside the frame all match
    assert np.abs(X - ref_numpy).max() < 1e-5
    assert np.abs(X - ref_opencv).max() < 1e-3       # OpenCV's fast atan: its own tolerance (hog.py)


def test_edge_blocks_are_not_a_crop_of_a_frame_wide_hog():
    # the reason for the 9 block variants: frame-wide gradients give other numbers at window edges
    frame = textured(96, 96, seed=3)
    hog = HOGFeatures().fit(np.zeros((1, 64, 64), np.uint8))
    B = DenseHOG(hog).block_descriptors(frame)
    assert np.abs(B[0] - B[4]).max() > 0.01          # interior vs top-left-corner variant of the same block


def test_pyramid_rows_are_the_hog_of_their_boxes():
    frame = textured(240, 320, seed=1)
    hog = HOGFeatures().fit(np.zeros((1, 64, 64), np.uint8))
    pyr = WindowPyramid(DenseHOG(hog), sides=(64 / 240, 0.4, 0.55))
    X = pyr.features(frame).copy()
    boxes = pyr.boxes(240, 320)
    assert len(pyr.scales(240, 320)) == 3 and len(X) == len(boxes)
    # the first scale is the frame itself: its windows are plain 64x64 crops
    n0 = pyr.scales(240, 320)[0]["windows"]
    for i in (0, n0 // 2, n0 - 1):
        x, y, w, h = (int(round(v)) for v in boxes[i])
        assert (w, h) == (64, 64)
        ref = HOGFeatures(backend="numpy").fit(frame[None, :64, :64]).transform(frame[None, y:y + 64, x:x + 64])
        assert np.abs(X[i] - ref[0]).max() < 1e-5
    # larger scales cover larger boxes, inside the frame
    assert boxes[-1, 2] > boxes[0, 2] * 1.9
    assert (boxes[:, 0] + boxes[:, 2] <= 320 + 1).all() and (boxes[:, 1] + boxes[:, 3] <= 240 + 1).all()


def test_clear_errors():
    with pytest.raises(ConfigError, match="block stride"):
        DenseHOG(HOGFeatures(block_stride=16).fit(np.zeros((1, 64, 64), np.uint8)))
    with pytest.raises(ConfigError, match="fitted"):
        DenseHOG(HOGFeatures())
    with pytest.raises(ConfigError, match="HOG features"):
        DenseHOG(object())
    hog = HOGFeatures().fit(np.zeros((1, 64, 64), np.uint8))
    with pytest.raises(ConfigError, match="fractions"):
        WindowPyramid(DenseHOG(hog), sides=(0.5, 1.5))
    with pytest.raises(DataError, match="too small"):
        WindowPyramid(DenseHOG(hog), sides=(0.5,)).features(np.zeros((40, 40), np.uint8))
    with pytest.raises(DataError, match="grey uint8"):
        WindowPyramid(DenseHOG(hog)).features(np.zeros((120, 160), np.float32))
