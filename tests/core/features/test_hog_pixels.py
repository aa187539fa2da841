"""HOGFeatures and PixelFeatures: shapes, dtypes, values against direct references."""
import json
from pathlib import Path

import cv2
import numpy as np
import pytest
from sklearn.pipeline import make_pipeline
from sklearn.linear_model import RidgeClassifier

from classmap_gui.core.errors import Cancelled, ConfigError, DataError, NotFittedError
from classmap_gui.core.features.hog import HOGFeatures
from classmap_gui.core.features.hog_ops import HOG_TOLERANCE
from classmap_gui.core.features.pixels import PixelFeatures, resize_batch


def _images(n=4, h=32, w=40, seed=0, colour=False):
    rng = np.random.default_rng(seed)
    shape = (n, h, w, 3) if colour else (n, h, w)
    raw = rng.integers(0, 256, shape).astype(np.float32)
    # Smooth random images have gradients in every direction and magnitude, unlike pure noise.
    sm = np.stack([cv2.GaussianBlur(im, (5, 5), 1.2) for im in raw])
    return np.clip(sm * 1.5 - 64, 0, 255).astype(np.uint8)


def _hog_reference(img, cell, block, stride, nbins, signed=False):
    """Dalal-Triggs HOG written out loop by loop (OpenCV's weighting and order), for tiny images."""
    h, w = img.shape
    x = img.astype(np.float64)
    mag = np.zeros((h, w))
    ang = np.zeros((h, w))
    for i in range(h):
        for j in range(w):
            gx = x[i, j + 1 if j + 1 < w else w - 2] - x[i, j - 1 if j > 0 else 1]
            gy = x[i + 1 if i + 1 < h else h - 2, j] - x[i - 1 if i > 0 else 1, j]
            mag[i, j] = np.hypot(gx, gy)
            a = np.arctan2(gy, gx)
            period = 2 * np.pi if signed else np.pi
            ang[i, j] = (a % period) / period * nbins - 0.5
    ncb = block // cell
    sigma = block / 4.0
    blocks = []
    for bx in range(0, w - block + 1, stride):  # OpenCV: blocks column-major
        for by in range(0, h - block + 1, stride):
            hist = np.zeros((ncb, ncb, nbins))  # [cell x, cell y, bin]
            for py in range(block):
                for px in range(block):
                    m = mag[by + py, bx + px]
                    m *= np.exp(-((py - block / 2) ** 2 + (px - block / 2) ** 2) / (2 * sigma ** 2))
                    a = ang[by + py, bx + px]
                    lo = int(np.floor(a))
                    f = a - lo
                    cy, cx = (py + 0.5) / cell - 0.5, (px + 0.5) / cell - 0.5
                    for kx in range(ncb):
                        for ky in range(ncb):
                            wgt = max(0.0, 1 - abs(cx - kx)) * max(0.0, 1 - abs(cy - ky))
                            hist[kx, ky, lo % nbins] += m * wgt * (1 - f)
                            hist[kx, ky, (lo + 1) % nbins] += m * wgt * f
            v = hist.reshape(-1)
            v = v / (np.linalg.norm(v) + 0.1 * len(v))
            v = np.minimum(v, 0.2)
            v = v / (np.linalg.norm(v) + 1e-3)
            blocks.append(v)
    return np.concatenate(blocks).astype(np.float32)


def test_hog_default_length_on_64x64_is_1764_float32():
    X = _images(3, 64, 64)
    F = HOGFeatures().fit(X).transform(X)
    assert F.shape == (3, 1764) and F.dtype == np.float32
    assert np.isfinite(F).all() and (F >= 0).all() and F.max() <= 1.0


@pytest.mark.parametrize("params", [dict(cell_size=4, block_size=8, block_stride=4, n_bins=9),
                                    dict(cell_size=4, block_size=8, block_stride=8, n_bins=6, signed=True)])
def test_hog_numpy_equals_loop_reference(params):
    X = _images(2, 16, 24, seed=3)  # both parameter sets tile 16x24 exactly (no centre crop)
    F = HOGFeatures(backend="numpy", **params).transform(X)
    ref = np.stack([_hog_reference(im, params["cell_size"], params["block_size"], params["block_stride"],
                                   params["n_bins"], params.get("signed", False)) for im in X])
    assert F.shape == ref.shape
    np.testing.assert_allclose(F, ref, atol=2e-5)


