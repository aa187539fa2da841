"""bench scan on a tiny model: the JSON a reader needs, every choice on validation, the model cached."""
from __future__ import annotations

import pytest

from classmap_gui.core.bench.scan import run

TINY = dict(shapes=2, orientations=2, images_per_class=16, background=200, hard_negatives=40, bootstrap_rounds=1,
            p_sweep="2,3", d=3, frames="320x240", detector_scenes=6, validation_video_seeds="101,102",
            vote_temperatures="0,0.05")


@pytest.mark.slow
def test_scan_bench_reports_both_methods_with_their_choices(tmp_path):
    out = run(cache_dir=str(tmp_path), **TINY)
    rows = {(r["frame"], r["method"]): r for r in out["scan"]}
    assert set(rows) == {("320x240", "classmap"), ("320x240", "brute_force")}
    for r in rows.values():
        assert r["frames_per_second"] > 0 and 0 <= r["localisation"] <= 1 and 0 <= r["class_accuracy"] <= 1
        assert r["windows"] > 500 and len(r["scales"]) >= 3
        assert len(r["load_average_before"]) == 3
    cm, bf = rows[("320x240", "classmap")], rows[("320x240", "brute_force")]
    assert bf["evaluations_per_window"] == out["model"]["classes"] + 1     # every class + the hand detector
    assert cm["evaluations_per_window"] < bf["evaluations_per_window"] + 4
    assert out["speedup"]["320x240"] == pytest.approx(cm["frames_per_second"] / bf["frames_per_second"])
    sel = out["selection"]
    assert sel["split"] == "validation"
    for key in ("bank.alpha", "classmap_p", "background_weight", "sides", "detector_weight", "vote",
                "validation_localisation"):
        assert sel[key]["split"] == "validation", key
    assert sel["sides"]["chosen"] in sel["sides"]["candidates"]
    assert sel["vote"]["chosen"] in sel["vote"]["candidates"] and out["model"]["vote"] == sel["vote"]["chosen"]
    assert {"classmap", "brute_force"} <= set(sel["validation_localisation"])
    assert len(cm["scales"]) == len(sel["sides"]["chosen"]) and cm["scales"] == bf["scales"]
    assert out["model"]["sides"] == sel["sides"]["chosen"]
    assert sel["classmap_p"]["chosen"]["p"] in (2, 3)
    assert out["cpu_count"] >= 1 and len(out["load_average"]) == 3
    assert out["model"]["hard_negatives"] == 40 and not out["model"]["cached"]
    again = run(cache_dir=str(tmp_path), **TINY)                  # the trained model comes from the cache
    assert out["model"]["detector"]["scenes"] == 6 and not out["model"]["detector"]["cached"]
    assert out["model"]["detector_weight"] == sel["detector_weight"]["chosen"]
    assert again["model"]["cached"] and again["model"]["detector"]["cached"] and again["selection"] == sel
