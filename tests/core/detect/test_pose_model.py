"""The hand model's ClassMap choices (core/detect/pose_model.py): the reference penalty and p come from the
shared selection rules on the held-out validation part, as bench classmap chooses them."""
from __future__ import annotations

import numpy as np

from classmap_gui.core.detect.pose_model import build_hand_model

TINY = {"shapes": 3, "orientations": 2, "images_per_class": 12, "background": 60, "bootstrap_rounds": 0,
        "detector_scenes": 12, "d": 3, "p_sweep": "2,3"}


def test_reference_penalty_is_chosen_on_validation_and_the_model_carries_it():
    rec, info = build_hand_model({**TINY, "reference_penalties": "1,30"})
    sel = info["selection"]["classmap_reference_penalty"]
    assert sel["split"] == "validation" and len(sel["candidates"]) == 4               # 2 penalties x 2 examples
    assert {q["reference_penalty"] for q in sel["points"]} == {1.0, 30.0}        # each candidate swept over p
    key = lambda q: (q["reference_penalty"], q["embedding_examples"])                # noqa: E731
    combos = list(dict.fromkeys(key(q) for q in sel["points"]))
    assert {c[1] for c in combos} == {"embedding", "embedding+training"}            # both candidates swept
    gaps = {c: np.mean([sel["brute_force_accuracy"] - q["accuracy"] for q in sel["points"] if key(q) == c])
            for c in combos}
    best = min(combos, key=lambda c: (gaps[c], c[0], combos.index(c)))
    assert sel["chosen"] == {"reference_penalty": best[0], "embedding_examples": best[1]}  # smallest mean gap
    p_sel = info["selection"]["classmap_p"]
    assert p_sel["chosen"]["reference_penalty"] == sel["chosen"]["reference_penalty"]   # p on those points
    assert rec.classmap.reference_penalty == sel["chosen"]["reference_penalty"] == info["classmap"]["reference_penalty"]
    assert rec.classmap.p == p_sel["chosen"]["p"] == info["classmap"]["p"]
    assert rec.metadata["config"]["classmap"]["reference_penalty"] == sel["chosen"]["reference_penalty"]
    assert info["bank_params"]["alpha"] == info["selection"]["bank.alpha"]["chosen"]
    assert 0 < info["test_accuracy"] == rec.metadata["test_accuracy"] <= 1            # the chosen model's score


def test_the_default_hand_model_reads_with_the_network_and_finds_with_hog():
    """The network reads; the HOG hand detector finds the windows it reads (the cascade), saved with the model."""
    from classmap_gui.core.detect.scanner import Scanner
    from classmap_gui.core.data.hand_scene import random_hand_scene
    from classmap_gui.core.features.network import NetworkFeatures

    rec, info = build_hand_model({**TINY, "candidates": 7})
    assert isinstance(rec.features, NetworkFeatures) and info["feature_map"] == "network"
    det = rec.metadata["detection"]
    assert det["finder"]["hog"]["cell_size"] == 8 and det["candidates"] == 7 and det["detector"] is not None
    grey, box = random_hand_scene(np.random.default_rng(3), 240, 320)
    for method in ("classmap", "brute_force"):
        r = Scanner(rec, method).scan(grey)
        assert r.windows == 7                                   # only the detector's best windows are read
        assert len(r.boxes) >= 1 and r.top_classes.size >= 1

