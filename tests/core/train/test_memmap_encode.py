"""Encoding into a memory-mapped .npy file, and training a ridge bank straight from it."""
from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

from classmap_gui.core.classify.banks.ova import OneVsAllRidge
from classmap_gui.core.train.encode import encode
from classmap_gui.core.errors import Cancelled, ConfigError, DataError
from classmap_gui.core.features.kmeans import KMeansFeatures


@pytest.fixture(scope="module")
def images_and_features():
    rng = np.random.default_rng(0)
    images = rng.integers(0, 256, (8000, 8, 8), dtype=np.uint8)
    feats = KMeansFeatures(patch_size=4, n_centroids=32, n_patches=2000, n_jobs=1, random_state=0).fit(images[:300])
    return images, feats


def _peak_bytes(fn):
    tracemalloc.start()
    try:
        result = fn()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return result, peak


def test_encoding_to_disk_equals_in_memory_and_never_holds_the_matrix(images_and_features, tmp_path):
    images, feats = images_and_features
    in_ram = encode(feats, images)
    path = tmp_path / "cache" / "features.npy"
    on_disk, peak = _peak_bytes(lambda: encode(feats, images, out=path, chunk_size=200))
    assert isinstance(on_disk, np.memmap) and on_disk.dtype == np.float32 and on_disk.shape == in_ram.shape
    # chunks of 200 take another GEMM blocking (and BLAS thread count) than the whole set: float32 rounding
    np.testing.assert_allclose(on_disk, in_ram, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(np.load(path), feats.transform(images), rtol=1e-4, atol=1e-5)
    assert peak < in_ram.nbytes / 2, f"encoding to disk held {peak} bytes for a {in_ram.nbytes}-byte matrix"
    assert not path.with_name("features.npy.part").exists()


def test_ridge_bank_trains_from_a_memmap_chunk_by_chunk(tmp_path):
    rng = np.random.default_rng(1)
    n, D, C = 24000, 96, 12
    y = rng.integers(0, C, n)
    centres = rng.standard_normal((C, D)).astype(np.float32)
    X = np.lib.format.open_memmap(tmp_path / "X.npy", mode="w+", dtype=np.float32, shape=(n, D))
    for a in range(0, n, 4000):
        X[a:a + 4000] = centres[y[a:a + 4000]] + rng.standard_normal((min(4000, n - a), D), dtype=np.float32)
    X.flush()
    del X
    X = np.load(tmp_path / "X.npy", mmap_mode="r")
    ref = OneVsAllRidge(alpha=1.0).fit(np.array(X), y)
    bank, peak = _peak_bytes(lambda: OneVsAllRidge(alpha=1.0).fit(X, y))
    np.testing.assert_allclose(bank.coef_, ref.coef_, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(bank.intercept_, ref.intercept_, rtol=1e-4, atol=1e-5)
    assert peak < X.nbytes / 2, f"training from the memmap held {peak} bytes for a {X.nbytes}-byte matrix"
    assert (bank.predict(X[:2000]) == y[:2000]).mean() > 0.95


def test_a_cancelled_encoding_leaves_no_file(images_and_features, tmp_path):
    images, feats = images_and_features
    calls = iter(range(100))
    path = tmp_path / "features.npy"
    with pytest.raises(Cancelled):
        encode(feats, images, out=path, chunk_size=100, should_stop=lambda: next(calls) >= 3)
    assert not path.exists() and not path.with_name("features.npy.part").exists()


def test_bad_input_is_reported(images_and_features, tmp_path):
    images, feats = images_and_features
    with pytest.raises(DataError, match="uint8"):
        encode(feats, images.astype(np.float32))
    with pytest.raises(ConfigError, match=".npy"):
        encode(feats, images, out=tmp_path / "features.bin")
    with pytest.raises(DataError, match="no images"):
        encode(feats, images[:0])


def test_progress_reaches_one(images_and_features):
    images, feats = images_and_features
    seen = []
    encode(feats, images[:300], chunk_size=64, progress=lambda f, s: seen.append(f))
    assert seen[-1] == 1.0 and seen == sorted(seen)


def test_encoding_rows_of_a_set_equals_encoding_their_copy_without_making_it():
    """A training part is encoded from its rows of the whole set (train() for a hand model's 84 000 crops): the same
    features as encoding ``images[rows]``, with no copy of those images held; rows outside the set are refused."""
    class Corners:                            # a feature map much smaller than its images: four pixels
        def transform(self, x):
            return np.asarray(x)[:, [0, 0, -1, -1], [0, -1, 0, -1]].astype(np.float32)

    feats = Corners()
    images = np.random.default_rng(1).integers(0, 256, (4000, 48, 48), dtype=np.uint8)
    rows = np.random.default_rng(1).permutation(len(images))[:3000]
    expected = encode(feats, images[rows], chunk_size=500)
    got, peak = _peak_bytes(lambda: encode(feats, images, rows=rows, chunk_size=500))
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)
    assert peak < got.nbytes + images[rows].nbytes / 2, f"encoding rows held {peak} bytes"
    with pytest.raises(ConfigError, match="rows must be indices"):
        encode(feats, images, rows=np.array([0, len(images)]))
