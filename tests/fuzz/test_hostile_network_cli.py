"""Issue 49, the network surface through ``classmap predict``: a saved model folder carrying each hostile
network of the survey (:mod:`hostile_networks`), run by onnxruntime or by OpenCV, ends in exit 2 and one line
``classmap: error: <model folder>: ... <the fault>`` — no traceback, no exit 70, nothing of onnxruntime's or
OpenCV's own on stderr, no hang. The cases run through the command's ``main`` in one child process (its stderr
caught at the file descriptor, where the runtimes write), one case through the command itself."""
from __future__ import annotations

import json
import shutil

import cv2
import pytest

from classmap_gui.core.train.training import TrainConfig, train
from hostile_helpers import tiny_set
from hostile_networks import CASES, case_bytes, exploding, plant_in_model, tiny
from measured import assert_one_error, classmap, run

pytestmark = pytest.mark.timeout(300)

#: runs ``classmap`` with each argv of the JSON list argv[1]; writes ``[[exit status, stderr], ...]`` to argv[2]
_DRIVER = """
import json, os, sys, tempfile
from classmap_gui.cli import main
out = []
for argv in json.loads(sys.argv[1]):
    with tempfile.TemporaryFile() as err, open(os.devnull, "w") as null:
        saved, saved_out = os.dup(2), sys.stdout
        os.dup2(err.fileno(), 2)
        sys.stdout = null
        try:
            code = main(argv)
        except SystemExit as exc:
            code = exc.code
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
    root = tmp_path_factory.mktemp("cli")
    data = tiny_set()
    train(data, TrainConfig(features="network", bank="ova-ridge", test_fraction=0.25, seed=0)).recogniser.save(
        root / "model")
    cv2.imwrite(str(root / "image.png"), data.images[0])
    return root


def _planted(setup, tmp_path, label: str, data: bytes, **kw) -> str:
    folder = tmp_path / label
    shutil.copytree(setup / "model", folder)
    plant_in_model(folder, data, **kw)
    return str(folder)


def _run_all(argvs: list[list[str]], tmp_path) -> list:
    r = run(["python", "-c", _DRIVER, json.dumps(argvs), str(tmp_path / "out.json")], timeout=150)
    assert r.code == 0, f"the commands did not all end (exit {r.code}: a hang killed?): {r.err[-1500:]}"
    return json.loads((tmp_path / "out.json").read_text())


def _one_error(code, err: str, folder: str, needle: str | None) -> str | None:
    """None when the run ended as it should: one line naming the folder and the fault, exit 2 (``needle``
    None: the harmless control, exit 0 and nothing on stderr)."""
    lines = [ln for ln in err.splitlines() if ln.strip()]
    ok = code == 0 and not lines if needle is None else \
        code == 2 and len(lines) == 1 and lines[0].startswith(f"classmap: error: {folder}") and needle in lines[0]
    return None if ok else f"exit {code}: {err[-600:]!r}"


def test_predict_refuses_every_hostile_network_in_one_line(setup, tmp_path):
    image = str(setup / "image.png")
    jobs = []
    for i, name in enumerate(CASES):
        data, needle = case_bytes(name)
        for runtime in ("onnxruntime", "opencv"):
            folder = _planted(setup, tmp_path, f"{i}-{runtime}", data, runtime=runtime)
            jobs.append((f"{name} ({runtime})", folder, needle))
    swapped = _planted(setup, tmp_path, "swapped", tiny(), sha256="0" * 64)
    jobs.append(("swapped network", swapped, "SHA-256"))
    for runtime in ("onnxruntime", "opencv"):   # finite weights, infinite outputs on a real image
        jobs.append((f"infinite outputs ({runtime})", _planted(setup, tmp_path, f"x-{runtime}", exploding(),
                                                                 runtime=runtime), "NaN or infinite"))
    # the control: a planted network that is not hostile runs (the refusals are of the faults)
    jobs.append(("harmless", _planted(setup, tmp_path, "tiny", tiny()), None))
    results = _run_all([["predict", folder, image] for _, folder, _ in jobs], tmp_path)
    bad = [f"{label}: {why}" for (label, folder, needle), (code, err) in zip(jobs, results)
           if (why := _one_error(code, err, folder, needle))]
    assert not bad, f"{len(bad)} of {len(jobs)} end badly:\n" + "\n".join(bad)


def test_the_command_itself_refuses_a_looping_network_without_running_it(setup, tmp_path):
    folder = _planted(setup, tmp_path, "loop", case_bytes("loop 2^62")[0])
    r = classmap("predict", folder, str(setup / "image.png"), timeout=60)
    assert_one_error(r, folder, "'Loop'", "nothing was run")
