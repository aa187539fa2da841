"""The features benchmark end to end on the shipped digits (tiny network): the JSON a user reads."""
from __future__ import annotations

import json

import pytest

from classmap_gui.bench import features as bench
from classmap_gui.core.errors import Cancelled


def test_bench_chooses_on_validation_and_reports_the_test_once():
    stages = []
    out = bench.run(data="digits", test_seed=1, k="12,24", n_patches=3000, patch_size=3, gemm_images=200, alpha_rel="0.3,3",
                    n_jobs=2, progress=lambda f, s: stages.append(s))
    json.dumps(out)  # JSON-ready as printed by `classmap bench features --json`
    assert out["accuracy"] > 0.9
    sel = out["selection"]
    assert sel["network"]["split"] == "validation" and sel["bank.alpha_rel"]["split"] == "validation"
    scores = sel["network"]["scores"]
    assert len(scores) == 4                                  # 2 networks x 2 penalties, all on validation
    best = max(scores, key=lambda q: q["accuracy"])
    assert sel["network"]["chosen"]["k"] == best["k"]
    pen = sel["bank.alpha_rel"]                              # the penalty again, on the whole fit part
    assert pen["scores"][f"{pen['chosen']:g}"] == max(pen["scores"].values()) == out["validation_accuracy"]
    assert out["n_features"] == 4 * best["k"] and out["bank"]["alpha_rel"] == pen["chosen"]
    # the validation part comes from the training images: 1/6 of each class
    assert sel["network"]["validation_images"] == pytest.approx(out["n_train"] / 6, abs=10)
    # gemm_ratio is what its detail says: the encoding's time over its GEMM's, on the images named
    det, g = out["gemm_ratio_detail"], out["gemm_ratio"]
    assert det["images"] == 200 and g["rounds"] == 3 == len(det["ms_per_image"]["encode"])
    ratios = [e / m for e, m in zip(det["ms_per_image"]["encode"], det["ms_per_image"]["gemm"])]
    assert g["min"] == pytest.approx(min(ratios)) and g["max"] == pytest.approx(max(ratios))
    assert g["min"] <= g["median"] <= g["max"] and len(g["load_before"]) == 3 == len(g["load_after"])
    assert {"load", "learn", "encode", "train_bank", "test", "choose", "search"} <= set(out["seconds"])
    assert any("encoding" in s for s in stages)


def test_hellinger_and_mirrored_training_images_are_candidates_scored_on_validation():
    out = bench.run(data="digits", test_seed=1, k=12, n_patches=2000, patch_size=3, hellinger="false,true",
                    flip="false,true", gemm_images=50, alpha_rel="0.3,3", n_jobs=1)
    net = out["selection"]["network"]
    tried = {(q["hellinger"], q["flip"]) for q in net["scores"]}
    assert {(False, False), (True, False)} <= tried and len(tried) == 3   # coordinate search: flip at the best Hellinger
    best = max(net["scores"], key=lambda q: q["accuracy"])
    chosen = net["chosen"]
    assert max(q["accuracy"] for q in net["scores"] if (q["hellinger"], q["flip"]) == (chosen["hellinger"], chosen["flip"])) \
        == best["accuracy"]
    assert out["features_params"]["hellinger"] == chosen["hellinger"]
    assert out["n_test"] == 360 and out["accuracy"] > 0.8                # the test part was not mirrored or doubled


def test_bench_can_be_stopped():
    with pytest.raises(Cancelled):
        bench.run(data="digits", test_seed=1, k=8, n_patches=500, patch_size=3, should_stop=lambda: True)


@pytest.mark.parametrize("bad", [{"bank": "svm"}, {"alpha_rel": "-1"}, {"gemm_images": 0}, {"hellinger": "maybe"},
                                 {"validation_fraction": 1.5}, {"test_seed": 0, "seed": 0},
                                 {"test_seed": "official"}])
def test_bad_options_fail_before_any_work(bad):
    from classmap_gui.core.errors import ConfigError

    with pytest.raises(ConfigError):
        bench.run(data="digits", **bad)


def test_a_poisoned_test_part_changes_no_choice(monkeypatch, poison):
    from classmap_gui.core.data import ImageSet

    kw = dict(data="digits", test_seed=1, k="8,12", patch_size="3,4", hellinger="false,true", flip="false,true",
              n_patches=2000, gemm_images=50, alpha_rel="0.3,3", n_jobs=1)
    clean = bench.run(**kw)
    load = bench._load

    def poisoned(*a, **k):
        train, test = load(*a, **k)
        return train, ImageSet(poison.noise_like(test.images), poison.permuted(test.labels), test.class_names)

    monkeypatch.setattr(bench, "_load", poisoned)
    dirty = bench.run(**kw)
    assert poison.without_timings(dirty["selection"]) == poison.without_timings(clean["selection"])
    assert dirty["accuracy"] < 0.3 < clean["accuracy"]               # the poison reached the test figures
