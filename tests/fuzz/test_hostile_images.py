"""Hostile image folders (issue 13): images huge in pixels but small on disk, lying headers,
special files, links out of the folder, class names that would break an export."""
from __future__ import annotations

import os
import struct
import zlib
from pathlib import Path

import cv2
import numpy as np
import pytest

from classmap_gui.core.data import ImageSet, load_folder, read_image
from classmap_gui.core.data.folder import ImageReadError
from classmap_gui.core.errors import DataError

from hostile_helpers import PEAK_BYTES, peak_memory

pytestmark = pytest.mark.timeout(60)


def png_header(w: int, h: int, *, good_crc: bool = True) -> bytes:
    """A PNG that declares ``w`` x ``h`` pixels and ends right after a tiny IDAT (73 bytes)."""
    ihdr = b"IHDR" + struct.pack(">IIBBBBB", w, h, 8, 0, 0, 0, 0)
    crc = zlib.crc32(ihdr) if good_crc else 0
    idat = zlib.compress(b"\x00" * 16)
    return (b"\x89PNG\r\n\x1a\n" + struct.pack(">I", 13) + ihdr + struct.pack(">I", crc)
            + struct.pack(">I", len(idat)) + b"IDAT" + idat + struct.pack(">I", zlib.crc32(b"IDAT" + idat)))


def _img(seed: int, size=(10, 10)) -> bytes:
    return cv2.imencode(".png", np.random.default_rng(seed).integers(0, 255, size, dtype=np.uint8))[1].tobytes()


def make_folder(root: Path, classes=("a", "b"), n=3) -> Path:
    for ci, c in enumerate(classes):
        (root / c).mkdir(parents=True, exist_ok=True)
        for i in range(n):
            (root / c / f"{i}.png").write_bytes(_img(i + 10 * ci + 100 * len(root.name)))
    return root


@pytest.mark.parametrize("w, h, good_crc", [(30000, 30000, True), (100000, 100000, True), (100000, 100000, False),
                                            (40000, 40000, True)])
def test_images_declaring_too_many_pixels_are_skipped_before_decoding(tmp_path, w, h, good_crc):
    root = make_folder(tmp_path / "d")
    bomb = root / "a" / "bomb.png"
    bomb.write_bytes(png_header(w, h, good_crc=good_crc))
    with peak_memory() as peak:
        ims = load_folder(root, size=(8, 8))
    assert peak[0] < PEAK_BYTES
    assert len(ims) == 6 and [p for p, _ in ims.skipped] == [str(bomb)]
    assert ("megapixels" if good_crc else "header is damaged") in ims.skipped[0][1]


def test_the_pixel_budget_is_settable(tmp_path):
    root = make_folder(tmp_path / "d")
    (root / "a" / "big.png").write_bytes(_img(0, size=(100, 100)))
    assert len(load_folder(root, size=(8, 8))) == 7
    ims = load_folder(root, size=(8, 8), max_pixels=5000)
    assert len(ims) == 6 and "more than the limit of 0.005 megapixels" in ims.skipped[0][1]


def test_an_opencv_error_on_one_file_is_a_skip_not_a_crash(tmp_path, monkeypatch):
    import classmap_gui.core.data.folder as folder

    root = make_folder(tmp_path / "d")
    real = cv2.imdecode
    victim = (root / "a" / "1.png").read_bytes()

    def picky(buf, flags):
        if bytes(buf) == victim:
            raise cv2.error("OpenCV(4.x) error: (-215:Assertion failed) pixels <= CV_IO_MAX_IMAGE_PIXELS")
        return real(buf, flags)

    monkeypatch.setattr(folder.cv2, "imdecode", picky)
    ims = load_folder(root, size=(8, 8))
    assert len(ims) == 5 and "OpenCV cannot decode it" in ims.skipped[0][1]


def test_special_files_in_a_data_folder_are_skipped_with_a_note(tmp_path):
    root = make_folder(tmp_path / "d")
    os.mkfifo(root / "a" / "pipe.png")
    ims = load_folder(root, size=(8, 8))
    assert len(ims) == 6 and ims.skipped == [(str(root / "a" / "pipe.png"), "is a FIFO, not a regular file; refused")]
    with pytest.raises(ImageReadError, match="cannot read image: is a FIFO"):
        read_image(root / "a" / "pipe.png")


