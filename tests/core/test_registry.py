"""The component registry: one table of names, classes and parameter schemas, checked before any work."""
from __future__ import annotations

import numpy as np
import pytest

from classmap_gui.core import registry
from classmap_gui.core.errors import ConfigError, ModelFormatError
from classmap_gui.core.store import dump_estimator, load_estimator, registered_class


def test_every_component_is_listed_with_a_schema_matching_its_class():
    assert registry.feature_names() == ["kmeans", "hog", "pixels", "rff", "cnn"]
    assert registry.bank_names() == ["ova-liblinear", "ova-ridge", "ova-rbf", "all-pairs", "compressive"]
    for kind in registry.KINDS:
        for comp in registry.components(kind):
            got = comp.cls(**comp.fixed).get_params(deep=False)
            # every constructor parameter is described (and nothing else), defaults as the class has them
            assert set(got) - set(comp.fixed) == {p.name for p in comp.params}, comp.name
            for p in comp.params:
                assert got[p.name] == p.default, (comp.name, p.name)
                assert p.help and p.kind in (int, float, str, bool)
            # the defaults pass the schema: a GUI form filled with them builds the component
            assert isinstance(registry.make(kind, comp.name, **comp.defaults()), comp.cls)


@pytest.mark.parametrize("kind, name, params, message", [
    ("features", "kmeans", {"n_patches": 10**9}, "n_patches must lie between 1 and 2e\\+06"),
    ("features", "kmeans", {"patch_size": "big"}, "patch_size must be a whole number or one of auto"),
    ("features", "kmeans", {"patch_size": 2.5}, "patch_size must be a whole number"),
    ("features", "kmeans", {"encoder": "soft"}, "encoder must be one of triangle, hard"),
    ("features", "kmeans", {"hellinger": 1}, "hellinger must be true or false"),
    ("features", "kmeans", {"n_jobs": 10_000}, "n_jobs must lie between"),
    ("features", "cnn", {"m": 10**8}, "m must lie between 2 and 100000"),
    ("features", "hog", {"cell_sise": 4}, "has no parameter 'cell_sise'; valid: cell_size"),
    ("features", "pixels", {"size": "big"}, "size must be HxW"),
    ("bank", "ova-ridge", {"alpha": float("nan")}, "alpha must be a finite number"),
    ("bank", "ova-ridge", {"alpha": -1.0}, "alpha must lie between"),
    ("bank", "ova-ridge", {"trainer": "liblinear"}, "fixes trainer"),
    ("bank", "ova-rbf", {"gamma": "wide"}, "gamma must be a number or one of scale, auto"),
    ("bank", "compressive", {"sketch": "wavelets"}, "sketch must be one of rff, features, cnn"),
    ("bank", "ova-magic", {}, "unknown classifier bank 'ova-magic'; known: ova-liblinear"),
    ("features", "sift", {}, "unknown feature map 'sift'; known: kmeans"),
])
def test_a_bad_setting_is_a_clear_error_naming_the_option(kind, name, params, message):
    with pytest.raises(ConfigError, match=message):
        registry.make(kind, name, **params)


def test_good_settings_reach_the_component():
    fm = registry.make_features("kmeans", patch_size=4, n_centroids=8.0, whiten_eps=None, random_state=3)
    assert (fm.patch_size, fm.n_centroids, fm.whiten_eps, fm.random_state) == (4, 8, None, 3)
    assert isinstance(fm.n_centroids, int)
    assert registry.make_features("pixels", size="12x10").size == (12, 10)
    assert registry.make_features("pixels", size=[6, 6]).size == (6, 6)
    assert registry.make_bank("ova-rbf", gamma="auto").gamma == "auto"
    assert registry.make_bank("ova-rbf", gamma=0.5).get_params()["trainer"] == "rbf"
    assert registry.make_bank("compressive", sigma="auto", m=64).m == 64
    # text from a form field: converted by the parameter's kind, then checked
    fm = registry.make_features("kmeans", n_centroids="16", norm_eps="2.5", hellinger="true")
    assert (fm.n_centroids, fm.norm_eps, fm.hellinger) == (16, 2.5, True)
    with pytest.raises(ConfigError, match="n_patches must lie between"):
        registry.make_features("kmeans", n_patches="0")


def test_saved_type_names_map_to_classes_and_unknown_ones_are_refused():
    # names written into models saved by every earlier version
    for name in ("kmeans", "hog", "pixels", "rff", "cnn", "one-vs-all", "all-pairs", "compressive",
                 "compressive-classifier", "classmap"):
        assert registered_class(name) is registry.saved_type(name)
    with pytest.raises(ModelFormatError, match="'evil'"):
        registered_class("evil")
    bank = registry.make_bank("ova-ridge").fit(np.eye(4, dtype=np.float32).repeat(3, 0), np.arange(4).repeat(3))
    arrays: dict = {}
    spec = dump_estimator(bank, arrays, "c")
    assert spec["type"] == "one-vs-all"
    np.testing.assert_array_equal(load_estimator(spec, arrays).coef_, bank.coef_)


def test_compressive_cnn_sketch_asks_for_the_random_cnn():
    bank = registry.make_bank("compressive", sketch="cnn", m=64, sigma=1.5)
    assert bank.features_for("kmeans", {"n_centroids": 5}) == ("cnn", {"m": 64, "sigma": 1.5, "random_state": 0})
    assert bank.features_for("cnn", {"width": 4})[1] == {"width": 4, "m": 64, "sigma": 1.5, "random_state": 0}
    assert registry.make_bank("compressive").features_for("hog", {"cell_size": 4}) == ("hog", {"cell_size": 4})
    assert registry.make_bank("ova-ridge").features_for("hog", {}) == ("hog", {})
