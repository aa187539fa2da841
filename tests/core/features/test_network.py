"""The shipped hand network as a feature map: what a model built on it reads, saves and refuses."""
import json
import subprocess
import sys

import numpy as np
import pytest

from classmap_gui.core.data.hand_pose import generate_hand_pose
from classmap_gui.core.errors import ConfigError, ModelFormatError
from classmap_gui.core.features.network import (MAX_NETWORK_BYTES, NetworkFeatures, network_record,
                                                shipped_networks)
from classmap_gui.core.recogniser import Recogniser
from classmap_gui.core.train.training import TrainConfig, train


@pytest.fixture(scope="module")
def hands():
    return generate_hand_pose(shapes="V,A,L,Y", orientations=3, images_per_class=8, seed=5, style="varied")


def test_the_hand_network_ships_with_the_record_that_made_it():
    assert "hand" in shipped_networks()
    rec = network_record("hand")
    assert rec["recipe"]["seed"] != rec["recipe"]["validation_seed"]
    assert rec["validation_curve"], "the record holds the validation curve"
    assert rec["parity_max_abs_diff"] <= 1e-4


def test_both_run_times_give_the_same_embedding(hands):
    a = NetworkFeatures().fit(hands.images).transform(hands.images)
    b = NetworkFeatures(runtime="opencv").fit(hands.images).transform(hands.images)
    assert a.dtype == np.float32 and a.shape == (len(hands), a.shape[1]) and a.shape[1] >= 64
    assert np.abs(a - b).max() <= 1e-4
    # another crop size is resized to the network's, not refused
    big = np.stack([np.kron(im, np.ones((2, 2), np.uint8)) for im in hands.images[:4]])
    assert np.abs(NetworkFeatures().fit().transform(big) - a[:4]).max() < 0.5 * np.abs(a[:4]).max()


def test_a_model_on_the_network_saves_and_loads_with_its_network(hands, tmp_path):
    res = train(hands, TrainConfig(features="network", bank="ova-ridge", test_fraction=0.25, seed=0))
    rec = res.recogniser
    rec.save(tmp_path / "m")
    back = Recogniser.load(tmp_path / "m")
    np.testing.assert_array_equal(back.predict(hands.images[:10]).labels, rec.predict(hands.images[:10]).labels)
    assert back.features.sha256_ == rec.features.sha256_
    # the network is data in the npz: no file beside the model is needed
    assert not any(p.suffix == ".onnx" for p in (tmp_path / "m").iterdir())
    assert res.report.accuracy > 1.5 / hands.n_classes