needs_hog_descriptor = pytest.mark.skipif(not hasattr(cv2, "HOGDescriptor"),
                                          reason="OpenCV without HOGDescriptor (5.x): nothing to compare against")
DEMO_VIDEO = Path(__file__).resolve().parents[3] / "resources" / "demo-hands.avi"


def _demo_video_crops(n_frames=12):
    """64x64 grey crops of the shipped demo video's frames: real hands, the images HOG reads in the app."""
    cap = cv2.VideoCapture(str(DEMO_VIDEO))
    frames = []
    while len(frames) < n_frames:
        ok, frame = cap.read()
        if not ok:
            break
        frames.append(cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY))
    cap.release()
    assert frames, f"{DEMO_VIDEO} gave no frame"
    h, w = frames[0].shape
    return np.stack([f[y:y + 64, x:x + 64] for f in frames for y in range(0, h - 64, 40) for x in range(0, w - 64, 40)])


@needs_hog_descriptor
@pytest.mark.parametrize("params", [dict(), dict(signed=True), dict(cell_size=6, block_size=12, block_stride=6, n_bins=7)])
def test_hog_without_hog_descriptor_gives_its_numbers_within_the_stated_tolerance(monkeypatch, params):
    # OpenCV 5 has no HOGDescriptor: "auto" and "opencv" then run the numpy path, which must give
    # HOGDescriptor's features (OpenCV 4, same images) within HOG_TOLERANCE.
    smooth = _images(300, 37, 45, seed=1)  # odd size: both centre-crop the same window; several chunks
    hands = _demo_video_crops()
    cases = (("auto", smooth), ("opencv", hands))
    ref = [HOGFeatures(backend=b, **params).transform(X) for b, X in cases]
    np.testing.assert_array_equal(ref[0], HOGFeatures(backend="opencv", n_jobs=2, **params).transform(smooth))
    monkeypatch.delattr(cv2, "HOGDescriptor")
    for (backend, X), want in zip(cases, ref):
        got = HOGFeatures(backend=backend, **params).transform(X)
        assert got.shape == want.shape
        np.testing.assert_array_equal(got, HOGFeatures(backend="numpy", **params).transform(X))
        assert 0 < np.abs(got - want).max() <= HOG_TOLERANCE  # > 0: the fallback ran (arctan2, not fast atan)


@needs_hog_descriptor
def test_a_trained_hog_model_predicts_the_same_without_hog_descriptor(monkeypatch):
    # A model trained where HOGDescriptor exists names the same classes where it does not (OpenCV 5).
    from classmap_gui.core.data import load_digits
    from classmap_gui.core.train.training import TrainConfig, train

    digits = load_digits(size=(16, 16))
    config = TrainConfig(features="hog", features_params={"cell_size": 4, "block_size": 8, "block_stride": 4},
                         bank="ova-ridge", classmap={"d": 5, "p": 4, "refine": "v2"}, test_fraction=0.2)
    rec = train(digits.subset(np.arange(600)), config).recogniser
    test = list(digits.images[600:1000])
    before = rec.predict(test, top=3)
    monkeypatch.delattr(cv2, "HOGDescriptor")
    after = rec.predict(test, top=3)
    np.testing.assert_array_equal(after.top_classes, before.top_classes)
    np.testing.assert_allclose(after.top_scores, before.top_scores, atol=1e-2)


def test_hog_crops_odd_sizes_and_converts_colour():
    X = _images(2, 30, 35, colour=True)
    hog = HOGFeatures(n_jobs=2).fit(X)
    F = hog.transform(X)
    # largest window 16 + k*8 within 30x35: 24x32 -> 2 x 3 blocks of 36
    assert F.shape == (2, 2 * 3 * 36) == (2, hog.n_features_out_)
    grey = cv2.cvtColor(X.reshape(-1, 35, 3), cv2.COLOR_RGB2GRAY).reshape(2, 30, 35)
    np.testing.assert_array_equal(F, HOGFeatures().transform(grey))


