"""KMeansFeatures against a direct slow reference (explicit loops), plus the transformer contract."""
from __future__ import annotations

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import Pipeline

from classmap_gui.core.errors import Cancelled, ConfigError, DataError, NotFittedError
from classmap_gui.core.features import KMeansFeatures
from classmap_gui.core.registry import make_features
from classmap_gui.core.features import kmeans_kernels


def _images(n=5, h=11, w=10, colour=False, seed=0):
    rng = np.random.default_rng(seed)
    shape = (n, h, w, 3) if colour else (n, h, w)
    return rng.integers(0, 256, size=shape, dtype=np.uint8)


def reference_transform(fm: KMeansFeatures, images: np.ndarray) -> np.ndarray:
    """The paper's encoder written the slow, obvious way: loops over images, patches and centroids."""
    imgs = images.astype(np.float64)
    if imgs.ndim == 3:
        imgs = imgs[..., None]
    p, s = fm.patch_size, fm.stride
    C = fm.centroids_.astype(np.float64)
    K = C.shape[0]
    n, h, w, _ = imgs.shape
    n_h, n_w = (h - p) // s + 1, (w - p) // s + 1
    out = np.zeros((n, 4, K))
    for a in range(n):
        for r in range(n_h):
            for c in range(n_w):
                x = imgs[a, r * s:r * s + p, c * s:c * s + p, :].reshape(-1)
                x = (x - x.mean()) / np.sqrt(x.var() + fm.norm_eps)
                x = (x - fm.mean_) @ fm.whitening_
                z = np.array([np.sqrt(np.sum((x - C[k]) ** 2)) for k in range(K)])
                q = 2 * (r >= int(np.ceil(n_h / 2))) + (c >= int(np.ceil(n_w / 2)))
                if fm.encoder == "triangle":
                    for k in range(K):
                        out[a, q, k] += max(0.0, z.mean() - z[k])
                else:
                    out[a, q, int(np.argmin(z))] += 1.0
    out = out.reshape(n, 4 * K)
    return np.sqrt(out) if fm.hellinger else out


@pytest.mark.parametrize("use_numba", [True, False] if kmeans_kernels.HAVE_NUMBA else [False])
@pytest.mark.parametrize("encoder", ["triangle", "hard"])
@pytest.mark.parametrize("whiten_eps", [0.1, None])
@pytest.mark.parametrize("colour", [False, True])
def test_matches_slow_reference(use_numba, encoder, whiten_eps, colour):
    imgs = _images(colour=colour)
    fm = KMeansFeatures(patch_size=3, stride=2 if colour else 1, n_centroids=7, n_patches=300, kmeans_max_iter=3,
                        whiten_eps=whiten_eps, encoder=encoder, n_jobs=2, random_state=0).fit(imgs)
    fm._use_numba = use_numba
    got = fm.transform(imgs)
    want = reference_transform(fm, imgs)
    assert got.shape == (len(imgs), 4 * 7) and got.dtype == np.float32
    assert fm.transform(imgs[:0]).shape == (0, 4 * 7)
    np.testing.assert_allclose(got, want, rtol=2e-4, atol=2e-3)
    assert fm.whitening_.shape == (3 * 3 * (3 if colour else 1),) * 2
    if whiten_eps is None:
        np.testing.assert_array_equal(fm.whitening_, np.eye(fm.whitening_.shape[0], dtype=np.float32))


