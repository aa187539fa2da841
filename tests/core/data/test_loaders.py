"""Loaders: what a user pointing the app at a folder, a built-in set or IDX files would notice."""
import gzip
import struct

import cv2
import numpy as np
import pytest

from classmap_gui.core.data import ImageSet, load_dataset, load_folder, read_idx
from classmap_gui.core.data.builtin import load_fashion_mnist
from classmap_gui.core.errors import DataError
from classmap_gui.core.image_ops import grey_stack


def _write(path, img):
    path.parent.mkdir(parents=True, exist_ok=True)
    assert cv2.imwrite(str(path), img)


@pytest.fixture
def folder(tmp_path):
    rng = np.random.default_rng(0)
    root = tmp_path / "set"
    for cls, ext in (("cat", ".png"), ("dog", ".JPG"), ("owl", ".bmp")):
        for i in range(3):
            h, w = (20 + 7 * i, 30 + 5 * i)  # mixed sizes
            _write(root / cls / f"{i}{ext}", rng.integers(0, 255, (h, w, 3), dtype=np.uint8))
    (root / "cat" / "broken.png").write_bytes(b"not an image at all")
    (root / "dog" / "notes.txt").write_text("ignored: not an image extension")
    return root


def test_folder_mixed_sizes_are_resized_and_corrupt_files_listed(folder):
    ims = load_folder(folder, size=(16, 24))
    assert ims.class_names == ["cat", "dog", "owl"]
    assert ims.images.shape == (9, 16, 24) and ims.images.dtype == np.uint8
    assert list(ims.counts()) == [3, 3, 3]
    assert [p for p, _ in ims.skipped] == [str(folder / "cat" / "broken.png")]
    assert "not a PNG, JPEG" in ims.skipped[0][1]
    assert all(s.startswith(str(folder)) for s in ims.sources)


def test_folder_keeps_colour_in_rgb_order(tmp_path):
    bgr = np.zeros((8, 8, 3), np.uint8)
    bgr[..., 2] = 200  # red in OpenCV's BGR
    for c in "ab":
        _write(tmp_path / c / "x.png", bgr)
    ims = load_folder(tmp_path, size=(8, 8), grey=False)
    assert ims.is_color and ims.images.shape == (2, 8, 8, 3)
    assert ims.images[0, 0, 0].tolist() == [200, 0, 0]
    grey = grey_stack(ims.images)  # red weighs 0.299 in the luma
    assert grey.shape == (2, 8, 8) and 50 < grey[0, 0, 0] < 70


def test_empty_class_folder_is_a_clear_error(folder):
    (folder / "empty").mkdir()
    with pytest.raises(DataError, match="empty"):
        load_folder(folder)


def test_class_with_only_unreadable_files_is_reported(tmp_path):
    _write(tmp_path / "good" / "a.png", np.zeros((5, 5), np.uint8))
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "x.jpg").write_bytes(b"\xff\xd8garbage")
    with pytest.raises(DataError, match="bad"):
        load_folder(tmp_path)


def test_missing_folder_and_unknown_name(tmp_path):
    with pytest.raises(DataError, match="not a folder"):
        load_folder(tmp_path / "nope")
    with pytest.raises(DataError, match="neither a built-in"):
        load_dataset(str(tmp_path / "nope"))
    with pytest.raises(DataError, match="no class sub-folders"):
        load_folder(tmp_path)


def test_digits_builtin_and_stratified_split():
    ims = load_dataset("digits")
    assert ims.images.shape == (1797, 8, 8) and ims.images.max() == 255
    train, val, test = ims.split(0.2, 0.2, seed=1)
    assert len(train) + len(val) + len(test) == len(ims)
    for part in (train, val, test):
        frac = part.counts() / ims.counts()
        assert np.ptp(frac) < 0.05  # every class keeps its proportion
    again = ims.split(0.2, 0.2, seed=1)
    assert np.array_equal(again[2].labels, test.labels)


def test_check_trainable_names_thin_classes():
    ims = ImageSet(np.zeros((3, 4, 4), np.uint8), [0, 0, 1], ["many", "single"])
    with pytest.raises(DataError, match="'single'"):
        ims.check_trainable()


