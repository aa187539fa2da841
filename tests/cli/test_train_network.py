"""classmap train-network, a few steps (the full training is not in CI): files, parity, resuming."""
from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest


def _run(out, steps):
    cmd = [sys.executable, "-m", "classmap_gui.cli", "train-network", "--out", str(out), "--steps", str(steps),
           "--batch", "16", "--background", "2", "--validation-per-class", "1", "--eval-every", "2",
           "--width", "small", "--embedding", "64"]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=600)


@pytest.mark.slow
def test_a_few_steps_train_export_and_resume(tmp_path):
    import torch  # noqa: F401  (the [train] extra: make test installs it, so this runs in CI)
    r = _run(tmp_path / "net", 2)
    assert r.returncode == 0, r.stderr[-2000:]
    rec = json.loads((tmp_path / "net" / "training.json").read_text())
    assert rec["parity_crops"] == 1000 and rec["parity_max_abs_diff"] <= 1e-4      # ONNX run times vs PyTorch
    assert set(rec["parity"]) == {"onnxruntime", "opencv"}
    assert [c["step"] for c in rec["validation_curve"]] == [2]
    assert rec["recipe"]["seed"] != rec["recipe"]["validation_seed"]
    # the exported network is a feature map of the product, 64 wide
    from classmap_gui.core.features.network import NetworkFeatures

    f = NetworkFeatures(str(tmp_path / "net" / "network.onnx")).fit()
    assert f.transform(np.zeros((3, 64, 64), np.uint8)).shape == (3, 64)
    # resumed from the checkpoint: steps 3-4 only, the curve goes on
    r = _run(tmp_path / "net", 4)
    assert r.returncode == 0, r.stderr[-2000:]
    rec = json.loads((tmp_path / "net" / "training.json").read_text())
    assert [c["step"] for c in rec["validation_curve"]] == [2, 4]
    assert rec["recipe"]["resumed"] == [{"at_step": 2, "steps_before": 2, "steps_after": 4}]


def test_train_network_without_torch_says_how_to_get_it(tmp_path):
    code = ("import sys\n"
            "class B:\n"
            "    def find_spec(self, name, path=None, target=None):\n"
            "        if name == 'torch' or name.startswith('torch.'): raise ImportError('no torch here')\n"
            "sys.meta_path.insert(0, B())\n"
            "from classmap_gui.cli import main\n"
            f"sys.exit(main(['train-network', '--out', {str(tmp_path / 'n')!r}, '--steps', '1']))\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert r.returncode == 2
    assert "torch==2.13.0" in r.stderr and "Traceback" not in r.stderr


@pytest.mark.slow
def test_the_batches_are_the_same_whatever_the_number_of_workers():
    import torch

    from classmap_gui.network_training import _Stream

    def steps(workers):
        loader = torch.utils.data.DataLoader(_Stream(3, 9, 5, 6, 1), batch_size=None, num_workers=workers,
                                             multiprocessing_context="spawn" if workers else None)
        return [(x.numpy(), y.numpy()) for x, y in loader]

    one, three = steps(0), steps(3)
    assert len(one) == len(three) == 6
    for (xa, ya), (xb, yb) in zip(one, three):
        assert np.array_equal(ya, yb) and np.array_equal(xa, xb)


@pytest.mark.slow
def test_a_window_network_trains_exports_and_embeds_every_window(tmp_path):
    """--arch dense: the exported graph gives every window position of an image; a crop's embedding is its
    central window's, equal to PyTorch's within 1e-4 on 1000 crops in both run times."""
    import torch  # noqa: F401
    out = tmp_path / "win"
    cmd = [sys.executable, "-m", "classmap_gui.cli", "train-network", "--arch", "dense", "--out", str(out),
           "--steps", "2", "--batch", "16", "--background", "4", "--validation-per-class", "1", "--eval-every", "2",
           "--width", "small", "--embedding", "32"]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    rec = json.loads((out / "training.json").read_text())
    assert rec["parity_crops"] == 1000 and rec["parity_max_abs_diff"] <= 1e-4
    assert rec["recipe"]["arch"] == "dense" and rec["recipe"]["multiply_adds"]["trunk_per_crop_equivalent"] > 0
    from classmap_gui.core.features.network import NetworkFeatures
    from classmap_gui.core.features.network_input import CROP, local_contrast

    f = NetworkFeatures(str(out / "network.onnx")).fit()
    assert f.kind_ == "window" and f.context_ == 0.25 and tuple(f.input_size_) == (CROP, CROP)
    crops = np.random.default_rng(0).integers(0, 256, (3, CROP, CROP), dtype=np.uint8)
    assert f.transform(crops).shape == (3, 32)
    grid = f.windows(local_contrast(np.zeros((160, 200), np.uint8)))
    assert grid.shape == (32, 160 // 8 - 7, 200 // 8 - 7)         # every window position of the image
    from classmap_gui.core.features.network_head import network_head

    names, W, b = network_head(str(out / "network.onnx"))             # its class head, beside it: bank network-head
    assert W.shape == (2431, 32) and b.shape == (2431,) and names[-1] == "background" and rec["head"]["bytes"] > 0
