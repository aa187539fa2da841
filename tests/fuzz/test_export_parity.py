"""Issue 40 item 1: the exported predict.py refuses what the app refuses, the same way. One list of hostile
cases (:mod:`survey_cases`) runs over ``classmap predict`` on a saved model and over the model's export,
side by side: each ends with its exit status and exactly one line on stderr naming the file and what is
wrong, nothing else (no traceback, no OpenCV log line), and no result printed."""
from __future__ import annotations

import json
import shutil

import cv2
import numpy as np
import pytest
from hostile_helpers import tiny_set
from measured import classmap, run
from survey_cases import CASES

from classmap_gui.core.export.folder import export_recogniser
from classmap_gui.core.train.training import TrainConfig, train

pytestmark = pytest.mark.timeout(600)


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    root = tmp_path_factory.mktemp("parity")
    data = tiny_set(n_per_class=10, classes=tuple("abcdef"), size=(12, 12))
    rec = train(data, TrainConfig(features="kmeans", features_params={
        "n_centroids": 8, "n_patches": 600, "patch_size": 3, "random_state": 0, "n_jobs": 1},
        bank="ova-ridge", test_fraction=0.2, seed=0)).recogniser
    model = rec.save(root / "model")
    export = export_recogniser(rec, root / "export")
    images = root / "images"
    images.mkdir()
    cv2.imwrite(str(images / "image.png"), data.images[0])
    frames = [np.ascontiguousarray(np.repeat(img[:, :, None], 3, 2)) for img in data.images[:3]]
    assert cv2.imwritemulti(str(images / "animated.gif"), frames)
    return {"app": model, "export": export, "images": images}


def _run(fmt: str, folder, image, args):
    if fmt == "app":
        return classmap("predict", str(folder), str(image), *args)
    return run(["python", "-I", str(folder / "predict.py"), str(image), *args])


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
@pytest.mark.parametrize("fmt", ["app", "export"])
def test_each_hostile_case_ends_in_one_line_naming_what_is_wrong(made, tmp_path, fmt, case):
    folder = tmp_path / fmt
    shutil.copytree(made[fmt], folder, symlinks=True)
    case.mutate(folder, fmt)
    image = made["images"] / case.image
    r = _run(fmt, folder, image, case.args)
    assert r.code == case.code, (r.code, r.err[-2000:])
    lines = r.err_lines
    assert len(lines) == 1, r.err[-2000:]
    line = lines[0]
    if case.code == 2:
        assert line.startswith("classmap: error:" if fmt == "app" else "predict.py: error:"), line
        assert r.out.strip() == "", r.out
    named = {"model": str(folder), "image": str(image), "none": ""}[case.names]
    assert named in line, (named, line)
    for needle in case.needles:
        assert needle in line, (needle, line)


def test_the_unmutated_model_works_in_both(made):
    """The cases' baseline: the same model, image and arguments classify cleanly in both."""
    image = made["images"] / "image.png"
    app, export = _run("app", made["app"], image, ("--top", "2")), _run("export", made["export"], image, ("--top", "2"))
    assert app.code == 0 and export.code == 0 and not app.err_lines and not export.err_lines, (app.err, export.err)
    assert app.out.split(":")[1].split()[0] == export.out.split("\t")[1].split()[0]  # the same best class


def _broken_files(folder, good):
    """A truncated BMP and PNG (OpenCV logs "can't read header" / "PNG input buffer is incomplete") and a TIFF
    with duplicated tags out of order (libtiff warns "TIFFReadDirectoryCheckOrder" and decodes it)."""
    from hostile_files import tiff

    img = cv2.imread(str(good), cv2.IMREAD_GRAYSCALE)
    out = {}
    for ext in ("bmp", "png"):
        data = cv2.imencode(f".{ext}", cv2.resize(img, (64, 64)))[1].tobytes()
        out[ext] = folder / f"cut.{ext}"
        out[ext].write_bytes(data[:len(data) // 2])
    out["tif"] = folder / "dup.tif"
    out["tif"].write_bytes(tiff(64, 64, trick="duplicate"))
    return out


@pytest.mark.parametrize("fmt", ["app", "export"])
def test_broken_images_give_the_products_line_and_opencv_says_nothing(made, tmp_path, fmt):
    good = made["images"] / "image.png"
    broken = _broken_files(tmp_path, good)
    r = _run(fmt, made[fmt], broken["bmp"], (str(broken["png"]), str(broken["tif"]), str(good), "--top", "1"))
    assert r.code == 1, (r.code, r.err)
    assert r.err_lines == [f"{broken['bmp']}: cannot read image: the BMP data is corrupt, truncated or of an "
                           f"unsupported kind",
                           f"{broken['png']}: cannot read image: the PNG data is corrupt, truncated or of an "
                           f"unsupported kind"], r.err  # no "[ WARN", "[ERROR", "TIFFReadDirectoryCheckOrder"
    assert len(r.out.splitlines()) == 2 and str(broken["tif"]) in r.out and str(good) in r.out


@pytest.mark.parametrize("fmt", ["app", "export"])
def test_a_file_name_cannot_forge_a_result_line(made, tmp_path, fmt):
    forged = tmp_path / "x.png\nforged.png: b   (b 9.999)\t\x1b[2K.png"
    shutil.copy(made["images"] / "image.png", forged)
    r = _run(fmt, made[fmt], forged, ("--top", "1"))
    assert r.code == 0 and not r.err_lines, r.err
    lines = r.out.splitlines()
    assert len(lines) == 1 and "x.png\\nforged.png: b   (b 9.999)\\t\\x1b[2K.png" in lines[0], r.out
    missing = tmp_path / "gone\nforged.png"
    r = _run(fmt, made[fmt], missing, ())
    assert r.code == 1 and r.err_lines == [f"{tmp_path}/gone\\nforged.png: cannot read image: No such file or "
                                           f"directory"], r.err
    r = _run(fmt, made[fmt], forged, ("--json",))  # JSON keeps the name exactly, escaped its own way
    rows = json.loads(r.out)
    assert [row["image"] for row in (rows["predictions"] if fmt == "app" else rows)] == [str(forged)]
