"""Property-based fuzzing of every loader: corrupt and hostile inputs end in a documented error.

Each loader gets bytes or JSON mutated by hypothesis and must either load or raise one of the
errors of ``classmap_gui.core.errors`` (a ``ClassMapError``) - never another exception, a crash
or a hang (deadline per example, pytest-timeout per test). Loaders: the model store
(``Recogniser.load``), project folders and ``.cmproj`` archives, the image-folder loader, the
IDX reader, and the exported model reader of ``predict.py``.
"""
from __future__ import annotations

import copy
import gzip
import json
import shutil
import tempfile
import tracemalloc
import zipfile
from pathlib import Path

import cv2
import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from classmap_gui.core.data import ImageSet, load_digits, load_folder, read_idx
from classmap_gui.core.data.folder import fit_size
from classmap_gui.core.errors import ClassMapError
from classmap_gui.core.recogniser import Recogniser
from classmap_gui.core.project import Project, load_project, project_info, save_project
from classmap_gui.core.train.training import TrainConfig, train

# The per-example deadline catches a hang, not slowness: generous, so a loaded machine passes.
FUZZ = settings(max_examples=40, deadline=60_000, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                       HealthCheck.function_scoped_fixture])
pytestmark = pytest.mark.timeout(600)

JSON = st.recursive(st.none() | st.booleans() | st.integers(-2 ** 70, 2 ** 70) | st.floats(allow_nan=True)
                    | st.text(max_size=20),
                    lambda kids: st.lists(kids, max_size=4) | st.dictionaries(st.text(max_size=8), kids, max_size=4),
                    max_leaves=10)


#: Peak memory a damaged file may cost (issue 13: 64 MB plus its declared, budget-checked size;
#: the files here declare kilobytes).
PEAK_BYTES = 64 * 1024 * 1024


def settles(fn) -> None:
    """Run ``fn``: loading fine or a ClassMapError are the two allowed outcomes, and either way the
    peak of Python/numpy allocations stays under PEAK_BYTES (tracemalloc sees numpy's buffers)."""
    tracemalloc.start()
    try:
        fn()
    except ClassMapError:
        pass
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    assert peak < PEAK_BYTES, f"a damaged file cost {peak / 2 ** 20:.0f} MB"


def _paths(doc, prefix=()):
    """Every path into a JSON document (dict keys / list indices)."""
    yield prefix
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield from _paths(v, prefix + (k,))
    elif isinstance(doc, list):
        for i, v in enumerate(doc[:6]):
            yield from _paths(v, prefix + (i,))


def _replace(doc, path, value):
    if not path:
        return value
    doc = copy.deepcopy(doc)
    node = doc
    for p in path[:-1]:
        node = node[p]
    node[path[-1]] = value
    return doc


def _mutate_bytes(data: bytes, edits: list[tuple[int, int]], cut: float | None) -> bytes:
    b = bytearray(data)
    for pos, val in edits:
        if b:
            b[pos % len(b)] = val
    if cut is not None:
        b = b[: int(len(b) * cut)]
    return bytes(b)


EDITS = st.lists(st.tuples(st.integers(0, 2 ** 31), st.integers(0, 255)), max_size=8)
CUT = st.none() | st.floats(0.0, 1.0)


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    ims = load_digits().subset(np.arange(300))
    cfg = TrainConfig(features="kmeans", features_params={"n_centroids": 8, "n_patches": 500, "patch_size": 3,
                                                          "random_state": 0, "n_jobs": 1},
                      bank="ova-ridge", test_fraction=0.2)
    rec = train(ims, cfg).recogniser
    return rec.save(tmp_path_factory.mktemp("fuzz") / "model")


# ---------------------------------------------------------------- model store

