"""Export: the standalone predict.py gives the app's top-p classes on the same files, and refuses pickles."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import cv2
import numpy as np
import pytest

from classmap_gui.core.data import load_digits, read_image
from classmap_gui.core.errors import ConfigError, ModelFormatError
from classmap_gui.core.export.folder import export_recogniser
from classmap_gui.core.recogniser import Recogniser
from classmap_gui.core.train.training import TrainConfig, train

CONFIGS = {
    "kmeans": TrainConfig(features="kmeans", features_params={"n_centroids": 24, "n_patches": 3000, "patch_size": 4,
                                                              "random_state": 0, "n_jobs": 1},
                          bank="ova-liblinear", test_fraction=0.2),
    "kmeans-hard-hellinger": TrainConfig(features="kmeans", features_params={
        "n_centroids": 16, "n_patches": 2000, "patch_size": 3, "stride": 2, "encoder": "hard", "hellinger": True,
        "random_state": 0, "n_jobs": 1}, bank="ova-ridge", test_fraction=0.2),
    "hog": TrainConfig(features="hog", features_params={"cell_size": 4, "block_size": 8, "block_stride": 4},
                       bank="ova-ridge", test_fraction=0.2),
    "pixels": TrainConfig(features="pixels", features_params={"standardize": True}, bank="ova-liblinear",
                          test_fraction=0.2),
    "pixels+hog": TrainConfig(features="pixels+hog", features_params={"thumbnail": 6, "cell_size": 4, "block_size": 8,
                                                                      "block_stride": 4},
                              bank="ova-ridge", classmap={"d": 5, "p": 4, "refine": "v2"}, test_fraction=0.2),
    "pixels-all-pairs": TrainConfig(features="pixels", bank="all-pairs", test_fraction=0.2),
    "hog-compressive-rff": TrainConfig(features="hog", features_params={"cell_size": 4, "block_size": 8},
                                       bank="compressive", bank_params={"m": 300}, test_fraction=0.2),
    "kmeans-compressive-features": TrainConfig(features="kmeans", features_params={
        "n_centroids": 16, "n_patches": 2000, "patch_size": 4, "random_state": 0, "n_jobs": 1},
        bank="compressive", bank_params={"sketch": "features"}, test_fraction=0.2),
    "hog-classmap-v2": TrainConfig(features="hog", features_params={"cell_size": 4, "block_size": 8},
                                   bank="ova-liblinear", classmap={"d": 6, "p": 4, "refine": "v2"},
                                   test_fraction=0.2),
    # the one-click demo's kind of model: references from a 30x smoother second bank (issue 25 item 1)
    "hog-classmap-v2-reference-bank": TrainConfig(features="hog", features_params={"cell_size": 4, "block_size": 8},
                                                  bank="ova-ridge", bank_params={"alpha": 10.0},
                                                  classmap={"d": 6, "p": 4, "refine": "v2",
                                                            "reference_penalty": 30.0}, test_fraction=0.2),
    "pixels-classmap-v3-random": TrainConfig(features="pixels", bank="ova-ridge",
                                             classmap={"d": 5, "p": 5, "refine": "v3", "embedding": "random"},
                                             test_fraction=0.2),
    "cnn-compressive": TrainConfig(features="cnn", features_params={"kernel_size": 3, "width": 4},
                                   bank="compressive", bank_params={"sketch": "cnn", "m": 200}, test_fraction=0.2),
    "cnn-relu-ova": TrainConfig(features="cnn", features_params={"kernel_size": 3, "width": 4, "depth": 2,
                                                                 "final": "relu", "m": 100},
                                bank="ova-ridge", test_fraction=0.2),
    "hog-rbf": TrainConfig(features="hog", features_params={"cell_size": 4, "block_size": 8}, bank="ova-rbf",
                           test_fraction=0.2),
    "pixels-classmap-v1": TrainConfig(features="pixels", bank="all-pairs", classmap={"d": 8, "p": 4, "refine": "v1"},
                                      test_fraction=0.2),
    "rff-ova": TrainConfig(features="rff", features_params={"m": 200, "random_state": 0}, bank="ova-ridge",
                           test_fraction=0.2),
    # the shipped hand network (ONNX): onnxruntime in the app, OpenCV's dnn in predict.py
    "network-classmap": TrainConfig(features="network", bank="ova-ridge", classmap={"d": 5, "p": 4, "refine": "v3"},
                                    test_fraction=0.2),
}


@pytest.fixture(scope="module")
def digits():
    return load_digits(size=(16, 16))


@pytest.fixture(scope="module")
def image_files(tmp_path_factory, digits):
    """100 test images as PNG files of another size (20x20, so both sides resize) - what a user hands over."""
    folder = tmp_path_factory.mktemp("images")
    rng = np.random.default_rng(1)
    files = []
    for i in rng.choice(len(digits), 100, replace=False):
        f = folder / f"img{i:04d}.png"
        cv2.imwrite(str(f), cv2.resize(digits.images[i], (20, 20), interpolation=cv2.INTER_LINEAR))
        files.append(f)
    return files


def run_predict(folder: Path, files: list[Path], top: int) -> list[dict]:
    # A clean interpreter that cannot import classmap_gui: predict.py must stand alone.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    out = subprocess.run([sys.executable, "-I", str(folder / "predict.py"), *map(str, files), "--top", str(top),
                          "--json"], capture_output=True, text=True, env=env, cwd=str(folder), timeout=300)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


@pytest.mark.parametrize("name", list(CONFIGS))
def test_predict_py_gives_the_apps_top_classes_on_100_images(tmp_path, digits, image_files, name):
    rec = train(digits, CONFIGS[name]).recogniser
    folder = export_recogniser(rec, tmp_path / "export")
    top = 3
    rows = run_predict(folder, image_files, top)
    app = rec.predict([read_image(f, size=None, grey=rec.grey) for f in image_files], top=top)
    got = np.array([[c["index"] for c in r["top"]] for r in rows])
    scores = np.array([[c["score"] for c in r["top"]] for r in rows], np.float32)
    assert got.shape == (100, top)
    np.testing.assert_array_equal(got, app.top_classes)
    np.testing.assert_allclose(scores, app.top_scores, rtol=1e-4, atol=1e-4)
    assert [c["class"] for c in rows[0]["top"]] == [rec.class_names[i] for i in app.top_classes[0]]
    assert (folder / "labels.txt").read_text().splitlines()[3] == f"3\t{rec.class_names[3]}"
    assert_checked_keys(json.loads((folder / "model.json").read_text()))


@pytest.mark.skipif(not hasattr(cv2, "HOGDescriptor"), reason="OpenCV without HOGDescriptor: the fallback is all there is")
@pytest.mark.parametrize("name", ["hog-classmap-v2", "pixels+hog"])
def test_predict_py_without_hog_descriptor_gives_the_apps_classes(tmp_path, digits, image_files, name):
    # OpenCV 5 has no cv2.HOGDescriptor: a HOG model exported where it exists (backend "opencv") must still run,
    # on the app's numpy HOG, and name the app's classes (issue 47: it stopped with "model file is invalid").
    rec = train(digits, CONFIGS[name]).recogniser
    folder = export_recogniser(rec, tmp_path / "export")
    assert "opencv" in (folder / "model.json").read_text()
    runner = ("import runpy, sys, cv2; del cv2.HOGDescriptor; sys.argv = sys.argv[1:]; "
              "runpy.run_path(sys.argv[0], run_name='__main__')")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    out = subprocess.run([sys.executable, "-I", "-c", runner, str(folder / "predict.py"), *map(str, image_files),
                          "--top", "3", "--json"], capture_output=True, text=True, env=env, timeout=300)
    assert out.returncode == 0, out.stderr
    app = rec.predict([read_image(f, size=None, grey=rec.grey) for f in image_files], top=3)
    rows = json.loads(out.stdout)
    np.testing.assert_array_equal([[c["index"] for c in r["top"]] for r in rows], app.top_classes)
    np.testing.assert_allclose([[c["score"] for c in r["top"]] for r in rows], app.top_scores, atol=1e-2)


def assert_checked_keys(doc: dict) -> None:
    """predict.py requires of each component the settings its export writes (the classes' ``exports``): no more,
    so it reads every export, and no fewer, so a missing one is refused before it is used."""
    from classmap_gui.core.export.folder import spec_tables

    SPEC_KEYS = spec_tables()[1]

    specs = [doc["features"], *doc["features"].get("parts", []), doc["classifier"]]
    specs += [doc["classifier"]["map"]] if doc["classifier"].get("map") else []
    specs += [{**doc["classmap"], "type": "classmap"}] if doc["classmap"] else []
    for spec in specs:
        assert set(spec) - {"type"} == set(SPEC_KEYS[spec["type"]]), spec


def test_export_refuses_what_predict_py_cannot_reproduce(tmp_path, digits):
    """ClassMap over a kernel (rbf) bank is not re-implemented: refused with a message, nothing written."""
    small = digits.subset(np.arange(400))
    rec = train(small, TrainConfig(features="pixels", bank="ova-rbf", classmap={"d": 6, "p": 4, "refine": "v2"},
                                   test_fraction=0.2)).recogniser
    with pytest.raises(ConfigError, match="ClassMap"):
        export_recogniser(rec, tmp_path / "x")
    assert not (tmp_path / "x").exists()


def test_export_never_overwrites_a_folder_with_other_files(tmp_path, digits):
    rec = train(digits.subset(np.arange(300)), CONFIGS["pixels"]).recogniser
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("keep me")
    with pytest.raises(ConfigError, match="not empty"):
        export_recogniser(rec, tmp_path / "mine")
    assert (tmp_path / "mine" / "notes.txt").read_text() == "keep me"
    export_recogniser(rec, tmp_path / "exp")
    export_recogniser(rec, tmp_path / "exp", overwrite=True)  # an earlier export may be replaced


class _Evil:
    """Unpickling this runs os.system: the payload a hostile model file would carry."""

    def __init__(self, marker: Path):
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


def _plant_pickle(npz: Path, key: str, marker: Path) -> None:
    """Replace array ``key`` in ``npz`` by a pickled object array carrying the payload."""
    with zipfile.ZipFile(npz) as zf:
        members = {n: zf.read(n) for n in zf.namelist()}
    evil = np.empty(1, dtype=object)
    evil[0] = _Evil(marker)
    import io

    buf = io.BytesIO()
    np.save(buf, evil, allow_pickle=True)
    members[f"{key}.npy"] = buf.getvalue()
    with zipfile.ZipFile(npz, "w") as zf:
        for n, data in members.items():
            zf.writestr(n, data)


def test_a_model_file_holding_a_pickle_is_refused_and_runs_nothing(tmp_path, digits, image_files):
    rec = train(digits.subset(np.arange(300)), CONFIGS["pixels"]).recogniser
    marker = tmp_path / "pwned"
    folder = export_recogniser(rec, tmp_path / "export")
    _plant_pickle(folder / "arrays.npz", "classifier.coef", marker)
    out = subprocess.run([sys.executable, "-I", str(folder / "predict.py"), str(image_files[0])],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 2 and "pickle" in out.stderr and not marker.exists()
    # the app's own model format refuses it the same way
    model = rec.save(tmp_path / "model")
    key = next(n[:-4] for n in zipfile.ZipFile(model / "arrays.npz").namelist() if "coef" in n)
    _plant_pickle(model / "arrays.npz", key, marker)
    with pytest.raises(ModelFormatError, match="pickle"):
        Recogniser.load(model)
    assert not marker.exists()


def test_predict_py_runs_the_apps_own_numpy_code(tmp_path, digits):
    # The HOG, random-CNN, k-means pooling and ClassMap steps are the package's modules, pasted in:
    # every function of those modules appears in predict.py character for character.
    import ast
    import importlib

    from classmap_gui.core.export.folder import INLINED, predict_source

    src = predict_source()
    for name in INLINED:
        mod = importlib.import_module(name)
        text = Path(mod.__file__).read_text(encoding="utf-8")
        funcs = [n for n in ast.parse(text).body if isinstance(n, ast.FunctionDef)]
        assert funcs, name
        for f in funcs:
            assert ast.get_source_segment(text, f) in src, f"{name}.{f.name} is not predict.py's code"
    # and the exported file is that text
    rec = train(digits.subset(np.arange(300)), CONFIGS["pixels"]).recogniser
    folder = export_recogniser(rec, tmp_path / "export")
    assert (folder / "predict.py").read_text(encoding="utf-8") == src


def test_an_inlined_module_may_use_numpy_and_opencv_only(monkeypatch, tmp_path):
    from classmap_gui.core.export import folder as export

    bad = tmp_path / "bad_ops.py"
    bad.write_text('"""doc"""\nimport numpy as np\nfrom scipy import sparse\n\n\ndef f():\n    return 1\n')
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(export, "INLINED", (*export.INLINED, "bad_ops"))
    with pytest.raises(RuntimeError, match="scipy"):
        export._module_body("bad_ops", [])
    with pytest.raises(RuntimeError, match="not listed"):
        export._module_body("json", [])
    # another module of the package may be imported only when it is inlined too, before this one
    pkg = tmp_path / "pkgx"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "shared.py").write_text("X = 1\n")
    (pkg / "rel_ops.py").write_text('"""doc"""\nfrom .shared import X\n\n\ndef f():\n    return X\n')
    monkeypatch.setattr(export, "INLINED", (*export.INLINED, "pkgx.rel_ops"))
    with pytest.raises(RuntimeError, match="pkgx.shared"):
        export._module_body("pkgx.rel_ops", [])
    assert "return X" in export._module_body("pkgx.rel_ops", ["pkgx.shared"])


def test_unreadable_images_are_reported_and_the_rest_classified(tmp_path, digits, image_files):
    rec = train(digits.subset(np.arange(300)), CONFIGS["pixels"]).recogniser
    folder = export_recogniser(rec, tmp_path / "export")
    broken, empty, missing = tmp_path / "broken.png", tmp_path / "empty.jpg", tmp_path / "missing.png"
    broken.write_bytes(b"\x89PNG not really")
    empty.write_bytes(b"")
    files = [image_files[0], broken, image_files[1], empty, missing]
    out = subprocess.run([sys.executable, "-I", str(folder / "predict.py"), *map(str, files), "--json"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 1
    rows = json.loads(out.stdout)
    assert [r["image"] for r in rows] == [str(image_files[0]), str(image_files[1])]
    errors = out.stderr.strip().splitlines()
    assert len(errors) == 3
    for path, line in zip((broken, empty, missing), errors):
        assert line.startswith(f"{path}: cannot read image: ") and len(line) > len(f"{path}: cannot read image: ")
    app = rec.predict([read_image(f, size=None, grey=rec.grey) for f in image_files[:2]], top=5)
    assert [[c["index"] for c in r["top"]] for r in rows] == app.top_classes.tolist()
    # all readable: exit 0
    ok = subprocess.run([sys.executable, "-I", str(folder / "predict.py"), str(image_files[0])],
                        capture_output=True, text=True, timeout=120)
    assert ok.returncode == 0 and ok.stderr == "" and str(image_files[0]) in ok.stdout


def test_labels_txt_keeps_every_class_name_on_its_line(tmp_path, digits):
    names = ["plain", "two words", "back\\slash", "#hash", "quote'\"s", "ünï 字", "a\u00a0nbsp"] + \
        [f"c{i}" for i in range(3)]
    ims = digits.subset(np.arange(300))
    ims.class_names = names
    rec = train(ims, CONFIGS["pixels"]).recogniser
    folder = export_recogniser(rec, tmp_path / "export")
    lines = (folder / "labels.txt").read_bytes().decode("utf-8").split("\n")[:-1]
    assert [line.split("\t", 1)[1] for line in lines] == names
    assert [int(line.split("\t", 1)[0]) for line in lines] == list(range(len(names)))


def test_the_export_folder_follows_the_users_umask(tmp_path, digits):
    # shared, not private: a 0700 folder would hide predict.py from the colleague it is meant for
    rec = train(digits.subset(np.arange(300)), CONFIGS["pixels"]).recogniser
    old = os.umask(0o022)
    try:
        folder = export_recogniser(rec, tmp_path / "export")
    finally:
        os.umask(old)
    assert folder.stat().st_mode & 0o777 == 0o755
    assert (folder / "predict.py").stat().st_mode & 0o755 == 0o755


def test_requirements_txt_names_what_predict_py_needs_with_the_apps_lower_bounds(tmp_path, digits):
    import tomllib

    from classmap_gui.core.export.folder import REQUIREMENTS

    folder = export_recogniser(train(digits.subset(np.arange(300)), CONFIGS["pixels"]).recogniser, tmp_path / "e")
    reqs = [line for line in (folder / "requirements.txt").read_text().splitlines() if not line.startswith("#")]
    assert reqs == list(REQUIREMENTS)
    assert all(r in (folder / "README.txt").read_text() for r in reqs) and "requirements.txt" in (folder / "README.txt").read_text()
    app = tomllib.loads((Path(__file__).resolve().parents[3] / "pyproject.toml").read_text())["project"]["dependencies"]
    for req in reqs:  # the app's lower bound, and OpenCV 5 allowed: the app itself runs on 4 and 5
        name, low = req.split(",")[0].split(">=")
        assert any(d.split("#")[0].strip().startswith(f"{name}>={low}") for d in app), (req, app)
    assert "opencv-python-headless>=4.8,<6" in reqs


@pytest.mark.slow
def test_predict_py_in_a_fresh_venv_with_opencv_5_names_the_apps_classes_on_a_folder(tmp_path, digits, capsys):
    # Issue 47's blocker: a user's venv from requirements.txt gets OpenCV 5 (no HOGDescriptor). predict.py on a
    # folder must give `classmap predict`'s labels on the same folder, for a HOG + ClassMap model and the network.
    from classmap_gui.cli import main

    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    py = venv / "bin" / "python"
    models = {name: train(digits.subset(np.arange(800)), CONFIGS[name]).recogniser
              for name in ("hog-classmap-v2", "network-classmap")}
    exports = {name: export_recogniser(rec, tmp_path / f"export-{name}") for name, rec in models.items()}
    pip = subprocess.run([str(py), "-m", "pip", "install", "-q", "-r", str(exports["hog-classmap-v2"] / "requirements.txt"),
                          "opencv-python-headless>=5"], capture_output=True, text=True, timeout=900)
    assert pip.returncode == 0, f"pip could not install requirements.txt with OpenCV 5 (network?): {pip.stderr[-2000:]}"
    probe = subprocess.run([str(py), "-c", "import cv2; print(cv2.__version__, hasattr(cv2, 'HOGDescriptor'))"],
                           capture_output=True, text=True, check=True)
    assert probe.stdout.split()[0].startswith("5.") and probe.stdout.split()[1] == "False", probe.stdout
    images = tmp_path / "images"
    images.mkdir()
    for i in range(800, 860):
        cv2.imwrite(str(images / f"img{i:04d}.png"), cv2.resize(digits.images[i], (20, 20)))
    (images / "notes.txt").write_text("not an image: both leave it out")
    for name, rec in models.items():
        rec.save(tmp_path / f"model-{name}")
        capsys.readouterr()
        assert main(["predict", str(tmp_path / f"model-{name}"), str(images), "--top", "3", "--json"]) == 0
        app = json.loads(capsys.readouterr().out)["predictions"]
        out = subprocess.run([str(py), "-I", str(exports[name] / "predict.py"), str(images), "--top", "3", "--json"],
                             capture_output=True, text=True, timeout=300, cwd=str(tmp_path))
        assert out.returncode == 0, out.stderr
        rows = json.loads(out.stdout)
        assert len(rows) == len(app) == 60
        assert [r["image"] for r in rows] == [r["image"] for r in app]
        assert [r["top"][0]["class"] for r in rows] == [r["label"] for r in app], name
        assert [[t["class"] for t in r["top"]] for r in rows] == [[t["class"] for t in r["top"]] for r in app], name


def test_an_added_class_is_known_to_the_exported_predictor(tmp_path, digits):
    """A class added without retraining (issue 48) is exported like the others: predict.py names it."""
    config = TrainConfig(features="hog", features_params={"cell_size": 4, "block_size": 8}, bank="ova-ridge",
                         bank_params={"alpha": 10.0, "keep_statistics": "always"},
                         classmap={"d": 5, "p": 4, "refine": "v2"}, test_fraction=0.2)
    old = digits.labels != 9
    rec = train(digits.select_classes(list(range(9))), config).recogniser
    nines = digits.images[~old]
    rec.add_class("nine", nines[:100])
    files = []
    for i, img in enumerate(nines[100:130]):
        files.append(tmp_path / f"nine{i}.png")
        cv2.imwrite(str(files[-1]), img)
    rows = run_predict(export_recogniser(rec, tmp_path / "export"), files, 1)
    app = rec.predict(nines[100:130], top=1).labels
    assert [r["top"][0]["index"] for r in rows] == app.tolist()
    assert sum(r["top"][0]["class"] == "nine" for r in rows) >= 15
