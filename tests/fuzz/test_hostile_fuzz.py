"""Random hostile bytes with lying sizes (issue 13): npz members whose header, manifest and real
length disagree (zip bombs among them) and images whose headers declare random sizes. Each must
end in a clear error or a correct load, under 64 MB of peak memory, within a deadline."""
from __future__ import annotations

import json
import shutil
import struct
import tempfile
import zipfile
import zlib
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from classmap_gui.core.data.folder import ImageReadError, read_image
from classmap_gui.core.errors import ModelFormatError
from classmap_gui.core.recogniser import Recogniser

from hostile_helpers import PEAK_BYTES, peak_memory, tiny_model

# The per-example deadline catches a hang, not slowness: generous, so a loaded machine passes.
HOSTILE = settings(max_examples=30, deadline=60_000, derandomize=True,
                   suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
pytestmark = pytest.mark.timeout(300)

DTYPES = st.sampled_from(["<f4", "<f8", "<i8", "|u1", "|b1", "<f2", "|O", "<U3", ">i4"])
SHAPES = st.lists(st.integers(0, 3000), min_size=0, max_size=3).map(tuple)


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    return tiny_model().save(tmp_path_factory.mktemp("hf") / "model")


def _npy_header(dtype: str, shape: tuple) -> bytes:
    out = bytearray()

    class Sink:
        def write(self, b):
            out.extend(b)

    np.lib.format.write_array_header_1_0(Sink(), {"descr": dtype, "fortran_order": False, "shape": shape})
    return bytes(out)


@HOSTILE
@example(header=("<f4", (10,)), payload=96 << 20, compress=True, lie="none")  # a bomb behind a small header
@example(header=("<f4", (3000, 3000)), payload=96 << 20, compress=True, lie="manifest-shape")  # declared 36 MB
@example(header=("<f8", (3000, 3000, 3000)), payload=1 << 20, compress=False, lie="manifest-shape")  # 216 GB
@example(header=("|O", (3,)), payload=64, compress=True, lie="manifest-dtype")  # a pickle
@given(header=st.tuples(DTYPES, SHAPES), payload=st.integers(0, 96 << 20), compress=st.booleans(),
       lie=st.sampled_from(["none", "manifest-dtype", "manifest-shape", "name"]))
def test_npz_members_with_lying_sizes_end_in_a_clear_error_at_bounded_memory(model_dir, header, payload, compress,
                                                                             lie):
    """One member of a real model's arrays.npz is replaced by a header and ``payload`` bytes of zeros."""
    dtype, shape = header
    with tempfile.TemporaryDirectory() as tmp:
        target = Path(tmp) / "m"
        shutil.copytree(model_dir, target)
        doc = json.loads((target / "model.json").read_text())
        key = next(iter(doc["arrays"]))
        if lie == "manifest-dtype":
            doc["arrays"][key]["dtype"] = dtype
        elif lie == "manifest-shape":
            doc["arrays"][key]["shape"] = list(shape)
        (target / "model.json").write_text(json.dumps(doc))
        with np.load(model_dir / "arrays.npz") as z:
            members = {k: z[k] for k in z.files}
        with zipfile.ZipFile(target / "arrays.npz", "w", zipfile.ZIP_DEFLATED if compress else zipfile.ZIP_STORED) as zf:
            for k, v in members.items():
                name = f"{k}.npy" if not (k == key and lie == "name") else "../evil.npy"
                with zf.open(name, "w", force_zip64=True) as fh:
                    if k != key:
                        np.lib.format.write_array(fh, v)
                        continue
                    fh.write(_npy_header(dtype, shape))
                    chunk, left = bytes(1 << 20), payload
                    while left > 0:
                        fh.write(chunk[:min(left, len(chunk))])
                        left -= len(chunk)
        with peak_memory() as peak:
            try:
                Recogniser.load(target)
                loaded = True
            except ModelFormatError as exc:
                loaded = False
                assert str(target) in str(exc)
        assert peak[0] < PEAK_BYTES + _declared(doc)  # the manifest's budget-checked size may be allocated
        assert not loaded or (lie == "none" and payload < 1 << 20)


def _declared(doc: dict) -> int:
    total = 0
    for spec in doc["arrays"].values():
        try:
            total += int(np.prod(spec["shape"], dtype=object)) * np.dtype(spec["dtype"]).itemsize
        except TypeError:
            pass
    return total


def _png(w: int, h: int, body: bytes) -> bytes:
    ihdr = b"IHDR" + struct.pack(">IIBBBBB", w, h, 8, 0, 0, 0, 0)
    idat = zlib.compress(body)
    return (b"\x89PNG\r\n\x1a\n" + struct.pack(">I", 13) + ihdr + struct.pack(">I", zlib.crc32(ihdr))
            + struct.pack(">I", len(idat)) + b"IDAT" + idat + struct.pack(">I", zlib.crc32(b"IDAT" + idat))
            + struct.pack(">I", 0) + b"IEND" + struct.pack(">I", zlib.crc32(b"IEND")))


@settings(HOSTILE, max_examples=60)
@given(w=st.integers(0, 2 ** 31 - 1), h=st.integers(0, 2 ** 31 - 1), body=st.binary(max_size=256),
       limit=st.sampled_from([10_000, 1_000_000, 50_000_000]))
def test_png_headers_declaring_any_size_are_read_or_refused_at_bounded_memory(w, h, body, limit):
    with tempfile.TemporaryDirectory() as tmp:
        f = Path(tmp) / "x.png"
        f.write_bytes(_png(w, h, body))
        with peak_memory() as peak:
            try:
                img = read_image(f, size=(8, 8), max_pixels=limit)
            except ImageReadError as exc:
                assert exc.path == str(f) and exc.reason
                if w * h > limit:
                    assert "megapixels" in exc.reason
            else:
                assert img.shape == (8, 8) and 0 < w * h <= limit
        # tracemalloc sees Python and numpy buffers; OpenCV's own buffers are bounded by the pixel
        # limit checked above before it runs (at most ``limit`` pixels are ever decoded)
        assert peak[0] < PEAK_BYTES
