"""Issue 26 item 1 (and 5 for images): a TIFF whose header a careless reader misreads is held to the
pixel limit before decoding, in `train`, `predict` and the exported predict.py, each run in a child
process whose peak memory stays within 300 MB of the same command on a harmless image."""
from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import cv2
import numpy as np
import pytest

from classmap_gui.core.data.folder import ImageReadError, read_image
from classmap_gui.core.data.image_header import image_dimensions
from hostile_files import tiff
from measured import assert_bounded, classmap, run, train_and_export

pytestmark = pytest.mark.timeout(600)
SIDE = 20000  # 400 megapixels: 0.4-1.2 GB decoded, ~400 KB on disk
TRICKS = [{"trick": "duplicate"}, {"trick": "long8"}, {"big": True}, {"big": True, "trick": "duplicate"}]


def _name(kw: dict) -> str:
    return "-".join(str(v) for v in kw.values()).replace("True", "bigtiff")


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    root = tmp_path_factory.mktemp("tiffs")
    made = train_and_export(root)
    data, model, export = made["data"], made["model"], made["export"]
    bombs = {}
    for kw in TRICKS:
        bombs[_name(kw)] = root / f"{_name(kw)}.tif"
        bombs[_name(kw)].write_bytes(tiff(SIDE, SIDE, **kw))
    good = root / "good.png"
    shutil.copy(data / "c0" / "0.png", good)
    return {"data": data, "model": model, "export": export, "bombs": bombs, "good": good, "root": root}


@pytest.mark.parametrize("kw", TRICKS, ids=_name)
def test_the_header_reader_sees_the_size_libtiff_decodes(kw):
    data = tiff(40, 30, **kw)
    assert image_dimensions(data) == ("tiff", 40, 30)
    decoded = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_UNCHANGED)
    assert decoded.shape == (30, 40)


def test_a_valid_float32_tiff_is_read_not_called_corrupt(tmp_path):
    f = tmp_path / "f.tif"
    ramp = np.tile(np.linspace(0, 1, 40, dtype=np.float32), (30, 1))
    assert cv2.imwrite(str(f), ramp)
    img = read_image(f, size=None, grey=True)
    assert img.dtype == np.uint8 and img.shape == (30, 40) and img[0, 0] == 0 and img[0, -1] == 255


def test_a_tiff_past_the_limit_is_refused_in_process_before_decoding():
    with pytest.raises(ImageReadError, match="megapixels"):
        read_image_bytes = tiff(SIDE, SIDE, trick="duplicate")
        path = Path(os.environ.get("TMPDIR", "/tmp")) / f"cm-dup-{os.getpid()}.tif"
        path.write_bytes(read_image_bytes)
        try:
            read_image(path)
        finally:
            path.unlink()


@pytest.mark.parametrize("which", [_name(kw) for kw in TRICKS])
def test_predict_skips_the_tiff_with_one_line_at_bounded_memory(setup, which):
    base = classmap("predict", str(setup["model"]), str(setup["good"]))
    assert base.code == 0
    bomb = setup["bombs"][which]
    r = classmap("predict", str(setup["model"]), str(bomb), str(setup["good"]))
    assert r.code == 1 and len(r.err_lines) == 1, r.err
    assert str(bomb) in r.err_lines[0] and "megapixels" in r.err_lines[0]
    assert str(setup["good"]) in r.out  # the other image is still classified
    assert_bounded(r, base)


def test_train_skips_the_tiff_with_a_note_at_bounded_memory(setup, tmp_path):
    args = ["--features", "pixels", "--bank", "ova-ridge", "--size", "8x8"]
    data = tmp_path / "data"
    shutil.copytree(setup["data"], data)
    base = classmap("train", "--data", str(data), *args, "--out", str(tmp_path / "m0"))
    assert base.code == 0
    shutil.copy(setup["bombs"]["long8"], data / "c1" / "bomb.tif")
    r = classmap("train", "--data", str(data), *args, "--out", str(tmp_path / "m1"))
    assert r.code == 0, r.err
    notes = [ln for ln in r.err_lines if "bomb.tif" in ln]
    assert len(notes) == 1 and notes[0].startswith("note: skipped") and "megapixels" in notes[0]
    assert_bounded(r, base)


@pytest.mark.parametrize("which", ["duplicate", "long8", "bigtiff"])
def test_the_exported_predictor_skips_the_tiff_at_bounded_memory(setup, which):
    predict = str(setup["export"] / "predict.py")
    base = run(["python", "-I", predict, str(setup["good"])])
    assert base.code == 0, base.err
    r = run(["python", "-I", predict, str(setup["bombs"][which]), str(setup["good"])])
    assert r.code == 1 and len(r.err_lines) == 1 and "cannot read image" in r.err_lines[0], r.err
    assert "pixels" in r.err_lines[0] and str(setup["good"]) in r.out
    assert_bounded(r, base)


def test_the_exported_predictor_reads_a_float32_tiff_as_the_app_does(setup, tmp_path):
    f = tmp_path / "f.tif"
    assert cv2.imwrite(str(f), np.tile(np.linspace(0, 1, 8, dtype=np.float32), (8, 1)))
    app = classmap("predict", "--json", "--top", "3", str(setup["model"]), str(f))
    exported = run(["python", "-I", str(setup["export"] / "predict.py"), "--json", "--top", "3", str(f)])
    assert app.code == 0 and exported.code == 0, (app.err, exported.err)
    rows = json.loads(app.out)
    rows = rows["predictions"] if isinstance(rows, dict) else rows
    assert [t["class"] for t in rows[0]["top"]] == [t["class"] for t in json.loads(exported.out)[0]["top"]]


def test_the_exported_predictor_does_not_hang_on_a_fifo_image(setup, tmp_path):
    fifo = tmp_path / "image.png"
    os.mkfifo(fifo)
    r = run(["python", "-I", str(setup["export"] / "predict.py"), str(fifo), str(setup["good"])], timeout=60)
    assert r.code == 1 and len(r.err_lines) == 1 and "not a regular file" in r.err_lines[0], r.err
