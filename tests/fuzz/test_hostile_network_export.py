"""Issue 49, the network surface in the exported ``predict.py``: an export carrying each hostile network of the
survey (:mod:`hostile_networks`) ends in exit 2 and one line ``predict.py: error: ... <the fault>`` before OpenCV
reads the graph (the app's allow-list is inlined there), with nothing of OpenCV's own on stderr and no hang.
The cases run in one child process, each through a freshly loaded ``predict.py``'s ``main`` (stderr caught at
the file descriptor, where OpenCV writes); one through ``python predict.py`` itself."""
from __future__ import annotations

import json
import shutil

import cv2
import pytest

from classmap_gui.core.export.folder import export_recogniser
from classmap_gui.core.train.training import TrainConfig, train
from hostile_helpers import tiny_set
from hostile_networks import CASES, case_bytes, exploding, plant_in_export, tiny
from measured import assert_one_error, run

pytestmark = pytest.mark.timeout(300)

#: for each ``[folder, image]`` of the JSON list argv[1], runs that folder's predict.py (loaded afresh);
#: writes ``[[exit status, stderr], ...]`` to argv[2]
_DRIVER = """
import importlib.util, json, os, sys, tempfile
out = []
for folder, image in json.loads(sys.argv[1]):
    with tempfile.TemporaryFile() as err, open(os.devnull, "w") as null:
        saved, saved_out = os.dup(2), sys.stdout
        os.dup2(err.fileno(), 2)
        sys.stdout = null
        try:
            spec = importlib.util.spec_from_file_location("exported_predict", os.path.join(folder, "predict.py"))
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            code = module.main([image, "--model", folder])
        except SystemExit as exc:
            code = exc.code
        except Exception as exc:
            import traceback
            traceback.print_exc()
            code = "traceback"
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
            sys.stdout = saved_out
        err.seek(0)
        out.append([code, err.read().decode(errors="replace")])
with open(sys.argv[2], "w") as fh:
    json.dump(out, fh)
"""


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    root = tmp_path_factory.mktemp("export")
    data = tiny_set()
    rec = train(data, TrainConfig(features="network", bank="ova-ridge", test_fraction=0.25, seed=0)).recogniser
    export_recogniser(rec, root / "export")
    cv2.imwrite(str(root / "image.png"), data.images[0])
    return root


def _planted(setup, tmp_path, label: str, data: bytes, **kw) -> str:
    folder = tmp_path / label
    shutil.copytree(setup / "export", folder)
    plant_in_export(folder, data, **kw)
    return str(folder)


def _run_all(jobs: list[list[str]], tmp_path) -> list:
    r = run(["python", "-c", _DRIVER, json.dumps(jobs), str(tmp_path / "out.json")], timeout=150)
    assert r.code == 0, f"the predictors did not all end (exit {r.code}: a hang killed?): {r.err[-1500:]}"
    return json.loads((tmp_path / "out.json").read_text())


def test_the_exported_predictor_refuses_every_hostile_network_in_one_line(setup, tmp_path):
    image = str(setup / "image.png")
    jobs = []
    for i, name in enumerate(CASES):
        data, needle = case_bytes(name)
        jobs.append((name, _planted(setup, tmp_path, str(i), data), needle))
    jobs.append(("swapped network", _planted(setup, tmp_path, "swapped", tiny(), sha256="0" * 64), "SHA-256"))
    jobs.append(("infinite outputs", _planted(setup, tmp_path, "exploding", exploding()), "NaN or infinite"))
    # the control: a planted network that is not hostile runs (the refusals are of the faults)
    jobs.append(("harmless", _planted(setup, tmp_path, "tiny", tiny()), None))
    results = _run_all([[folder, image] for _, folder, _ in jobs], tmp_path)
    bad = []
    for (label, folder, needle), (code, err) in zip(jobs, results):
        lines = [ln for ln in err.splitlines() if ln.strip()]
        ok = code == 0 and not lines if needle is None else \
            code == 2 and len(lines) == 1 and lines[0].startswith("predict.py: error:") and needle in lines[0]
        if not ok:
            bad.append(f"{label}: exit {code}: {err[-600:]!r}")
    assert not bad, f"{len(bad)} of {len(jobs)} end badly:\n" + "\n".join(bad)


def test_python_predict_py_refuses_a_network_reading_weights_bin_beside_it(setup, tmp_path):
    folder = _planted(setup, tmp_path, "external", case_bytes("external weights.bin")[0])
    (tmp_path / "external" / "weights.bin").write_bytes(b"\0" * 16)
    r = run(["python", "-I", f"{folder}/predict.py", str(setup / "image.png")], cwd=folder, timeout=60)
    assert_one_error(r, "features.onnx", "external data", prefix="predict.py: error:")
