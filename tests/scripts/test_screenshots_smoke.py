"""Every script of scripts/screenshots/ draws its pictures, here into a temporary folder
(``$CLASSMAP_SCREENSHOTS``), from tiny models: the committed pictures in docs/screenshots are left alone."""
from __future__ import annotations

import json
from pathlib import Path

import cv2
import pytest

ROOT = Path(__file__).resolve().parents[2]
SHOTS = ROOT / "scripts" / "screenshots"

pytestmark = pytest.mark.slow   # minutes: every script drives the whole app offscreen


def _pictures(folder: Path, names: list[str]) -> dict[str, tuple]:
    """Each PNG's shape; a missing or unreadable one fails naming it."""
    out = {}
    for name in names:
        img = cv2.imread(str(folder / name))
        assert img is not None, f"{name} was not written to {folder}"
        out[name] = img.shape
    return out


def test_the_walkthrough_screenshots(tmp_path, run_script):
    committed = {p.name: p.stat().st_mtime_ns for p in (ROOT / "docs" / "screenshots").glob("*.png")}
    run_script(SHOTS / "make.py", "journey", env={"CLASSMAP_SCREENSHOTS": str(tmp_path)})
    shapes = _pictures(tmp_path, [f"journey-{p}.png" for p in ("dataset", "train", "run", "explore")])
    assert all(h >= 600 and w >= 1000 for h, w, _ in shapes.values())            # the whole window
    assert {p.name: p.stat().st_mtime_ns for p in (ROOT / "docs" / "screenshots").glob("*.png")} == committed


def test_the_runs_and_capture_screenshots(tmp_path, run_script):
    run_script(SHOTS / "make_runs.py", tmp_path)
    _pictures(tmp_path, ["runs.png", "capture.png"])


def test_the_live_map_screenshot_and_clip(tmp_path, run_script, tiny_model):
    shots = tmp_path / "shots"
    shots.mkdir()
    out = run_script(SHOTS / "make_live.py", tiny_model, 5, 5, env={"CLASSMAP_SCREENSHOTS": str(shots)})
    clip = cv2.VideoCapture(str(tmp_path / "live-map.mp4"))                      # beside the pictures' folder
    assert clip.get(cv2.CAP_PROP_FRAME_COUNT) == 48, out


def test_the_explore_screenshots_of_a_model_the_cli_trained(tmp_path, run_script, classmap_cli):
    model = tmp_path / "model"
    classmap_cli("train", "--data", "hand-pose-small", "--features", "hog", "--bank", "ova-ridge",
                 "--classmap", "d=8,p=8,n_triples=3000", "--out", model, "--json")
    assert json.loads((model / "model.json").read_text())["metadata"]["data"] == "hand-pose-small"
    run_script(SHOTS / "make_explore.py", model, env={"CLASSMAP_SCREENSHOTS": str(tmp_path)})
    _pictures(tmp_path, ["train-confusions.png", "explore-tsne-shape.png", "explore-tsne-yaw.png",
                         "explore-class.png"])