@FUZZ
@given(data=st.data())
def test_model_json_mutations_end_in_a_documented_error(model_dir, data):
    doc = json.loads((model_dir / "model.json").read_text())
    paths = list(_paths(doc))
    path = data.draw(st.sampled_from(paths))
    value = data.draw(JSON)
    with tempfile.TemporaryDirectory() as tmp:
        target = Path(tmp) / "m"
        shutil.copytree(model_dir, target)
        (target / "model.json").write_text(json.dumps(_replace(doc, path, value)))
        settles(lambda: Recogniser.load(target))


@FUZZ
@given(edits=EDITS, cut=CUT, which=st.sampled_from(["model.json", "arrays.npz"]))
def test_model_byte_corruption_ends_in_a_documented_error(model_dir, edits, cut, which):
    with tempfile.TemporaryDirectory() as tmp:
        target = Path(tmp) / "m"
        shutil.copytree(model_dir, target)
        f = target / which
        f.write_bytes(_mutate_bytes(f.read_bytes(), edits, cut))
        settles(lambda: Recogniser.load(target))


# ---------------------------------------------------------------- projects

def _small_project() -> Project:
    rng = np.random.default_rng(0)
    ims = ImageSet(rng.integers(0, 256, (6, 8, 8), dtype=np.uint8), np.arange(6) % 3, ["a", "b", "c"], name="fz")
    return Project(ims, settings={"x": 1})


@pytest.fixture(scope="module")
def project_files(tmp_path_factory):
    root = tmp_path_factory.mktemp("proj")
    return save_project(_small_project(), root / "p"), save_project(_small_project(), root / "p.cmproj")


@FUZZ
@given(data=st.data())
def test_project_manifest_mutations_end_in_a_documented_error(project_files, data):
    folder, _ = project_files
    doc = json.loads((folder / "project.json").read_text())
    path = data.draw(st.sampled_from(list(_paths(doc))))
    value = data.draw(JSON)
    with tempfile.TemporaryDirectory() as tmp:
        target = Path(tmp) / "p"
        shutil.copytree(folder, target)
        (target / "project.json").write_text(json.dumps(_replace(doc, path, value)))
        settles(lambda: load_project(target))


@FUZZ
@given(edits=EDITS, cut=CUT)
def test_project_archive_byte_corruption_ends_in_a_documented_error(project_files, edits, cut):
    _, archive = project_files
    with tempfile.TemporaryDirectory() as tmp:
        target = Path(tmp) / "p.cmproj"
        target.write_bytes(_mutate_bytes(archive.read_bytes(), edits, cut))
        settles(lambda: load_project(target))
        settles(lambda: project_info(target))


MEMBER = st.sampled_from(["project.json", "images/0000-a/000000.png", "../x", "/abs", "images/../../x", "a\\b",
                          "model/model.json", "captures/c.png", "images/", "", "project.json/x", "C:x"])


@pytest.mark.filterwarnings("ignore:Duplicate name")
@settings(FUZZ, max_examples=150)
@given(members=st.lists(st.tuples(MEMBER, st.binary(max_size=64), st.integers(0, 0o177777)), max_size=6))
def test_hostile_archives_end_in_a_documented_error_and_write_nothing_outside(members):
    with tempfile.TemporaryDirectory() as tmp:
        target = Path(tmp) / "sub" / "h.cmproj"
        target.parent.mkdir()
        with zipfile.ZipFile(target, "w") as zf:
            for name, data, mode in members:
                info = zipfile.ZipInfo(name or "x")
                info.create_system = 3
                info.external_attr = mode << 16
                zf.writestr(info, data)
        settles(lambda: load_project(target))
        assert sorted(p.name for p in Path(tmp).iterdir()) == ["sub"]


# ---------------------------------------------------------------- images and IDX

_PNG = cv2.imencode(".png", np.arange(64, dtype=np.uint8).reshape(8, 8))[1].tobytes()
_JPG = cv2.imencode(".jpg", np.arange(64, dtype=np.uint8).reshape(8, 8))[1].tobytes()


