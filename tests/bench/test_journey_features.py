"""bench journey-features: the README's own-classes journey from the demo video, each take held out in turn."""
import numpy as np

from classmap_gui.bench.demo_reading import shipped_video
from classmap_gui.bench.journey_features import journey_set, run
from classmap_gui.core.data.hand_video import KEY_POSES, TAKES


def test_the_journey_set_is_the_demo_shapes_one_burst_per_take_and_pose():
    ims, takes = journey_set(shipped_video(), 0.7, 32)
    assert ims.class_names == list(dict.fromkeys(k[0] for k in KEY_POSES))
    assert ims.images.shape[1:] == (32, 32) and set(takes.tolist()) == set(range(len(TAKES)))
    for t in range(len(TAKES)):                      # a take's images of one shape are one burst, never shared
        for c in range(ims.n_classes):
            assert len(np.unique(ims.groups[(takes == t) & (ims.labels == c)])) == 1
    assert len(np.unique(ims.groups)) == len(TAKES) * ims.n_classes


def test_hog_is_tested_on_each_take_it_never_trained_on_and_the_proposal_is_the_hand_network():
    out = run(features="hog", size=32)
    hog = out["features"]["hog"]
    assert len(hog["accuracy_per_held_out_take"]) == len(TAKES) and 0.5 < hog["accuracy"] <= 1.0
    assert out["proposed"] == "network" and out["proposed_without_hands"] == "hog" and out["test_seed"] == 0
