"""The features benchmark end to end on the shipped digits (tiny network): the JSON a user reads."""
from __future__ import annotations

import json

import pytest

from classmap_gui.bench import features as bench
from classmap_gui.core.errors import Cancelled


def test_bench_chooses_on_validation_and_reports_the_test_once():
    stages = []
    out = bench.run(data="digits", k="12,24", n_patches=3000, patch_size=3, gemm_images=200, alpha_rel="0.3,3",
                    n_jobs=2, progress=lambda f, s: stages.append(s))
    json.dumps(out)  # JSON-ready as printed by `classmap bench features --json`
    assert out["accuracy"] > 0.9
    sel = out["selection"]
    assert sel["network"]["split"] == "validation" and sel["bank.alpha_rel"]["split"] == "validation"
    scores = sel["network"]["scores"]
    assert len(scores) == 4                                  # 2 networks x 2 penalties, all on validation
    best = max(scores, key=lambda q: q["accuracy"])
    assert sel["network"]["chosen"]["k"] == best["k"] and sel["bank.alpha_rel"]["chosen"] == best["penalty"]
    assert out["validation_accuracy"] == best["accuracy"]
    assert out["n_features"] == 4 * best["k"] and out["bank"]["alpha_rel"] == best["penalty"]
    # the validation part comes from the training images: 1/6 of each class
    assert sel["network"]["validation_images"] == pytest.approx(out["n_train"] / 6, abs=10)
    # gemm_ratio is what its detail says: the encoding's time over its GEMM's, on the images named
    det = out["gemm_ratio_detail"]
    assert det["images"] == 200
    assert out["gemm_ratio"] == pytest.approx(det["encode_seconds"] / det["gemm_seconds"])
    assert {"load", "learn", "encode", "train_bank", "test", "choose"} <= set(out["seconds"])
    assert any("encoding" in s for s in stages)


def test_bench_can_be_stopped():
    with pytest.raises(Cancelled):
        bench.run(data="digits", k=8, n_patches=500, patch_size=3, should_stop=lambda: True)


@pytest.mark.parametrize("bad", [{"bank": "svm"}, {"alpha_rel": "-1"}, {"gemm_images": 0}, {"hellinger": "maybe"},
                                 {"validation_fraction": 1.5}])
def test_bad_options_fail_before_any_work(bad):
    from classmap_gui.core.errors import ConfigError

    with pytest.raises(ConfigError):
        bench.run(data="digits", **bad)
