"""What the smoke tests of scripts/ share: each script runs in its own Python, as a person runs it."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TINY = ["--shapes", "5", "--orientations", "5"]   # 25 hand-pose classes: more than the scripts' 20 nearest


def _run(path: Path, *args, env: dict | None = None, timeout: float = 900) -> str:
    full = {**os.environ, "PYTHONPATH": str(ROOT), "QT_QPA_PLATFORM": "offscreen", **(env or {})}
    res = subprocess.run([sys.executable, str(path), *map(str, args)], cwd=ROOT, env=full, capture_output=True,
                         text=True, timeout=timeout)
    assert res.returncode == 0, f"{path.name} {' '.join(map(str, args))} failed:\n{res.stdout[-2000:]}\n{res.stderr[-3000:]}"
    return res.stdout


@pytest.fixture(scope="session")
def run_script():
    """``run_script(path, *args, env=None)``: run it from the repository root; its stdout (a failure shows stderr)."""
    return _run


@pytest.fixture(scope="session")
def classmap_cli():
    """``classmap_cli(*args, env=None)``: the ``classmap`` command in a fresh Python."""
    def cli(*args, env=None, timeout=900):
        full = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
        res = subprocess.run([sys.executable, "-m", "classmap_gui.cli", *map(str, args)], cwd=ROOT, env=full,
                             capture_output=True, text=True, timeout=timeout)
        assert res.returncode == 0, f"classmap {' '.join(map(str, args))} failed:\n{res.stderr[-3000:]}"
        return res.stdout
    return cli


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory, run_script) -> Path:
    """The live map's model script on 5 shapes x 5 orientations: a real ClassMap model of hand-pose classes."""
    out = tmp_path_factory.mktemp("scripts") / "model"
    printed = run_script(ROOT / "scripts" / "experiments" / "live_map_model.py", out, *TINY, "--d", "4", "--p", "3",
                         "--triples", "500")
    assert "250 images" in printed and (out / "model.json").is_file()
    return out
