"""Large arrays of a saved model that do not fit in memory are memory-mapped on load: same predictions,
no read of the weights, still a plain .npz, and a damaged file is still refused. (Arrays that fit are
read: tests/fuzz/test_model_swapped_in_place.py.)"""
import zipfile

import numpy as np
import pytest

from classmap_gui.core.classify.banks.ridge_moments import ova_ridge_bank
from classmap_gui.core.errors import ModelFormatError
from classmap_gui.core.features.pixels import PixelFeatures
from classmap_gui.core.recogniser import Recogniser
from classmap_gui.core.store import load_bundle, save_bundle
from classmap_gui.core.store import npz
from classmap_gui.core.store.npz import ALIGN, MMAP_MIN_BYTES


@pytest.fixture
def little_memory(monkeypatch):
    """A machine with 24 MB available: large arrays no longer fit and are mapped."""
    monkeypatch.setattr(npz, "available_memory", lambda: 24 << 20)


@pytest.fixture(scope="module")
def big_model(tmp_path_factory):
    rng = np.random.default_rng(0)
    C, D = 70_000, 64  # 17.9 MB of weights: above the mapping threshold
    assert C * D * 4 >= MMAP_MIN_BYTES
    bank = ova_ridge_bank(rng.standard_normal((C, D)).astype(np.float32),
                          rng.standard_normal(C).astype(np.float32), 1.0)
    feats = PixelFeatures().fit(np.zeros((1, 8, 8), np.uint8))
    rec = Recogniser(feats, bank, None, [f"c{i}" for i in range(C)], (8, 8), True)
    return rec, rec.save(tmp_path_factory.mktemp("m") / "model")


def test_large_weights_load_as_a_read_only_map_and_predict_the_same(big_model, little_memory):
    rec, path = big_model
    back = Recogniser.load(path)
    coef = back.classifier.coef_
    assert isinstance(coef, np.memmap) and not coef.flags.writeable and coef.flags.aligned
    assert not isinstance(back.classifier.intercept_, np.memmap)  # small arrays are read as before
    images = np.random.default_rng(1).integers(0, 256, (5, 8, 8), dtype=np.uint8)
    a, b = rec.predict(images, top=3), back.predict(images, top=3)
    assert np.array_equal(a.top_classes, b.top_classes) and np.allclose(a.top_scores, b.top_scores)


def test_the_file_is_still_a_plain_npz_with_aligned_members(big_model):
    rec, path = big_model
    with np.load(path / "arrays.npz", allow_pickle=False) as z:
        assert np.array_equal(z["classifier/state.coef_"], rec.classifier.coef_)
    with zipfile.ZipFile(path / "arrays.npz") as zf:
        assert all(i.compress_type == zipfile.ZIP_STORED for i in zf.infolist())


def test_a_mapped_member_cut_short_is_refused(tmp_path, little_memory):
    arrays = {"w": np.arange(MMAP_MIN_BYTES // 4 + 10, dtype=np.float32)}
    save_bundle(tmp_path / "b", "x.json", {"format": "x", "version": 1}, arrays)
    doc, got = load_bundle(tmp_path / "b", "x.json", "x", 1)
    assert isinstance(got["w"], np.memmap) and np.array_equal(got["w"], arrays["w"])
    assert got["w"].offset % ALIGN == 0
    f = tmp_path / "b" / "arrays.npz"
    data = f.read_bytes()
    f.write_bytes(data[:len(data) // 2])
    with pytest.raises(ModelFormatError):
        load_bundle(tmp_path / "b", "x.json", "x", 1)


def test_weights_that_fit_in_memory_are_read_not_mapped(big_model):
    back = Recogniser.load(big_model[1])
    assert not isinstance(back.classifier.coef_, np.memmap)
