"""bench hand-network and bench hand-readers on tiny models: the JSON the issue's figures come from."""
from __future__ import annotations

import pytest

from classmap_gui.core.errors import ConfigError

TINY = dict(shapes=2, orientations=2, build_images_per_class=16, background=200, hard_negatives=40,
            bootstrap_rounds=1, p_sweep="2,3", d=3, detector_scenes=6, validation_video_seeds="101,102",
            reading_video_seeds="101", no_hand_frames=6, side_sets="0.36,0.43,0.52", vote_temperatures="0,0.05",
            histories="1,3", temperatures="0.05", images_per_class=2)


@pytest.mark.slow
def test_hand_network_bench_scores_both_styles_by_both_methods(tmp_path):
    from classmap_gui.bench.hand_network import run

    out = run(cache_dir=str(tmp_path), **TINY)
    for style in ("varied", "camera"):
        c = out["crops"][style]
        assert c["images"] == 2 * 4 and c["seed"] == out["test_seed"] + (style == "camera")
        for m in ("classmap", "brute_force"):
            assert 0 <= c[m]["class_accuracy"] <= c[m]["shape_accuracy"] <= 1
        assert c["brute_force"]["evaluations_per_query"] == out["model"]["classes"]
        assert c["classmap"]["evaluations_per_query"] <= out["model"]["classes"] + 1
    assert out["network"]["width"] == 512 and out["network"]["bytes"] > 100_000
    assert out["network"]["parity_max_abs_diff"] <= 1e-4
    ops = out["operations"]
    assert ops["ratio"] == pytest.approx(ops["brute_force"] / ops["classmap"])
    assert out["selection"]["classmap_point"]["split"] == "validation"


def test_hand_network_bench_refuses_a_test_seed_the_network_was_trained_or_validated_on():
    from classmap_gui.bench.hand_network import run
    from classmap_gui.core.features.network import network_record

    rec = network_record("hand")["recipe"]
    for seed in (rec["validation_seed"], rec["seed"] - 1):
        with pytest.raises(ConfigError, match="must differ"):
            run(test_seed=seed, **TINY)


def test_hand_readers_bench_compares_on_validation_crops():
    from classmap_gui.bench.hand_readers import run

    out = run(shapes=3, orientations=2, images_per_class="8,12", background=60, candidates="hog,network")
    assert out["split"] == "validation"
    rows = {(r["features"], r["images_per_class"]) for r in out["rows"]}
    assert rows == {("hog", 8), ("hog", 12), ("network", 8), ("network", 12)}
    for r in out["rows"]:
        assert r["ms_per_crop"] > 0 and 0 <= r["camera"]["shape_accuracy"] <= 1
        assert r["width"] == (1764 if r["features"] == "hog" else 512)