@FUZZ
@given(files=st.lists(st.tuples(st.sampled_from([_PNG, _JPG, b""]), EDITS, CUT,
                                st.sampled_from([".png", ".jpg", ".bmp"])), min_size=1, max_size=5),
       n_classes=st.integers(1, 3))
def test_image_folder_loader_skips_or_reports_every_bad_file(files, n_classes):
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for i, (base, edits, cut, ext) in enumerate(files):
            d = root / f"class{i % n_classes}"
            d.mkdir(exist_ok=True)
            (d / f"f{i}{ext}").write_bytes(_mutate_bytes(base, edits, cut))
        intact = {str(root / f"class{i % n_classes}" / f"f{i}{ext}")
                  for i, (base, edits, cut, ext) in enumerate(files) if base and not edits and cut in (None, 1.0)}
        result = []
        settles(lambda: result.append(load_folder(root, size=(8, 8))))
        if not result:  # refused as a whole: only when some class kept no readable image
            assert len({f"class{i % n_classes}" for i in range(len(files))}) > len(
                {Path(p).parent.name for p in intact})
            return
        ims = result[0]
        assert intact <= set(ims.sources)  # an undamaged file is never skipped
        assert all(reason for _, reason in ims.skipped)
        for src, img in zip(ims.sources, ims.images):  # what is loaded is what OpenCV decodes from that file
            ref = cv2.imdecode(np.fromfile(src, np.uint8), cv2.IMREAD_GRAYSCALE)
            assert np.array_equal(img, fit_size(ref, (8, 8)))


def _idx_bytes() -> bytes:
    arr = np.arange(2 * 3 * 4, dtype=np.uint8).reshape(2, 3, 4)
    return bytes([0, 0, 0x08, 3]) + np.array(arr.shape, ">u4").tobytes() + arr.tobytes()


@settings(FUZZ, max_examples=300)
@example(raw=bytes([0, 0, 8, 3, 0, 0]), gz=False)  # header cut short inside the dimension list
@example(raw=bytes([0, 0, 8, 2]) + (2 ** 31).to_bytes(4, "big") * 2, gz=False)  # absurd declared size
@given(raw=st.binary(max_size=64) | st.builds(_mutate_bytes, st.just(_idx_bytes()), EDITS, CUT),
       gz=st.booleans())
def test_idx_reader_returns_an_array_or_a_data_error(raw, gz):
    with tempfile.TemporaryDirectory() as tmp:
        f = Path(tmp) / ("x.idx.gz" if gz else "x.idx")
        f.write_bytes(gzip.compress(raw) if gz else raw)
        try:
            arr = read_idx(f)
        except ClassMapError:
            return
        assert isinstance(arr, np.ndarray)


# ---------------------------------------------------------------- exported model (predict.py reader)

@pytest.fixture(scope="module")
def export_dir(model_dir, tmp_path_factory):
    from classmap_gui.core.export.folder import export_recogniser

    return export_recogniser(Recogniser.load(model_dir), tmp_path_factory.mktemp("exp") / "e")


@FUZZ
@given(edits=EDITS, cut=CUT, which=st.sampled_from(["model.json", "arrays.npz"]))
def test_exported_model_reader_refuses_corruption_cleanly(export_dir, edits, cut, which):
    import importlib.util

    spec = importlib.util.spec_from_file_location("predict_fz", export_dir / "predict.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    with tempfile.TemporaryDirectory() as tmp:
        target = Path(tmp) / "e"
        shutil.copytree(export_dir, target)
        f = target / which
        original = f.read_bytes()
        damaged = _mutate_bytes(original, edits, cut)
        f.write_bytes(damaged)
        try:
            doc, arrays = mod.load_model(target)
        except mod.ModelError as exc:
            assert damaged != original, f"an intact export was refused: {exc}"
            assert str(target) in str(exc)  # the message names the export at fault
            return
        for key, spec in doc["arrays"].items():  # loaded: every array is as model.json declares it
            assert arrays[key].dtype == np.dtype(spec["dtype"]) and list(arrays[key].shape) == list(spec["shape"])
