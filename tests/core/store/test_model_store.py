"""Saved models: identical predictions after a round trip, and any unsafe, foreign, newer or damaged
file refused with a ModelFormatError before anything in it is used."""
import io
import json
import pathlib
import zipfile

import numpy as np
import pytest

from classmap_gui.core.data import load_digits
from classmap_gui.core.errors import ConfigError, ModelFormatError
from classmap_gui.core.recogniser import MODEL_VERSION, Recogniser
from classmap_gui.core.store import load_bundle, save_bundle
from classmap_gui.core.train.training import TrainConfig, train


@pytest.fixture(scope="module")
def digits():
    return load_digits()


@pytest.fixture(scope="module", params=["ova-liblinear", "ova-ridge", "ova-rbf", "all-pairs"])
def model(request, digits):
    small = digits.subset(np.arange(400))
    return train(small, TrainConfig(features="pixels", bank=request.param, seed=0)).recogniser


def test_save_load_gives_identical_predictions(model, digits, tmp_path):
    path = model.save(tmp_path / "model")
    assert sorted(p.name for p in path.iterdir()) == ["arrays.npz", "model.json"]
    back = Recogniser.load(path)
    a, b = model.predict(digits.images, top=4), back.predict(digits.images, top=4)
    np.testing.assert_array_equal(a.top_classes, b.top_classes)
    np.testing.assert_array_equal(a.top_scores, b.top_scores)
    assert back.class_names == model.class_names and back.image_size == (8, 8) and back.grey
    assert back.metadata["config"]["bank"] == model.metadata["config"]["bank"]
    # the description is plain JSON anyone can read
    doc = json.loads((path / "model.json").read_text())
    assert doc["format"] == "classmap-model" and doc["version"] == MODEL_VERSION


@pytest.fixture(scope="module")
def saved(tmp_path_factory, digits):
    rec = train(digits.subset(np.arange(300)), TrainConfig(features="pixels", bank="ova-ridge")).recogniser
    return rec, rec.save(tmp_path_factory.mktemp("m") / "model")


def copy_model(src, dst):
    dst.mkdir()
    for f in src.iterdir():
        (dst / f.name).write_bytes(f.read_bytes())
    return dst


class Marker:
    """Unpickling this creates a file: the proof that a loader ran code from the file."""

    def __init__(self, path):
        self.path = path

    def __reduce__(self):
        return (pathlib.Path.touch, (pathlib.Path(self.path),))


def test_pickle_bearing_model_is_refused_and_runs_nothing(saved, tmp_path):
    _, src = saved
    bad = copy_model(src, tmp_path / "evil")
    marker = tmp_path / "pwned"
    doc = json.loads((bad / "model.json").read_text())
    key = next(iter(doc["arrays"]))
    # replace one member by an object array whose unpickling would create `marker`
    with np.load(src / "arrays.npz") as z:
        members = {k: z[k] for k in z.files}
    members[key] = np.array([Marker(str(marker))], dtype=object)
    buf = io.BytesIO()
    np.savez(buf, **members)
    (bad / "arrays.npz").write_bytes(buf.getvalue())
    with pytest.raises(ModelFormatError, match="pickle|declares"):
        Recogniser.load(bad)
    assert not marker.exists()
    # also when the manifest admits the object dtype
    doc["arrays"][key] = {"dtype": "|O", "shape": [1]}
    (bad / "model.json").write_text(json.dumps(doc))
    with pytest.raises(ModelFormatError, match="pickle"):
        Recogniser.load(bad)
    assert not marker.exists()


def test_newer_version_is_refused(saved, tmp_path):
    _, src = saved
    bad = copy_model(src, tmp_path / "newer")
    doc = json.loads((bad / "model.json").read_text())
    doc["version"] = MODEL_VERSION + 1
    (bad / "model.json").write_text(json.dumps(doc))
    with pytest.raises(ModelFormatError, match="newer"):
        Recogniser.load(bad)


