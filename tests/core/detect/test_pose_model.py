"""The hand model's ClassMap choices (core/detect/pose_model.py): the reference penalty and p come from the
shared selection rules on the held-out validation part, as bench classmap chooses them."""
from __future__ import annotations

import numpy as np

from classmap_gui.core.detect.pose_model import build_hand_model

TINY = {"shapes": 3, "orientations": 2, "images_per_class": 12, "background": 60, "bootstrap_rounds": 0,
        "detector_scenes": 0, "d": 3, "p_sweep": "2,3"}


def test_reference_penalty_is_chosen_on_validation_and_the_model_carries_it():
    rec, info = build_hand_model({**TINY, "reference_penalties": "1,30"})
    sel = info["selection"]["references"]                                   # the one search's records
    assert sel["split"] == "validation" and sel["candidates"] == [{"reference_penalty": f, "embedding_examples": "embedding"}
                                                                 for f in (1.0, 30.0)]
    assert sel["split_rows"] == info["images"]["validation"]                # chosen on the held-out crops
    assert {q["reference_penalty"] for q in sel["points"]} == {1.0, 30.0}        # each candidate swept over p
    gaps = {f: np.mean([sel["brute_force_accuracy"] - q["accuracy"] for q in sel["points"]
                        if q["reference_penalty"] == f]) for f in (1.0, 30.0)}
    chosen = sel["chosen"]["reference_penalty"]
    assert chosen == min(gaps, key=lambda f: (gaps[f], f))                  # the smallest mean validation gap
    p_sel = info["selection"]["classmap_point"]
    assert p_sel["chosen"]["reference_penalty"] == chosen                   # p chosen on that penalty's points
    assert rec.classmap.reference_penalty == chosen == info["classmap"]["reference_penalty"]
    assert rec.classmap.p == p_sel["chosen"]["p"] == info["classmap"]["p"]
    assert rec.metadata["classmap_params"]["reference_penalty"] == chosen
    assert info["bank_params"]["alpha"] == info["selection"]["bank.alpha"]["chosen"]
    assert 0 < info["test_accuracy"] == rec.metadata["test_accuracy"] <= 1            # the chosen model's score
