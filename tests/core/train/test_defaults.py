"""Settings sized to the data: small sets get no ClassMap (and are told why), k-means fits the data."""
import numpy as np

from classmap_gui.core.data import ImageSet
from classmap_gui.core.train.defaults import CLASSMAP_MIN_CLASSES, suggest_config
from classmap_gui.core.train.training import TrainConfig


def _set(C, per_class, side=32):
    labels = np.repeat(np.arange(C), per_class)
    return ImageSet(np.zeros((len(labels), side, side), np.uint8), labels, [f"c{i}" for i in range(C)])


def test_five_classes_get_no_classmap_and_say_why():
    settings, reasons = suggest_config(_set(5, 20))
    assert settings["classmap"] is None
    assert any("ClassMap off" in r and "5 classes" in r for r in reasons)
    TrainConfig.from_dict(settings)  # valid settings


def test_many_classes_get_a_classmap_sized_to_them():
    settings, reasons = suggest_config(_set(250, 16))
    cm = settings["classmap"]
    assert cm is not None and 8 <= cm["d"] <= 45 and 5 <= cm["p"] < 250
    assert any("ClassMap on" in r for r in reasons)
    small = suggest_config(_set(CLASSMAP_MIN_CLASSES, 3))[0]
    assert small["classmap"] is None  # too few images per class to hold out an embedding part


def test_kmeans_is_sized_to_the_data_and_a_chosen_map_is_kept():
    settings, reasons = suggest_config(_set(5, 20), base={"features": "kmeans", "bank": "ova-ridge"})
    assert settings["features"] == "kmeans" and settings["bank"] == "ova-ridge"
    assert settings["features_params"]["n_centroids"] <= 64  # not 1600 for 100 images
    assert any("centroids" in r for r in reasons)
    big = suggest_config(_set(100, 200), base={"features": "kmeans"})[0]
    assert big["features_params"]["n_centroids"] > settings["features_params"]["n_centroids"]
    tiny = suggest_config(_set(3, 10, side=12))[0]
    assert tiny["features"] == "kmeans"  # too small for HOG cells


def test_every_class_gets_a_test_image():
    settings, reasons = suggest_config(_set(10, 3))
    assert settings["test_fraction"] * 30 >= 10
    assert any("every class has a test image" in r for r in reasons)


def test_a_registered_component_with_its_own_suits_is_proposed_without_editing_defaults():
    from fractions import Fraction

    from classmap_gui.core import registry
    from classmap_gui.core.suitability import Sized, Suits

    edges = registry.Component(
        "features", "edges", "tests.nowhere:Edges", "an edge map for large images",
        {"n_orientations": "orientations"},
        suits=Suits(rank=-1, min_side=40, why="edges ({side}-pixel images)",
                    sizes=(Sized("n_orientations", of="classes", ratio=Fraction(1, 2), low=2, high=16),),
                    sized_why="edges: {n_orientations} orientations for {C} classes"))
    registry.register(edges)
    try:
        settings, reasons = suggest_config(_set(10, 5, side=48))
        assert settings["features"] == "edges" and settings["features_params"] == {"n_orientations": 5}
        assert "Features: edges (48-pixel images)." in reasons and "edges: 5 orientations for 10 classes." in reasons
        assert suggest_config(_set(10, 5, side=32))[0]["features"] == "hog"  # too small for it: the next one
    finally:
        registry.unregister("features", "edges")
    assert suggest_config(_set(10, 5, side=48))[0]["features"] == "hog"


def test_for_the_map_classmap_is_on_for_a_few_classes_with_fewer_candidates_than_classes():
    """Explore's "train again with ClassMap on": four classes get ClassMap (no more references than classes, fewer
    candidates than classes) and a reason that says it saves nothing there; the plain proposal keeps it off."""
    import numpy as np

    from classmap_gui.core.data import ImageSet
    from classmap_gui.core.train.defaults import suggest_config

    ims = ImageSet(np.zeros((56, 24, 24), np.uint8), np.repeat(np.arange(4), 14), ["a", "b", "c", "d"])
    plain, _ = suggest_config(ims)
    assert plain["classmap"] is None
    s, reasons = suggest_config(ims, {"features": "hog", "bank": "ova-ridge"}, for_map=True)
    assert s["classmap"]["d"] <= 4 and 1 <= s["classmap"]["p"] < 4
    assert any("saves nothing" in r for r in reasons)


def test_images_of_hands_get_the_trained_hand_network_and_others_do_not():
    """Issue 48 item 4: shapes recorded from the demo video are hands, so the proposal is the network trained on
    hands (its reason says so); the same images not known to be hands keep HOG, and tiny ones k-means."""
    settings, reasons = suggest_config(_set(3, 20, side=64), hands=True)
    assert settings["features"] == "network"
    assert any(r.startswith("Features: the trained hand network") for r in reasons), reasons
    TrainConfig.from_dict(settings)
    assert suggest_config(_set(3, 20, side=64))[0]["features"] == "hog"
    assert suggest_config(_set(3, 20, side=8), hands=True)[0]["features"] == "kmeans"   # below the network's 16 px
    chosen = suggest_config(_set(3, 20, side=64), {"features": "hog"}, hands=True)[0]
    assert chosen["features"] == "hog"                                                    # a person's choice is kept
