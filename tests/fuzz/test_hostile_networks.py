"""Issue 49, the network surface in the app's core: every hostile network of the survey (:mod:`hostile_networks`)
is refused by :class:`NetworkFeatures` — read from a file at fit, or from a saved model at load — with one
ModelFormatError naming the file and the fault, before onnxruntime or OpenCV's dnn sees a byte (both are
replaced here by a trap that no ``except Exception`` can swallow: today's code runs the graph and trips it).
What only shows at run time (non-finite outputs, an output that ignores the batch) is refused when it shows."""
from __future__ import annotations

import json
import shutil

import cv2
import numpy as np
import onnxruntime
import pytest

from classmap_gui.core.errors import ModelFormatError
from classmap_gui.core.features.network import NetworkFeatures
from classmap_gui.core.recogniser import Recogniser
from classmap_gui.core.train.training import TrainConfig, train
from hostile_helpers import tiny_set
from hostile_networks import CASES, batch_ignored, case_bytes, exploding, plant_in_model, sha, tiny, wide_layer

pytestmark = pytest.mark.timeout(120)


class RuntimeSawIt(BaseException):
    """Raised by a runtime's loader in these tests: a hostile network reached it."""


@pytest.fixture
def no_runtime(monkeypatch):
    def trap(*a, **k):
        raise RuntimeSawIt("a runtime was handed the network")

    monkeypatch.setattr(onnxruntime, "InferenceSession", trap)
    monkeypatch.setattr(cv2.dnn, "readNetFromONNX", trap)


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    folder = tmp_path_factory.mktemp("model") / "m"
    train(tiny_set(), TrainConfig(features="network", bank="ova-ridge", test_fraction=0.25, seed=0)).recogniser.save(
        folder)
    return folder


def _slug(name: str) -> str:
    return "".join(c if c.isalnum() else "-" for c in name)


@pytest.mark.parametrize("runtime", ["onnxruntime", "opencv"])
def test_the_harmless_variant_runs_in_both_runtimes(tmp_path, runtime):
    """The hostile networks vary this one: the refusals below are of their faults, not of the harness."""
    (tmp_path / "tiny.onnx").write_bytes(tiny())
    feats = NetworkFeatures(str(tmp_path / "tiny.onnx"), runtime=runtime).fit()
    out = feats.transform(np.full((3, 64, 64), 200, np.uint8))
    assert out.shape == (3, 4) and np.isfinite(out).all()


@pytest.mark.parametrize("name", list(CASES))
def test_a_hostile_network_file_is_refused_before_any_runtime_sees_it(name, tmp_path, no_runtime):
    data, needle = case_bytes(name)
    path = tmp_path / f"{_slug(name)}.onnx"
    path.write_bytes(data)
    with pytest.raises(ModelFormatError) as err:
        NetworkFeatures(str(path)).fit()
    msg = str(err.value)
    assert path.name in msg and needle in msg and "\n" not in msg, msg


@pytest.mark.parametrize("name", ["loop 2^62", "external weights.bin", "custom domain", "nan weights",
                                  "input of 3 channels", "output ignoring the batch", "200000 identity nodes"])
def test_a_saved_model_carrying_a_hostile_network_is_refused_at_load(name, saved, tmp_path, no_runtime):
    data, needle = case_bytes(name)
    folder = tmp_path / "m"
    shutil.copytree(saved, folder)
    plant_in_model(folder, data)
    with pytest.raises(ModelFormatError) as err:
        Recogniser.load(folder)
    assert needle in str(err.value) and "\n" not in str(err.value), str(err.value)


def test_a_network_swapped_under_the_recorded_sha256_is_refused(saved, tmp_path, no_runtime, monkeypatch):
    folder = tmp_path / "m"
    shutil.copytree(saved, folder)
    recorded = json.loads((saved / "model.json").read_text())
    plant_in_model(folder, tiny(), sha256=recorded["features"]["state"]["sha256_"])
    with pytest.raises(ModelFormatError, match="SHA-256 .* differs"):
        Recogniser.load(folder)
    # the same bytes under their own digest load: it is the swap that is refused
    monkeypatch.undo()
    plant_in_model(folder, tiny())
    assert Recogniser.load(folder).features.n_features_out_ == 4


@pytest.mark.parametrize("runtime", ["onnxruntime", "opencv"])
def test_outputs_that_are_not_finite_are_refused_not_scored(tmp_path, runtime, capfd):
    """Finite weights, zero for the blank crop checked at load, infinite for a real image."""
    (tmp_path / "exploding.onnx").write_bytes(exploding())
    feats = NetworkFeatures(str(tmp_path / "exploding.onnx"), runtime=runtime).fit()
    images = np.random.default_rng(0).integers(0, 256, (2, 64, 64), dtype=np.uint8)
    with pytest.raises(ModelFormatError, match="exploding.onnx.*NaN or infinite"):
        feats.transform(images)
    assert capfd.readouterr().err == ""


@pytest.mark.parametrize("runtime", ["onnxruntime", "opencv"])
def test_an_output_that_ignores_the_batch_is_refused_when_it_shows(tmp_path, runtime, capfd):
    """Declared ``(m, 4)``, it gives ``(1, 4n)``: right for one crop, a wrong shape for three, never
    reshaped into three rows of someone else's numbers."""
    (tmp_path / "flat.onnx").write_bytes(batch_ignored(declared=("m", 4)))
    feats = NetworkFeatures(str(tmp_path / "flat.onnx"), runtime=runtime).fit()
    with pytest.raises(ModelFormatError, match=r"flat.onnx.* for 3 crops, not float32 \(3, 4\)"):
        feats.transform(np.full((3, 64, 64), 90, np.uint8))
    assert capfd.readouterr().err == ""


def test_the_recorded_digest_is_the_file_s(tmp_path):
    (tmp_path / "tiny.onnx").write_bytes(tiny())
    assert NetworkFeatures(str(tmp_path / "tiny.onnx")).fit().sha256_ == sha(tiny())


def test_a_network_with_large_layers_runs_in_batches_its_layers_bound(tmp_path):
    """A 1x1 convolution to 2000 channels holds 8.2 M values a crop: within the bound, so it runs, but 256
    crops at once would hold 8 GB; the crops go to the runtime a few at a time instead."""
    (tmp_path / "wide.onnx").write_bytes(wide_layer(2000))
    feats = NetworkFeatures(str(tmp_path / "wide.onnx")).fit()
    sizes, run = [], feats.runner_.run
    feats.runner_.run = lambda x: sizes.append(len(x)) or run(x)
    out = feats.transform(np.full((10, 64, 64), 77, np.uint8))
    assert out.shape == (10, 4) and np.isfinite(out).all()
    assert sum(sizes) == 10 and max(sizes) * 2000 * 64 * 64 <= 32 * 1024 * 1024 < 256 * 2000 * 64 * 64, sizes
