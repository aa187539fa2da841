"""The hand model's ClassMap choices (core/detect/pose_model.py): the reference penalty and p come from the
shared selection rules on the held-out validation part, as bench classmap chooses them."""
from __future__ import annotations

import numpy as np
import pytest

from classmap_gui.core.detect.pose_model import build_hand_model
from classmap_gui.core.errors import ConfigError

TINY = {"shapes": 3, "orientations": 2, "images_per_class": 12, "background": 60, "bootstrap_rounds": 0,
        "detector_scenes": 12, "d": 3, "p_sweep": "2,3"}


@pytest.mark.parametrize("bank", ["auto", "ova-ridge"])
def test_every_choice_is_the_one_searchs_on_the_held_out_hand_crops_and_the_model_carries_it(bank):
    rec, info = build_hand_model({**TINY, "reference_penalties": "1,30", "bank": bank})
    sel = info["selection"]
    # ClassMapSearch's records; the network's own head (the window model's bank) has no penalty to choose
    head = bank == "auto"
    assert info["bank"] == ("network-head" if head else "ova-ridge") == rec.metadata["config"]["bank"]
    assert set(sel) == {"references", "classmap_point"} | (set() if head else {"bank.alpha"})
    n_val = info["images"]["validation"]
    for key in sel:
        # scored as the reader reads: the hand crops of the held-out part only (its background rows left out)
        assert sel[key]["split"] == "validation" and 0 < sel[key]["split_rows"] < n_val, key
        assert sel[key]["scoring"].startswith("foreground"), key
    ref = sel["references"]
    tried = ref["grid"]["reference_penalty"]                                       # 1 and 30, widened past an edge
    assert {1.0, 30.0} <= set(tried) and len(ref["candidates"]) == 2 * len(tried)  # penalties x 2 examples
    assert {q["reference_penalty"] for q in ref["points"]} == set(tried)          # each candidate swept over p
    key = lambda q: (q["reference_penalty"], q["embedding_examples"])              # noqa: E731
    combos = list(dict.fromkeys(key(q) for q in ref["points"]))
    assert {c[1] for c in combos} == {"embedding", "embedding+training"}          # both candidates swept
    point = sel["classmap_point"]["chosen"]
    assert {k: point[k] for k in ("reference_penalty", "embedding_examples")} == ref["chosen"]
    assert rec.classmap.reference_penalty == point["reference_penalty"] == info["classmap"]["reference_penalty"]
    assert rec.classmap.p == point["p"] == info["classmap"]["p"] and point["p"] in sel["classmap_point"]["grid"]["p"]
    assert rec.classmap.refine == point["refine"] and rec.classmap.embedding_examples == point["embedding_examples"]
    if not head:
        assert info["bank_params"]["alpha"] == sel["bank.alpha"]["chosen"]
    else:   # its smoother references are ridge banks (reference_penalty 30 is among the candidates)
        assert type(rec.classifier).__name__ == "NetworkHeadBank" and rec.classifier.head_scale_ > 0
    assert 0 < info["test_accuracy"] == rec.metadata["test_accuracy"] <= 1            # the chosen model's score


def test_the_reader_scoring_never_names_the_background_and_scores_hand_rows_only():
    """What the hand model's choices are scored by (core/train/scoring.py), against the reader's own rule."""
    from classmap_gui.core.train.scoring import Scoring

    class Bank:
        classes_ = np.arange(3)

        def decision_function(self, X):
            return np.asarray(X, np.float32)

    X = np.array([[0.1, 0.9, 0.5], [0.2, 0.1, 0.9], [0.9, 0.8, 0.1]], np.float32)   # class 2 is the background
    y = np.array([1, 0, 2])
    label, reader = Scoring("label"), Scoring("foreground", background=2)
    assert reader.rows(y).tolist() == [True, True, False] and label.rows(y).all()
    # row 1: the bank's argmax is the background (wrong as a label); the reader names the best hand class, 0
    assert reader.brute_hits(Bank(), X, y).tolist() == [True, True, False]
    with pytest.raises(ConfigError, match="background"):
        Scoring("foreground")


def test_the_default_hand_model_embeds_every_window_with_the_window_network():
    """The window network embeds every window of the frame and the model classifies all of them: no HOG finder,
    no separate detector; the class images are windows with their context."""
    from classmap_gui.core.detect.scanner import Scanner
    from classmap_gui.core.data.hand_scene import random_hand_scene
    from classmap_gui.core.features.network_input import CROP

    rec, info = build_hand_model(TINY)
    assert rec.features.kind_ == "window" and info["feature_map"] == "window" and rec.image_size == (CROP, CROP)
    det = rec.metadata["detection"]
    assert det["detector"] is None and "finder" not in det
    grey, box = random_hand_scene(np.random.default_rng(3), 240, 320)
    for method in ("classmap", "brute_force"):
        sc = Scanner(rec, method)
        r = sc.scan(grey)
        assert r.windows == len(sc.pyramid.boxes(240, 320)) > 100      # every window of every scale classified
        assert len(r.boxes) >= 1 and r.top_classes.size >= 1
        assert {"features: network", "features: levels"} <= set(r.timings)


def test_a_crop_network_hand_model_reads_with_the_network_and_finds_with_hog():
    """The crop network reads; the HOG hand detector finds the windows it reads (the cascade), saved with the model."""
    from classmap_gui.core.detect.scanner import Scanner
    from classmap_gui.core.data.hand_scene import random_hand_scene
    from classmap_gui.core.features.network import NetworkFeatures

    rec, info = build_hand_model({**TINY, "features": "network", "candidates": 7})
    assert isinstance(rec.features, NetworkFeatures) and info["feature_map"] == "network"
    det = rec.metadata["detection"]
    assert det["finder"]["hog"]["cell_size"] == 8 and det["candidates"] == 7 and det["detector"] is not None
    grey, box = random_hand_scene(np.random.default_rng(3), 240, 320)
    for method in ("classmap", "brute_force"):
        r = Scanner(rec, method).scan(grey)
        assert r.windows == 7                                   # only the detector's best windows are read
        assert len(r.boxes) >= 1 and r.top_classes.size >= 1



def test_the_build_lets_the_class_images_go_before_training(monkeypatch):
    """The build encodes its class images once and trains on their features: the images (0.77 GB in the default
    build) are gone before the search starts, and never joined to the background crops, so a laptop's memory
    holds the features, not the crops."""
    import weakref

    from classmap_gui.core.data import hand_pose
    from classmap_gui.core.train import training
    from classmap_gui.core.train.encode import EncodedSet

    made, seen = [], []
    generate, train = hand_pose.generate_hand_pose, training.train

    def keep_a_weak_reference(*args, **kwargs):
        out = generate(*args, **kwargs)
        made.append(weakref.ref(out.images))
        return out

    def train_and_look(data, *args, **kwargs):
        seen.append((type(data), [ref() is None for ref in made]))
        return train(data, *args, **kwargs)

    monkeypatch.setattr(hand_pose, "generate_hand_pose", keep_a_weak_reference)
    monkeypatch.setattr(training, "train", train_and_look)
    rec, info = build_hand_model(TINY)
    assert seen == [(EncodedSet, [True])]            # one training, on features; the class images already freed
    assert rec.class_names[-1] == "background" and info["images"]["train"] > 0 and 0 < info["test_accuracy"] <= 1