def test_many_chunks_and_threads_agree_with_one():
    # more images than one parallel chunk holds, so chunk boundaries and threads are exercised
    imgs = _images(n=700, h=12, w=12)
    fm = KMeansFeatures(patch_size=4, n_centroids=5, n_patches=500, kmeans_max_iter=3, random_state=1, n_jobs=1).fit(imgs)
    one = fm.transform(imgs)
    fm.set_params(n_jobs=2)
    two = fm.transform(imgs)
    np.testing.assert_allclose(one, two, rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(one[:3], reference_transform(fm, imgs[:3]), rtol=2e-4, atol=2e-3)


def test_hellinger_is_square_root():
    imgs = _images()
    fm = KMeansFeatures(patch_size=3, n_centroids=6, n_patches=200, kmeans_max_iter=3, random_state=0).fit(imgs)
    plain = fm.transform(imgs)
    fm.set_params(hellinger=True)
    np.testing.assert_allclose(fm.transform(imgs), np.sqrt(plain), rtol=1e-6)


def test_grey_option_converts_colour_and_grey_input_feeds_colour_model():
    col = _images(colour=True)
    fm = KMeansFeatures(patch_size=3, n_centroids=4, n_patches=200, kmeans_max_iter=3, grey=True, random_state=0).fit(col)
    assert fm.n_channels_ == 1 and fm.centroids_.shape == (4, 9)
    assert fm.transform(col).shape == (len(col), 16)
    fc = KMeansFeatures(patch_size=3, n_centroids=4, n_patches=200, kmeans_max_iter=3, random_state=0).fit(col)
    assert fc.n_channels_ == 3 and fc.centroids_.shape == (4, 27)
    grey = col[..., 0]
    np.testing.assert_allclose(fc.transform(grey), fc.transform(np.repeat(grey[..., None], 3, axis=3)))


def test_random_state_reproducible_and_seed_matters():
    imgs = _images(n=8, h=14, w=14)
    a = KMeansFeatures(patch_size=4, n_centroids=6, n_patches=400, kmeans_max_iter=3, random_state=3).fit(imgs)
    b = KMeansFeatures(patch_size=4, n_centroids=6, n_patches=400, kmeans_max_iter=3, random_state=3).fit(imgs)
    c = KMeansFeatures(patch_size=4, n_centroids=6, n_patches=400, kmeans_max_iter=3, random_state=4).fit(imgs)
    np.testing.assert_array_equal(a.centroids_, b.centroids_)
    np.testing.assert_array_equal(a.transform(imgs), b.transform(imgs))
    assert not np.allclose(a.centroids_, c.centroids_)


def test_learned_state_is_plain_arrays_and_scalars():
    fm = KMeansFeatures(patch_size=3, n_centroids=5, n_patches=200, kmeans_max_iter=3, random_state=0).fit(_images())
    learned = {k: v for k, v in vars(fm).items() if k.endswith("_") and not k.startswith("_")}
    assert set(learned) >= {"mean_", "whitening_", "centroids_", "n_channels_", "n_features_out_"}
    for v in learned.values():
        assert isinstance(v, (np.ndarray, int, float, str, bool)), type(v)
        if isinstance(v, np.ndarray):
            assert v.dtype == np.float32
    # rebuilt from its params and learned arrays alone (what the store does) it encodes the same
    copy = clone(fm)
    for k, v in learned.items():
        setattr(copy, k, v)
    np.testing.assert_array_equal(copy.transform(_images(seed=1)), fm.transform(_images(seed=1)))


def test_should_stop_cancels_fit_and_transform():
    imgs = _images(n=600, h=12, w=12)
    with pytest.raises(Cancelled):
        KMeansFeatures(patch_size=3, n_centroids=4, n_patches=300).fit(imgs, should_stop=lambda: True)
    fm = KMeansFeatures(patch_size=3, n_centroids=4, n_patches=300, kmeans_max_iter=3, random_state=0).fit(imgs)
    calls = []
    with pytest.raises(Cancelled):
        fm.transform(imgs, progress=lambda f, s: calls.append(f), should_stop=lambda: len(calls) > 1)
    seen = []
    fm.transform(imgs, progress=lambda f, s: seen.append((f, s)))
    assert seen[-1] == (1.0, "encoding") and all(0 <= f <= 1 for f, _ in seen)


def test_bad_input_is_a_clear_error():
    with pytest.raises(NotFittedError):
        KMeansFeatures().transform(_images())
    with pytest.raises(DataError, match="uint8"):
        KMeansFeatures(n_patches=10, kmeans_max_iter=3, n_centroids=2).fit(_images().astype(np.float32))
    with pytest.raises(DataError, match="smaller than"):
        KMeansFeatures(patch_size=12, n_patches=10, kmeans_max_iter=3, n_centroids=2).fit(_images())
    with pytest.raises(ConfigError, match="encoder"):
        KMeansFeatures(encoder="soft", n_patches=10, kmeans_max_iter=3, n_centroids=2).fit(_images())
    with pytest.raises(ConfigError, match="n_centroids"):
        KMeansFeatures(patch_size=3, n_patches=10, kmeans_max_iter=3, n_centroids=20).fit(_images())


def test_pipeline_and_factory():
    imgs = _images(n=40, h=10, w=10, seed=5)
    y = (imgs.reshape(40, -1).mean(1) > imgs.mean()).astype(int)
    pipe = Pipeline([("f", make_features("kmeans", patch_size=3, n_centroids=6, n_patches=300, kmeans_max_iter=3, random_state=0)),
                     ("c", LogisticRegression(max_iter=200))]).fit(imgs, y)
    assert pipe.predict(imgs).shape == (40,)
    with pytest.raises(ConfigError, match="n_centroid"):
        make_features("kmeans", n_centroid=5)
    with pytest.raises(ConfigError, match="unknown feature map"):
        make_features("sift")


def test_store_round_trip_encodes_identically(tmp_path):
    from classmap_gui.core.errors import ModelFormatError
    from classmap_gui.core.store import dump_estimator, load_estimator

    imgs = _images(colour=True)
    fm = KMeansFeatures(patch_size=3, n_centroids=5, n_patches=200, kmeans_max_iter=3, hellinger=True,
                        random_state=0).fit(imgs)
    arrays: dict = {}
    spec = dump_estimator(fm, arrays, "features")
    back = load_estimator(spec, dict(arrays))
    np.testing.assert_array_equal(back.transform(imgs), fm.transform(imgs))
    bad = dict(arrays)
    key = spec["state"]["centroids_"]["__array__"]
    bad[key] = bad[key][:, :4]
    with pytest.raises(ModelFormatError, match="centroids_"):
        load_estimator(spec, bad)


@pytest.mark.parametrize("algorithm", ["lloyd", "minibatch"])
def test_kmeans_algorithms_learn_a_reproducible_dictionary(algorithm):
    imgs = _images(n=20, h=12, w=12, seed=2)
    kw = dict(patch_size=3, n_centroids=8, n_patches=600, kmeans_max_iter=4, kmeans_algorithm=algorithm,
              kmeans_batch_size=256, random_state=7)
    a, b = KMeansFeatures(**kw).fit(imgs), KMeansFeatures(**kw).fit(imgs)
    np.testing.assert_array_equal(a.centroids_, b.centroids_)
    assert a.centroids_.shape == (8, 9) and np.isfinite(a.centroids_).all()
    # learned centroids describe the patches better than the same number of random patches would
    untrained = KMeansFeatures(**{**kw, "kmeans_max_iter": 0}).fit(imgs) if algorithm == "lloyd" else None
    if untrained is not None:
        assert a.inertia_ < untrained.inertia_
