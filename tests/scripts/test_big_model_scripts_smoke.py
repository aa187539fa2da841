"""The scripts that need a big model — the hand model of *Show your hand*, the 10^5-class model of
``bench scale --data hand-pose`` — run to their end on a tiny build of the same kind."""
from __future__ import annotations

import json
from pathlib import Path

import cv2
import pytest

ROOT = Path(__file__).resolve().parents[2]
EXPERIMENTS, SHOTS = ROOT / "scripts" / "experiments", ROOT / "scripts" / "screenshots"

pytestmark = pytest.mark.slow   # each fixture is a whole (tiny) build: minutes on a loaded machine

#: the hand-model build of tests/cli/test_cli_hand_model.py: 3 shapes x 2 orientations + background
HAND = ("shapes=3,orientations=2,images_per_class=12,background=200,hard_negatives=40,detector_scenes=4,p_sweep=2,"
        "d=3,reading_video_seeds=101,temperatures=0.05,histories=1,crops=1,no_hand_frames=4,validation_video_seeds=101")
#: the 10^5 bench's options of tests/bench/test_scale_real.py: 2 shapes x 40 orientations
SCALE = dict(shapes=2, orientations=40, penalties="10,100", p_candidates="5,10", reference_penalties="1,10",
             n_candidates=40, n_triples=3000, n_hard_examples=60, test_queries=80, latency_queries=3, latency_batch=8,
             latency_rounds=2, d=10, val_queries=80, rerank="1.5", seed=1, test_seed=2, recheck_seeds="3",
             recheck_images=160, class_embeddings="all,all+3", extra_images=3)


@pytest.fixture(scope="module")
def hand_model(tmp_path_factory, classmap_cli) -> Path:
    out = tmp_path_factory.mktemp("hand") / "model"
    classmap_cli("hand-model", "--quick", "--json", "--out", out, "--set", HAND)
    return out


@pytest.fixture(scope="module")
def scale_run(tmp_path_factory, classmap_cli) -> tuple[Path, Path]:
    tmp = tmp_path_factory.mktemp("scale")
    sets = [a for k, v in SCALE.items() for a in ("--set", f"{k}={v}")]
    classmap_cli("bench", "scale", "--data", "hand-pose", *sets, "--set", f"save_model={tmp / 'model'}",
                 "--out", tmp / "scale.json", env={"CLASSMAP_CACHE": str(tmp / "cache")})
    return tmp / "scale.json", tmp / "model"


def test_deployed_validation_writes_where_told(hand_model, tmp_path, run_script):
    committed = (ROOT / "docs" / "bench" / "hands-deployed-validation.json").read_bytes()
    run_script(EXPERIMENTS / "hands_deployed_validation.py", hand_model, tmp_path / "v.json")
    res = json.loads((tmp_path / "v.json").read_text())
    assert res["test_seed"] is None and 0 <= res["named_background"] <= 1 and res["selection"]["hand_crops"] > 0
    assert (ROOT / "docs" / "bench" / "hands-deployed-validation.json").read_bytes() == committed


def test_find_hand_screenshots(hand_model, tmp_path, run_script):
    # a tiny model may never read the video as unsure: 20 s a state, not the 2 minutes a full model is given
    run_script(SHOTS / "find_hand.py", "--model", hand_model, "--only", "hand", "--state-timeout", "20",
               env={"CLASSMAP_SCREENSHOTS": str(tmp_path)})
    for name in ("run-hand-model.png", "find-hand.png", "explore-hand-model.png"):
        assert cv2.imread(str(tmp_path / name)) is not None, name


def test_the_dask_check_rebuilds_the_saved_model_identically(scale_run, run_script):
    bench_json, model = scale_run
    out = run_script(EXPERIMENTS / "hand_pose_dask_check.py", bench_json, model)
    res = json.loads(out[out.index("{"):])
    assert res["classes"] == 80 and res["brute_force_predictions_identical"] and res["classmap_predictions_identical"]
    # the cluster sums in another order: on this tiny run the model agrees to float32 rounding, not bit for bit
    assert res["max_abs_weight_difference"] <= 1e-5 * res["max_abs_weight"]
    assert res["max_abs_class_embedding_difference"] <= 1e-5


def test_the_many_class_run_screenshot(scale_run, tmp_path, run_script):
    bench_json, model = scale_run
    cache = json.loads(bench_json.read_text())["real"]["cache_folder"]
    run_script(SHOTS / "make_scale.py", model, cache, tmp_path / "scale.png")
    assert cv2.imread(str(tmp_path / "scale.png")) is not None
