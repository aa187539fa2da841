"""`classmap export`: a saved model becomes a folder whose predict.py agrees with `classmap predict`."""
from __future__ import annotations

import json
import subprocess
import sys

import cv2
import numpy as np

from classmap_gui.cli import main
from classmap_gui.core.data import load_digits


def test_export_command_writes_a_runnable_predictor(tmp_path, capsys):
    model, out = tmp_path / "model", tmp_path / "export"
    assert main(["train", "--data", "digits", "--features", "pixels", "--bank", "ova-ridge", "--out", str(model)]) == 0
    assert main(["export", str(model), "--out", str(out)]) == 0
    ims = load_digits()
    files = []
    for i in (0, 5, 11):
        cv2.imwrite(str(tmp_path / f"{i}.png"), ims.images[i])
        files.append(str(tmp_path / f"{i}.png"))
    capsys.readouterr()
    assert main(["predict", str(model), *files, "--top", "2", "--json"]) == 0
    app = json.loads(capsys.readouterr().out)
    res = subprocess.run([sys.executable, "-I", str(out / "predict.py"), *files, "--top", "2", "--json"],
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    mine = json.loads(res.stdout)
    assert [[t["class"] for t in r["top"]] for r in mine] == [[t["class"] for t in r["top"]] for r in app["predictions"]]
    np.testing.assert_allclose([[t["score"] for t in r["top"]] for r in mine],
                               [[t["score"] for t in r["top"]] for r in app["predictions"]], rtol=1e-5)
    assert main(["export", str(model), "--out", str(out)]) == 2  # not empty: refused, one-line error
