"""Every script of scripts/experiments/ runs to its end on tiny options and prints (or writes) what it says.

The scripts are how the figures of docs/hands.md, docs/detect.md and docs/explore-map.md were measured; a
script that no test runs rots silently. Each runs here in a subprocess, as a person runs it, on a few
classes; the figures they print are not checked (they are meaningless at this size), their shape is.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXPERIMENTS = ROOT / "scripts" / "experiments"
TINY = ["--shapes", "5", "--orientations", "5"]   # the classes of the tiny_model fixture (conftest.py)

pytestmark = pytest.mark.slow   # a few minutes together: each script is a fresh Python with the whole stack


def json_lines(out: str) -> list[dict]:
    return [json.loads(line) for line in out.splitlines() if line.startswith("{")]


def test_explore_map_bench_times_a_tsne_and_scores_the_map(tiny_model, run_script):
    rows = json_lines(run_script(EXPERIMENTS / "explore_map_bench.py", tiny_model, *TINY, "--dots", "20",
                                 "--settings", '{"perplexity": 5}'))
    assert len(rows) == 1 and rows[0]["classes"] == 25 and rows[0]["dots"] == 20
    assert 0 <= rows[0]["knn_kept"] <= 1 and rows[0]["seconds"] >= 0


def test_live_map_faithful_scores_both_layouts(tiny_model, run_script):
    out = json.loads(run_script(EXPERIMENTS / "live_map_faithful.py", tiny_model, *TINY, "--dots", "25",
                                "--queries", "25"))
    assert out["classes"] == 25 and set(out) >= {"pca", "tsne"}
    assert 0 <= out["pca"]["test_faithful@10"] <= 1


def test_live_map_bench_streams_the_demo_video_with_the_map_on_and_off(tiny_model, run_script):
    out = run_script(EXPERIMENTS / "live_map_bench.py", tiny_model, *TINY, "--rounds", "1")
    summary = json.loads(out[out.index('{\n'):])["summary"]
    assert summary["full_speed"]["stream_fps_off_median"] > 0 and summary["own_rate"]["stream_fps_on_median"] > 0


def test_hands_speed_reports_images_per_second(run_script):
    out = json.loads(run_script(EXPERIMENTS / "hands_speed.py", *TINY, "--per-class", "2"))
    assert out["n_jobs=1"]["images"] == 50 and out["n_jobs=1"]["generation_images_per_second"] > 0


def test_hands_calibration_chooses_a_penalty_on_validation(run_script):
    out = json_lines(run_script(EXPERIMENTS / "hands_calibration.py", *TINY, "--alphas", "10,100",
                                "--camera-per-class", "2"))
    assert out and "alpha" in json.dumps(out[-1])


def test_hands_reading_curve_quick_run_writes_only_where_told(tmp_path, run_script):
    committed = (ROOT / "docs" / "bench" / "hands-reading-curve.json").read_bytes()
    out = tmp_path / "curve.json"
    run_script(EXPERIMENTS / "hands_reading_curve.py", "--orientations", "2", "--shapes", "3", "--ipc", "4,8",
               "--per-part", "2", "--descriptors", "hog8", "--quick", "--out", out)
    res = json.loads(out.read_text())
    assert [r["images_per_class"] for r in res["results"]] == [4, 8]
    assert (ROOT / "docs" / "bench" / "hands-reading-curve.json").read_bytes() == committed


def test_contact_sheet_draws_both_pictures(tmp_path, run_script):
    import cv2

    run_script(EXPERIMENTS / "make_hands_contact_sheet.py", tmp_path / "sheet.png", tmp_path / "samples.png")
    sheet, samples = cv2.imread(str(tmp_path / "sheet.png")), cv2.imread(str(tmp_path / "samples.png"))
    assert sheet is not None and sheet.shape[0] > 500 and samples is not None


def test_trunk_sizes_times_each_width_over_a_frames_pyramid(tmp_path, run_script):
    out = tmp_path / "trunks.json"
    run_script(EXPERIMENTS / "trunk_sizes.py", "--out", out, "--rounds", "1", "--frames", "2")
    widths = json.loads(out.read_text())["widths"]
    assert set(widths) == {"small", "base", "wide"}
    ops = [widths[w]["multiply_adds"]["trunk_per_crop_equivalent"] for w in ("small", "base", "wide")]
    assert ops == sorted(ops) and all(w["network_ms_per_frame"]["median"] > 0 for w in widths.values())
    assert all(w["windows_per_frame"] > 100 for w in widths.values())


def test_hand_bank_choice_compares_the_head_with_ridge_on_validation_only(tmp_path, run_script):
    out = tmp_path / "choice.json"
    run_script(EXPERIMENTS / "hand_bank_choice.py", "--shapes", "3", "--images-per-class", "4", "--out", out)
    res = json.loads(out.read_text())
    assert res["test_seed"] is None and res["chosen"] in ("head", "ridge")
    assert [r["style"] for r in res["validation"]] == ["varied", "varied", "camera"]
    assert all(0 <= r[k]["shape"] <= 1 for r in res["validation"] for k in ("head", "ridge"))


def test_gesture_lead_curve_trades_recall_for_frames_taken_on_validation_only(tmp_path, run_script, classmap_cli):
    model = tmp_path / "hands"
    classmap_cli("hand-model", "--quick", "--out", model, "--set",
                 "shapes=3,orientations=2,images_per_class=12,background=200,hard_negatives=40,detector_scenes=4,"
                 "p_sweep=2,d=3,reading_video_seeds=101,temperatures=0.05,histories=1,crops=1,no_hand_frames=4,"
                 "validation_video_seeds=101,capture_video_seeds=,bank=ova-ridge")
    out = tmp_path / "curve.json"
    run_script(EXPERIMENTS / "gesture_lead_curve.py", "--model-dir", model, "--leads", "0,1000", "--gestures", "1",
               "--shape-videos", "1", "--quick", "--out", out)
    res = json.loads(out.read_text())
    assert res["test_seed"] is None and [r["lead"] for r in res["curve"]] == [0.0, 1000.0]
    free, never = res["curve"]
    # a lead no score reaches: every classifier evaluated, the gesture is never named; ClassMap's tiny filter
    # (p = 2) can leave it the one hand candidate, but never names it more than without the lead
    assert never["brute_force"]["recall_clean_mean"] == never["brute_force"]["taken_by_gestures"] == 0.0
    for key in ("recall_clean_mean", "taken_by_gestures"):
        assert never["classmap"][key] <= free["classmap"][key]