def test_a_damaged_network_is_one_clear_error(tmp_path, hands):
    good = NetworkFeatures().fit().onnx_
    for name, data in (("truncated.onnx", good[: len(good) // 3]), ("garbage.onnx", np.frombuffer(b"\x08\x07junk" * 50, np.uint8))):
        (tmp_path / name).write_bytes(data.tobytes())
        with pytest.raises(ModelFormatError, match=name):
            NetworkFeatures(str(tmp_path / name)).fit()
    big = tmp_path / "big.onnx"
    with open(big, "wb") as fh:
        fh.truncate(MAX_NETWORK_BYTES + 1)
    with pytest.raises(ModelFormatError, match="larger than"):
        NetworkFeatures(str(big)).fit()
    with pytest.raises(ConfigError, match="neither a shipped network"):
        NetworkFeatures("no-such-network").fit()
    with pytest.raises(ConfigError, match="runtime"):
        NetworkFeatures(runtime="torch").fit()


def test_a_saved_model_whose_network_was_swapped_is_refused(hands, tmp_path):
    rec = train(hands, TrainConfig(features="network", bank="ova-ridge", test_fraction=0.25, seed=0)).recogniser
    rec.save(tmp_path / "m")
    npz = tmp_path / "m" / "arrays.npz"
    with np.load(npz, allow_pickle=False) as z:
        arrays = dict(z)
    key = next(k for k in arrays if k.endswith("onnx_"))
    arrays[key] = arrays[key][:1000]
    np.savez(npz, **arrays)
    with pytest.raises(ModelFormatError):
        Recogniser.load(tmp_path / "m")


def test_the_app_and_predict_run_with_torch_blocked(tmp_path, hands):
    """PyTorch is a training-only extra: the GUI's modules, the CLI and a model on the network load without it."""
    rec = train(hands, TrainConfig(features="network", bank="ova-ridge", test_fraction=0.25, seed=0)).recogniser
    rec.save(tmp_path / "m")
    np.save(tmp_path / "ims.npy", hands.images[:6])
    code = f"""
import sys
class Block:  # any import of torch now fails (a finder, not sys.modules["torch"] = None, which libraries probe)
    def find_spec(self, name, path=None, target=None):
        if name == "torch" or name.startswith("torch."):
            raise ImportError("torch is blocked in this test")
sys.meta_path.insert(0, Block())
import numpy as np
import classmap_gui.gui.app, classmap_gui.gui.mainwindow, classmap_gui.cli
from classmap_gui.core.recogniser import Recogniser
rec = Recogniser.load({str(tmp_path / 'm')!r})
print([int(v) for v in rec.predict(np.load({str(tmp_path / 'ims.npy')!r})).labels])
assert "torch" not in sys.modules
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                         env={"QT_QPA_PLATFORM": "offscreen", "PATH": "/usr/bin:/bin"})
    assert out.returncode == 0, out.stderr[-2000:]
    assert json.loads(out.stdout.strip().splitlines()[-1]) == [int(v) for v in rec.predict(hands.images[:6]).labels]


def test_a_window_network_model_is_read_alike_by_the_app_and_the_exported_predictor(tmp_path):
    """A model on the shipped window network (crops are windows with their context), saved, exported: predict.py
    (OpenCV's dnn, local contrast inlined) names a folder of crops as `classmap predict` does (onnxruntime)."""
    import cv2

    from classmap_gui.cli import main
    from classmap_gui.core.data.hand_style import VARIED
    from classmap_gui.core.detect.window_crops import context_style
    from classmap_gui.core.features.network_input import CROP

    ims = generate_hand_pose(shapes="V,A,L,Y", orientations=3, images_per_class=8, seed=5,
                             style=context_style(VARIED), size=CROP)
    rec = train(ims, TrainConfig(features="window-network", bank="ova-ridge", test_fraction=0.25, seed=0)).recogniser
    assert rec.features.kind_ == "window" and rec.image_size == (CROP, CROP)
    rec.save(tmp_path / "m")
    assert main(["export", str(tmp_path / "m"), "--out", str(tmp_path / "x")]) == 0
    (tmp_path / "crops").mkdir()
    for i in range(0, len(ims), 7):
        cv2.imwrite(str(tmp_path / "crops" / f"{i:03d}.png"), ims.images[i])
    files = sorted(str(p) for p in (tmp_path / "crops").iterdir())
    out = subprocess.run([sys.executable, "-I", str(tmp_path / "x" / "predict.py"), *files, "--json"],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    exported = [r["top"][0]["class"] for r in json.loads(out.stdout)]
    app = Recogniser.load(tmp_path / "m").predict(np.stack([cv2.imread(f, cv2.IMREAD_GRAYSCALE) for f in files]))
    assert exported == [rec.class_names[i] for i in app.labels]


def test_a_window_network_reads_colour_crops_as_grey():
    """A colour project's crops (the Train panel's speed column measures every feature map on them) are read as
    their grey image, not refused."""
    import cv2

    from classmap_gui.core.features.network import WindowNetworkFeatures

    rgb = np.random.default_rng(0).integers(0, 256, (2, 64, 64, 3), dtype=np.uint8)
    grey = np.stack([cv2.cvtColor(im, cv2.COLOR_RGB2GRAY) for im in rgb])
    f = WindowNetworkFeatures().fit()
    a, b = f.transform(rgb), f.transform(grey)       # resized to the network's crop before or after greying
    assert np.all(np.sum(a * b, 1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1)) > 0.999)