def _idx_bytes(arr):
    head = struct.pack(">BBBB", 0, 0, 0x08, arr.ndim) + struct.pack(f">{arr.ndim}I", *arr.shape)
    return head + arr.astype(np.uint8).tobytes()


def test_idx_gz_and_raw_and_fashion_layout(tmp_path):
    imgs = np.arange(2 * 28 * 28, dtype=np.uint32).reshape(2, 28, 28) % 256
    labs = np.array([3, 7])
    for part in ("train", "t10k"):
        (tmp_path / f"{part}-images-idx3-ubyte.gz").write_bytes(gzip.compress(_idx_bytes(imgs)))
        (tmp_path / f"{part}-labels-idx1-ubyte").write_bytes(_idx_bytes(labs))
    # labels only raw, images only gz: the loader must find each pair in one format
    (tmp_path / "train-labels-idx1-ubyte.gz").write_bytes(gzip.compress(_idx_bytes(labs)))
    (tmp_path / "t10k-labels-idx1-ubyte.gz").write_bytes(gzip.compress(_idx_bytes(labs)))
    assert np.array_equal(read_idx(tmp_path / "train-images-idx3-ubyte.gz"), imgs)
    ims = load_fashion_mnist(path=tmp_path)
    assert ims.images.shape == (4, 28, 28) and ims.labels.tolist() == [3, 7, 3, 7]
    assert ims.class_names[3] == "Dress"


def test_idx_truncated_or_foreign_file_is_data_error(tmp_path):
    bad = tmp_path / "x-idx"
    bad.write_bytes(_idx_bytes(np.zeros((4, 3), np.uint8))[:-2])
    with pytest.raises(DataError, match="header says"):
        read_idx(bad)
    bad.write_bytes(b"PK\x03\x04 zip, not idx")
    with pytest.raises(DataError, match="not an IDX"):
        read_idx(bad)


def test_fashion_mnist_absent_says_how_to_install(tmp_path):
    with pytest.raises(DataError, match="apt-get install dataset-fashion-mnist"):
        load_fashion_mnist(path=tmp_path)


def test_idx_gzip_bomb_is_refused_without_inflating(tmp_path):
    # declares 4 GiB + but compresses to a few KB: refused from the header alone
    head = struct.pack(">BBBB", 0, 0, 0x08, 3) + struct.pack(">3I", 70000, 1000, 1000)
    bomb = tmp_path / "bomb-idx3-ubyte.gz"
    bomb.write_bytes(gzip.compress(head + bytes(10_000_000)))
    with pytest.raises(DataError, match="more than"):
        read_idx(bomb, max_bytes=1 << 30)
    # a payload longer than declared is refused too, after reading just one byte past it
    extra = tmp_path / "extra-idx"
    extra.write_bytes(_idx_bytes(np.zeros((2, 2), np.uint8)) + b"\x00" * 50)
    with pytest.raises(DataError, match="holds more"):
        read_idx(extra)


def test_select_classes_relabels_in_the_given_order():
    ims = load_dataset("digits")
    sub = ims.select_classes([7, 2])
    assert sub.class_names == ["7", "2"] and list(sub.counts()) == [ims.counts()[7], ims.counts()[2]]
    assert np.array_equal(sub.images[sub.labels == 0], ims.images[ims.labels == 7])
    with pytest.raises(DataError, match="distinct"):
        ims.select_classes([1, 1])


def test_a_one_pixel_image_is_skipped_with_its_size_named(tmp_path):
    for c in ("a", "b"):
        (tmp_path / c).mkdir()
        for i in range(3):
            cv2.imwrite(str(tmp_path / c / f"{i}.png"), np.full((16, 16), 40 * i, np.uint8))
    cv2.imwrite(str(tmp_path / "a" / "dot.png"), np.zeros((1, 1), np.uint8))
    cv2.imwrite(str(tmp_path / "b" / "tiny.png"), np.zeros((8, 8), np.uint8))   # small, still an image
    ims = load_folder(tmp_path, size=(16, 16))
    assert len(ims) == 7
    assert [(p.rsplit("/", 1)[-1], "1x1 pixels is too small" in why) for p, why in ims.skipped] == [("dot.png", True)]