def test_links_out_of_a_data_folder_are_skipped_unless_asked_for(tmp_path):
    root = make_folder(tmp_path / "d")
    outside = make_folder(tmp_path / "outside", classes=("c",))
    (root / "a" / "in.png").symlink_to(root / "b" / "0.png")  # inside: fine
    (root / "a" / "out.png").symlink_to(outside / "c" / "0.png")
    (root / "c").symlink_to(outside / "c", target_is_directory=True)
    ims = load_folder(root, size=(8, 8))
    assert ims.class_names == ["a", "b"] and len(ims) == 7
    assert sorted(p for p, _ in ims.skipped) == [str(root / "a" / "out.png"), str(root / "c")]
    assert all("--follow-links" in why for _, why in ims.skipped)
    followed = load_folder(root, size=(8, 8), follow_links=True)
    assert followed.class_names == ["a", "b", "c"] and len(followed) == 11 and followed.skipped == []


def test_hidden_files_in_class_folders_are_ignored_like_hidden_folders(tmp_path):
    root = make_folder(tmp_path / "d")
    (root / "a" / ".thumb.png").write_bytes(_img(99))
    (root / ".cache").mkdir()
    (root / ".cache" / "x.png").write_bytes(_img(98))
    ims = load_folder(root, size=(8, 8))
    assert ims.class_names == ["a", "b"] and len(ims) == 6 and ims.skipped == []


def test_a_class_with_no_readable_image_is_worded_plainly(tmp_path):
    root = make_folder(tmp_path / "d")
    (root / "c").mkdir()
    (root / "c" / "x.png").write_bytes(b"junk")
    with pytest.raises(DataError, match=r"have no readable images: c \(0\)"):
        load_folder(root, size=(8, 8))


@pytest.mark.parametrize("name, why", [("", "cannot be empty"), ("  ", "cannot be empty"),
                                       ("two\nlines", "control characters"), ("tab\there", "control characters"),
                                       ("bad\udcffbyte", "not valid UTF-8")])
def test_class_names_that_would_break_an_export_are_refused_at_the_source(name, why):
    imgs = np.zeros((2, 4, 4), np.uint8)
    with pytest.raises(DataError, match=why):
        ImageSet(imgs, [0, 1], ["ok", name])


def test_duplicate_class_names_are_refused():
    with pytest.raises(DataError, match="appears twice"):
        ImageSet(np.zeros((2, 4, 4), np.uint8), [0, 1], ["a", "a"])


@pytest.mark.parametrize("folder_name, why", [("two\nlines", "control characters"),
                                              (os.fsdecode(b"caf\xe9"), "not valid UTF-8")])
def test_class_folders_whose_names_cannot_be_class_names_are_refused(tmp_path, folder_name, why):
    root = make_folder(tmp_path / "d")
    (root / folder_name).mkdir()
    (root / folder_name / "0.png").write_bytes(_img(5))
    with pytest.raises(DataError, match=why):
        load_folder(root, size=(8, 8))


def test_an_idx_file_that_is_a_fifo_is_refused_without_blocking(tmp_path):
    from classmap_gui.core.data import read_idx

    for name in ("t10k-images-idx3-ubyte", "train-images-idx3-ubyte.gz"):
        os.mkfifo(tmp_path / name)
        with pytest.raises(DataError, match="FIFO"):
            read_idx(tmp_path / name)


def test_an_image_size_whose_set_cannot_fit_in_memory_is_refused_before_reading(tmp_path, monkeypatch):
    import classmap_gui.core.guards.limits as limits
    from classmap_gui.core.errors import ConfigError

    root = make_folder(tmp_path / "d")
    monkeypatch.setattr(limits, "available_memory", lambda: 1 << 20)  # a machine with 1 MB free
    with pytest.raises(ConfigError, match="image size: 6 images of 1024x1024 grey would need"):
        load_folder(root, size=(1024, 1024))
    assert len(load_folder(root, size=(8, 8))) == 6
