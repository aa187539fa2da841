"""What the shipped networks read (:mod:`classmap_gui.core.features.network_input`): one fixed crop's embedding
pinned, so a change to the input normalisation that the app, the exported predictor and training share
(dropping the crop's scaling, local contrast without its division) changes a number a test holds."""
import numpy as np
import pytest

from classmap_gui.core.features.network import NetworkFeatures, WindowNetworkFeatures
from classmap_gui.core.features.network_input import local_contrast, standardise


def fixed_crop(side: int) -> np.ndarray:
    """One deterministic grey ``(1, side, side)`` uint8 crop: a lit gradient, a bright blob, seeded noise."""
    y, x = np.mgrid[0:side, 0:side].astype(np.float32) / side
    im = 60 + 120 * x + 40 * np.sin(6 * y)
    im[(x - 0.5) ** 2 + (y - 0.55) ** 2 < 0.08] += 50
    im += np.random.default_rng(46).normal(0, 6, im.shape)
    return np.clip(np.rint(im), 0, 255).astype(np.uint8)[None]


#: the embedding of :func:`fixed_crop` by each shipped network (onnxruntime, measured when each was shipped;
#: OpenCV's dnn gives the same within 6e-6): a few of its 512 components and its length
PINNED = {
    "hand": (NetworkFeatures, [5, 34, 63, 150, 179, 208, 237, 266],
             [0.71509, 0.33802, 1.16996, 0.23227, 0.10867, 0.5951, 0.09031, 2.36149], 15.9419),
    "hand-window": (WindowNetworkFeatures, [0, 58, 116, 145, 203, 261, 290, 319],
                    [2.42771, 0.27778, 0.46801, 0.16642, 0.49917, 3.45649, 0.5579, 2.3557], 27.9385),
}


@pytest.mark.parametrize("network", list(PINNED))
def test_a_fixed_crop_has_the_pinned_embedding(network):
    cls, idx, values, norm = PINNED[network]
    f = cls().fit()
    e = f.transform(fixed_crop(f.input_size_[0]))[0]
    assert e.shape == (512,) and e.dtype == np.float32
    np.testing.assert_allclose(e[idx], values, atol=1e-4)
    assert abs(float(np.linalg.norm(e)) - norm) < 1e-3


def test_the_input_has_unit_spread_whatever_the_crops_contrast():
    """A dim, flat crop and a bright, contrasty one of the same picture read the same numbers."""
    crop = fixed_crop(64).astype(np.float32)
    dim = np.rint(0.3 * crop + 20).astype(np.uint8)
    bright = np.clip(np.rint(1.4 * crop - 30), 0, 255).astype(np.uint8)
    a, b = standardise(dim), standardise(bright)
    assert abs(float(a.std()) - 1) < 1e-3 and abs(float(a.mean())) < 1e-4
    assert np.corrcoef(a.ravel(), b.ravel())[0, 1] > 0.99 and abs(float(a.std()) - float(b.std())) < 1e-3
    la, lb = local_contrast(dim[0]), local_contrast(bright[0])  # the dim crop's rounding is amplified: looser
    assert np.corrcoef(la.ravel(), lb.ravel())[0, 1] > 0.95 and 0.8 < float(la.std()) / float(lb.std()) < 1.25