@pytest.mark.parametrize("damage, message", [
    (lambda d: d.update(format="something-else"), "not a classmap-model"),
    (lambda d: d["classifier"].update(type="os.system"), "does not know"),
    (lambda d: d["classifier"]["params"].update(evil=1), "parameters"),
    (lambda d: d.update(image_size=[8]), "image_size"),
    (lambda d: d.update(image_size=[8192, 8192]), "from 1 to 1024"),  # would stall the check encoding
    (lambda d: d.update(class_names=["a", "b"]), "classes"),
    (lambda d: d["arrays"].popitem(), "declare"),
    # a worker count no machine has (issue 49): refused, not run with (any other machine's count loads)
    (lambda d: d["classifier"]["params"].update(n_jobs=10 ** 18), "n_jobs must be a whole number from -4096"),
])
def test_damaged_description_is_refused(saved, tmp_path, damage, message):
    _, src = saved
    bad = copy_model(src, tmp_path / "bad")
    doc = json.loads((bad / "model.json").read_text())
    damage(doc)
    (bad / "model.json").write_text(json.dumps(doc))
    with pytest.raises(ModelFormatError, match=message):
        Recogniser.load(bad)


def test_wrong_shape_and_missing_or_corrupt_files_are_refused(saved, tmp_path):
    _, src = saved
    bad = copy_model(src, tmp_path / "shape")
    doc = json.loads((bad / "model.json").read_text())
    with np.load(src / "arrays.npz") as z:
        members = {k: z[k] for k in z.files}
    key = "classifier/state.coef_"
    members[key] = members[key][:, :-1].copy()
    doc["arrays"][key]["shape"] = list(members[key].shape)  # consistent manifest, inconsistent model
    np.savez(bad / "arrays.npz", **members)
    (bad / "model.json").write_text(json.dumps(doc))
    with pytest.raises(ModelFormatError, match="coef_"):
        Recogniser.load(bad)

    trunc = copy_model(src, tmp_path / "trunc")
    data = (trunc / "arrays.npz").read_bytes()
    (trunc / "arrays.npz").write_bytes(data[: len(data) // 2])
    with pytest.raises(ModelFormatError, match="corrupt"):
        Recogniser.load(trunc)

    gone = copy_model(src, tmp_path / "gone")
    (gone / "arrays.npz").unlink()
    with pytest.raises(ModelFormatError, match="missing"):
        Recogniser.load(gone)

    garbled = copy_model(src, tmp_path / "garbled")
    (garbled / "model.json").write_text("{not json")
    with pytest.raises(ModelFormatError, match="not valid JSON"):
        Recogniser.load(garbled)

    with pytest.raises(ModelFormatError, match="no such"):
        Recogniser.load(tmp_path / "nowhere")
    (tmp_path / "plain").mkdir()
    with pytest.raises(ModelFormatError, match="not a saved model"):
        Recogniser.load(tmp_path / "plain")


def test_saving_replaces_a_model_atomically_but_never_other_folders(saved, tmp_path):
    rec, _ = saved
    target = rec.save(tmp_path / "m")
    rec.save(target)  # overwrite an existing model
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m"]  # no temporary leftovers
    Recogniser.load(target)
    other = tmp_path / "photos"
    other.mkdir()
    (other / "holiday.jpg").write_bytes(b"x")
    with pytest.raises(ConfigError, match="does not hold a saved model"):
        rec.save(other)
    assert (other / "holiday.jpg").exists()


def test_bundle_manifest_checks_dtypes(tmp_path):
    save_bundle(tmp_path / "b", "x.json", {"format": "f", "version": 1}, {"a": np.arange(3, dtype=np.int16)})
    doc, arrays = load_bundle(tmp_path / "b", "x.json", "f", 1)
    assert arrays["a"].dtype == np.int16
    doc["arrays"]["a"]["dtype"] = "<f4"
    (tmp_path / "b" / "x.json").write_text(json.dumps(doc))
    with pytest.raises(ModelFormatError, match="declares"):
        load_bundle(tmp_path / "b", "x.json", "f", 1)
    with pytest.raises(ConfigError):
        save_bundle(tmp_path / "c", "x.json", {"format": "f", "version": 1}, {"s": np.array(["text"])})
    assert zipfile.is_zipfile(tmp_path / "b" / "arrays.npz")
