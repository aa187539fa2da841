"""Issue 40: the exported predict.py held to the app's standard under the same seeded single-value mutations
of its ``model.json`` that the app's loader passes (:mod:`model_mutations`): every one ends in exit 0 (it
still works) or exit 2 with one line, never a traceback, a hang or a result naming no class."""
from __future__ import annotations

import contextlib
import importlib.util
import io
import json

import cv2
import pytest

from classmap_gui.core.export.folder import export_recogniser
from classmap_gui.core.train.training import TrainConfig, train
from hostile_helpers import tiny_set
from model_mutations import Hang, deadline, mutated, mutations

KINDS = {
    "classmap-v2": TrainConfig(features="pixels", bank="ova-ridge", classmap={"d": 3, "p": 3}, test_fraction=0.2,
                               seed=0),
    "compressive": TrainConfig(features="pixels", bank="compressive", bank_params={"m": 32}, test_fraction=0.2, seed=0),
    "kmeans": TrainConfig(features="kmeans", features_params={"n_centroids": 8, "n_patches": 500, "patch_size": 3,
                                                              "random_state": 0, "n_jobs": 1},
                          bank="ova-ridge", test_fraction=0.2, seed=0),
}
PER_KIND = 400


@pytest.mark.parametrize("kind", list(KINDS))
def test_single_value_mutations_of_an_export_end_cleanly(kind, tmp_path):
    data = tiny_set(n_per_class=10, classes=tuple("abcdef"), size=(12, 12))
    folder = export_recogniser(train(data, KINDS[kind]).recogniser, tmp_path / "export")
    image = tmp_path / "image.png"
    cv2.imwrite(str(image), data.images[0])
    spec = importlib.util.spec_from_file_location("exported_predict", folder / "predict.py")
    predict = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(predict)
    doc = json.loads((folder / "model.json").read_text())
    bad = []
    for path, value in mutations(doc, PER_KIND, seed=40):
        changed = mutated(doc, path, value)
        (folder / "model.json").write_text(json.dumps(changed))
        names = changed.get("class_names") if isinstance(changed, dict) else None
        out, err = io.StringIO(), io.StringIO()
        try:
            with deadline(20), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                code = predict.main([str(image), "--model", str(folder), "--top", "2"])
        except Hang:
            code = "hang"
        except Exception as exc:  # noqa: BLE001 - a traceback is what this test is looking for
            code = f"{type(exc).__name__}: {str(exc)[:100]}"
        lines = err.getvalue().splitlines()
        ok = code == 0 and not lines and out.getvalue().split("\t")[1].split(" (")[0] in (names or ()) or \
            code == 2 and len(lines) == 1 and lines[0].startswith("predict.py: error:") and not out.getvalue()
        if not ok:
            bad.append(f"{'/'.join(map(str, path))} = {value!r}: {code} {err.getvalue()[:200]!r}")
    assert not bad, f"{len(bad)} of {PER_KIND} mutations end badly:\n" + "\n".join(bad[:20])