def test_hog_parallel_equals_serial_and_reports_progress():
    X = _images(120, 24, 24, seed=4)
    seen = []
    a = HOGFeatures(n_jobs=1, backend="numpy").transform(X, progress=lambda f, s: seen.append(f))
    b = HOGFeatures(n_jobs=2, backend="numpy").transform(X)
    np.testing.assert_array_equal(a, b)
    assert seen and seen[-1] == 1.0


def test_hog_refuses_wrong_sizes_bad_params_and_stops_on_request():
    hog = HOGFeatures().fit(_images(2, 32, 32))
    with pytest.raises(DataError, match="32x32"):
        hog.transform(_images(2, 40, 40))
    with pytest.raises(DataError, match="smaller than one HOG block"):
        HOGFeatures().transform(_images(1, 10, 10))
    with pytest.raises(ConfigError, match="multiple of cell_size"):
        HOGFeatures(block_size=12, cell_size=8).transform(_images(1, 32, 32))
    with pytest.raises(Cancelled):
        HOGFeatures().transform(_images(2, 32, 32), should_stop=lambda: True)


def test_hog_params_are_json_and_it_works_in_a_pipeline():
    hog = HOGFeatures(cell_size=4, block_size=8, block_stride=4)
    json.dumps(hog.get_params())
    X = np.concatenate([_images(20, 16, 16, seed=5), 255 - _images(20, 16, 16, seed=6)])
    X[20:, :, :8] = 0  # class 1 has a dark left half
    y = np.repeat([0, 1], 20)
    model = make_pipeline(HOGFeatures(cell_size=4, block_size=8, block_stride=4), RidgeClassifier()).fit(X, y)
    assert model.score(X, y) == 1.0


def test_pixels_are_scaled_to_unit_range_in_row_major_order():
    X = np.arange(2 * 3 * 4, dtype=np.uint8).reshape(2, 3, 4) * 10
    F = PixelFeatures().fit(X).transform(X)
    assert F.dtype == np.float32 and F.shape == (2, 12)
    np.testing.assert_allclose(F, X.reshape(2, -1) / 255.0, rtol=1e-6)


def test_pixels_resize_grey_and_colour():
    X = _images(3, 32, 32, colour=True)
    F = PixelFeatures(size=(8, 8)).fit(X).transform(X)
    assert F.shape == (3, 8 * 8 * 3)
    expected = np.stack([cv2.resize(im, (8, 8), interpolation=cv2.INTER_AREA) for im in X]).reshape(3, -1) / 255.0
    np.testing.assert_allclose(F, expected, atol=1e-6)
    G = PixelFeatures(size=[8, 8], grey=True).fit(X).transform(X)
    assert G.shape == (3, 64)
    # a batch resizes exactly like one image at a time
    many = _images(600, 12, 12, seed=2)
    np.testing.assert_array_equal(resize_batch(many, (5, 7)),
                                  np.stack([cv2.resize(im, (7, 5), interpolation=cv2.INTER_AREA) for im in many]))


def test_pixels_standardize_learns_mean_and_scale():
    X = _images(50, 8, 8, seed=7)
    X[:, 0, 0] = 9  # a constant pixel is centred, not divided by zero
    pf = PixelFeatures(standardize=True).fit(X)
    F = pf.transform(X)
    assert pf.mean_.dtype == np.float32 and pf.mean_.shape == (64,)
    np.testing.assert_allclose(F.mean(0), 0, atol=1e-5)
    np.testing.assert_allclose(F[:, 1:].std(0), 1, atol=1e-4)
    assert np.all(F[:, 0] == 0)
    with pytest.raises(NotFittedError):
        PixelFeatures(standardize=True).transform(X)
    with pytest.raises(DataError, match="shape"):
        pf.transform(_images(2, 9, 9))


def test_hog_and_pixels_survive_the_safe_store_round_trip():
    from classmap_gui.core.store import dump_estimator, load_estimator

    X = _images(6, 24, 24, seed=8)
    for est in (PixelFeatures(size=(8, 8), standardize=True).fit(X),
                HOGFeatures(cell_size=4, block_size=8, block_stride=4).fit(X)):
        arrays = {}
        doc = dump_estimator(est, arrays, "features")
        json.dumps(doc)  # structure is plain JSON, arrays go to the npz
        back = load_estimator(json.loads(json.dumps(doc)), arrays)
        assert type(back) is type(est)
        np.testing.assert_array_equal(back.transform(X), est.transform(X))
