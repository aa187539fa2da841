"""pixels+hog, the feature map added through the registry alone: the CLI trains it, the model saves and
loads, the thumbnail adds what HOG drops, and the exported predict.py reproduces it (tests/core/export/test_export.py)."""
import json

import numpy as np

from classmap_gui.cli import main
from classmap_gui.core.features.hog import HOGFeatures
from classmap_gui.core.recogniser import Recogniser
from classmap_gui.core.registry import make_features


def test_the_cli_trains_pixels_hog_and_the_saved_model_predicts(tmp_path, capsys):
    out = tmp_path / "model"
    assert main(["train", "--data", "digits", "--features", "pixels+hog", "--set", "thumbnail=6",
                 "--set", "cell_size=4", "--set", "block_size=8", "--set", "block_stride=4",
                 "--bank", "ova-ridge", "--out", str(out), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["test_accuracy"] > 0.9
    saved = json.loads((out / "model.json").read_text())
    assert saved["features"]["type"] == "pixels+hog" and saved["features"]["params"]["thumbnail"] == 6
    rec = Recogniser.load(out)
    assert tuple(rec.features.pixels_.size) == (6, 6)
    assert rec.predict(np.zeros((2, 8, 8), np.uint8)).labels.shape == (2,)


def test_the_thumbnail_tells_apart_images_hog_cannot():
    rng = np.random.default_rng(0)
    light = np.full((6, 16, 16), 200, np.uint8) + rng.integers(0, 3, (6, 16, 16)).astype(np.uint8)
    dark = light - 150                                      # the same (flat) gradients, another brightness
    fm = make_features("pixels+hog", thumbnail=4, cell_size=4, block_size=8, block_stride=4).fit(
        np.concatenate([light, dark]))
    F = fm.transform(np.concatenate([light, dark]))
    hog = HOGFeatures(cell_size=4, block_size=8, block_stride=4).fit(light)
    assert F.shape == (12, 16 + hog.transform(light[:1]).shape[1]) and F.dtype == np.float32
    assert np.abs(F[:6, :16].mean(0) - F[6:, :16].mean(0)).min() > 1.0     # the thumbnail separates them
