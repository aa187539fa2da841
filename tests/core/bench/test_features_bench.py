"""The features benchmark end to end on the shipped digits (tiny network): the JSON a user reads."""
from __future__ import annotations

import json

import pytest

from classmap_gui.core.bench import features as bench
from classmap_gui.core.errors import Cancelled


def test_bench_reports_accuracy_timings_and_gemm_ratio():
    stages = []
    out = bench.run(data="digits", k=24, n_patches=3000, patch_size=3, gemm_images=200, alphas="0.3,3",
                    n_jobs=2, progress=lambda f, s: stages.append(s))
    json.dumps(out)  # JSON-ready as printed by `classmap bench features --json`
    assert out["accuracy"] > 0.9
    for key in ("seconds_total", "images_per_second", "gemm_ratio"):
        assert out[key] > 0
    assert {"load", "learn", "encode", "train_bank", "test", "choose_alpha"} <= set(out["seconds"])
    assert out["n_features"] == 4 * 24 and out["features_params"]["n_centroids"] == 24
    assert out["bank"]["alpha_rel"] in (0.3, 3.0) and set(out["bank"]["validation_accuracy"]) == {"0.3", "3"}
    assert any("encoding" in s for s in stages)


def test_bench_can_be_stopped():
    with pytest.raises(Cancelled):
        bench.run(data="digits", k=8, n_patches=500, patch_size=3, should_stop=lambda: True)


@pytest.mark.parametrize("bad", [{"bank": "svm"}, {"alpha_rel": -1}, {"gemm_images": 0}])
def test_bad_options_fail_before_any_work(bad):
    from classmap_gui.core.errors import ConfigError

    with pytest.raises(ConfigError):
        bench.run(data="digits", **bad)
