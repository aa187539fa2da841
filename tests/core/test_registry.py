"""The component registry: one table of names, classes and parameter schemas, checked before any work."""
from __future__ import annotations

import numpy as np
import pytest

from classmap_gui.core import registry
from classmap_gui.core.errors import ConfigError
from classmap_gui.core.store import type_names


def test_every_component_is_listed_with_a_schema_derived_from_its_class():
    # the table is the list (no copy of it here): names unique per kind, the ones saved models and defaults use there
    for kind in registry.KINDS:
        assert len(set(registry.names(kind))) == len(registry.names(kind)) > 0, kind
    assert {"kmeans", "hog", "pixels", "network"} <= set(registry.feature_names())
    assert {"ova-ridge", "ova-liblinear", "all-pairs", "compressive"} <= set(registry.bank_names())
    assert {"exact", "ivf", "hnsw"} <= set(registry.names("filter")) & set(type_names._PINNED_NAMES)
    for kind in registry.KINDS:
        for comp in registry.components(kind):
            got = comp.cls().get_params(deep=False)
            # every constructor parameter but training's own is a setting, and each has a help line of its own
            assert set(got) - set(comp.internal) == {p.name for p in comp.params}, comp.name
            assert set(comp.help) <= {p.name for p in comp.params}, comp.name   # no help for a missing parameter
            for p in comp.params:
                assert got[p.name] == p.default, (comp.name, p.name)
                assert p.help != p.name and p.kind in (int, float, str, bool), (comp.name, p.name)
            # the defaults pass the schema: a GUI form filled with them builds the component
            assert isinstance(registry.make(kind, comp.name, **comp.defaults()), comp.cls)


def test_the_schema_is_the_classes_own_declaration():
    """One declaration: a bound changed on the class is the bound the CLI, the form and the store check."""
    from numbers import Real

    from sklearn.utils._param_validation import Interval

    from classmap_gui.core.classify.classmap.estimator import ClassMap
    from classmap_gui.core.classify.banks.ova import OneVsAllRidge

    cm = registry.component("classmap", "classmap")
    assert cm.param("n_triples").high == ClassMap._parameter_constraints["n_triples"][0].right
    assert set(cm.param("refine").choices) == ClassMap._parameter_constraints["refine"][0].options
    fresh = registry.Component("bank", "ova-ridge", ".classify.banks.ova:OneVsAllRidge", "probe")
    original = OneVsAllRidge._parameter_constraints
    try:
        OneVsAllRidge._parameter_constraints = {**original, "alpha": [Interval(Real, 2.0, 3.0, closed="both")]}
        assert (fresh.param("alpha").low, fresh.param("alpha").high) == (2.0, 3.0)
        with pytest.raises(ValueError, match="alpha"):
            OneVsAllRidge(alpha=1.0).fit(np.eye(3, dtype=np.float32), [0, 1, 2])   # the class refuses it too
    finally:
        OneVsAllRidge._parameter_constraints = original
    # each bank class names its penalty once; the switch banks' trainer= is gone
    for name in registry.bank_names():
        cls = registry.component("bank", name).cls
        assert "trainer" not in cls().get_params()
        assert getattr(cls, "penalty", None) in ({p.name for p in registry.component("bank", name).params} | {None})


@pytest.mark.parametrize("kind, name, params, message", [
    ("features", "kmeans", {"n_patches": 10**9}, "n_patches must lie between 1 and 2e\\+06"),
    ("features", "kmeans", {"patch_size": "big"}, "patch_size must be a whole number or one of auto"),
    ("features", "kmeans", {"patch_size": 2.5}, "patch_size must be a whole number"),
    ("features", "kmeans", {"encoder": "soft"}, "encoder must be one of hard, triangle"),
    ("features", "kmeans", {"hellinger": 1}, "hellinger must be true or false"),
    ("features", "kmeans", {"n_jobs": 10_000}, "n_jobs must lie between"),
    ("features", "cnn", {"m": 10**8}, "m must lie between 2 and 100000"),
    ("features", "hog", {"cell_sise": 4}, "has no parameter 'cell_sise'; valid: cell_size"),
    ("features", "pixels", {"size": "big"}, "size must be HxW"),
    ("bank", "ova-ridge", {"alpha": float("nan")}, "alpha must be a finite number"),
    ("bank", "ova-ridge", {"alpha": -1.0}, "alpha must lie between"),
    ("bank", "ova-ridge", {"trainer": "liblinear"}, "each trainer is a bank of its own; choose --bank from"),
    ("bank", "ova-ridge", {"C": 1.0}, "has no parameter 'C'; valid: alpha, n_jobs"),
    ("features", "hog", {"n_bins": 1}, "n_bins must lie between 2 and 360"),
    ("classmap", "classmap", {"estimator": None}, "estimator is set by training"),
    ("bank", "ova-rbf", {"gamma": "wide"}, "gamma must be a number or one of auto, scale"),
    ("bank", "compressive", {"sketch": "wavelets"}, "sketch must be one of cnn, features, rff"),
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
    assert type(registry.make_bank("ova-rbf", gamma=0.5)).__name__ == "OneVsAllRBF"
    assert registry.make_bank("compressive", sigma="auto", m=64).m == 64
    # text from a form field: converted by the parameter's kind, then checked
    fm = registry.make_features("kmeans", n_centroids="16", norm_eps="2.5", hellinger="true")
    assert (fm.n_centroids, fm.norm_eps, fm.hellinger) == (16, 2.5, True)
    with pytest.raises(ConfigError, match="n_patches must lie between"):
        registry.make_features("kmeans", n_patches="0")


def test_compressive_cnn_sketch_asks_for_the_random_cnn():
    bank = registry.make_bank("compressive", sketch="cnn", m=64, sigma=1.5)
    assert bank.features_for("kmeans", {"n_centroids": 5}) == ("cnn", {"m": 64, "sigma": 1.5, "random_state": 0})
    assert bank.features_for("cnn", {"width": 4})[1] == {"width": 4, "m": 64, "sigma": 1.5, "random_state": 0}
    assert registry.make_bank("compressive").features_for("hog", {"cell_size": 4}) == ("hog", {"cell_size": 4})
    assert registry.make_bank("ova-ridge").features_for("hog", {}) == ("hog", {})


def test_every_class_path_resolves_and_listing_the_components_loads_no_numeric_stack():
    import subprocess
    import sys
    from pathlib import Path

    for kind in registry.KINDS:
        for comp in registry.components(kind):
            assert isinstance(comp.cls, type) and comp.cls.__module__.startswith("classmap_gui.core."), comp.name
    # listing the components and refusing a bad name or seed need no class (checked in a fresh interpreter);
    # the parameters' schemas are the classes' own, so checking a value imports its class
    code = ("import sys; from classmap_gui.core import registry as r; r.names('bank'); r.bank_descriptions(); "
            "r.check_names('kmeans', 'compressive'); "
            "print(sorted(m for m in ('sklearn', 'numba', 'cv2', 'scipy', 'joblib') if m in sys.modules))")
    env = {"PYTHONPATH": str(Path(__file__).resolve().parents[2]), "PATH": "/usr/bin:/bin"}
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60)
    assert res.stdout.strip() == "[]", res.stdout + res.stderr


def test_training_options_are_checked_by_the_chosen_components_schemas():
    def check(features="kmeans", fp=None, bank="ova-ridge", bp=None, cm=None, seed=0, tf=0.2):
        return registry.check_train_options(features=features, features_params=fp or {}, bank=bank,
                                            bank_params=bp or {}, classmap=cm, seed_value=seed, test_fraction=tf)

    # converted as the schema says, so later steps see numbers and sizes
    assert check("pixels", {"size": "8x6"}, bp={"alpha": "0.5"}, cm={"p": 5}) == ({"size": (8, 6)}, {"alpha": 0.5}, {"p": 5})
    for kwargs, message in [
        ({"fp": {"n_patches": 0}}, "--set n_patches=0: n_patches must lie between 1 and 2e+06"),
        ({"bp": {"C": 0}, "bank": "ova-liblinear"}, "--set bank.C=0: C must lie between 1e-08 and 1e+08"),
        ({"bp": {"trainer": "rbf"}}, "--set bank.trainer='rbf': bank 'ova-ridge' has no parameter 'trainer'"),
        ({"bp": {"m": 64}}, "--set bank.m=64: bank 'ova-ridge' has no parameter 'm'"),
        ({"cm": {"hard_fraction": 2}}, "--set classmap.hard_fraction=2: hard_fraction must lie between 0 and 1"),
        ({"cm": {"refine": "v4"}}, "refine must be one of all-pairs-vote"),
        ({"cm": {"p": 0}}, "--set classmap.p=0: p must lie between 1 and 1e+06"),
        ({"fp": {"patch_size": "big"}}, "patch_size must be a whole number or one of auto"),
        ({"features": "sift"}, "--features 'sift': choose from kmeans"),
        ({"bank": "ova-magic"}, "--bank 'ova-magic': choose from ova-liblinear"),
        ({"seed": 2**32}, "--seed 4294967296: the seed must be a whole number from 0 to 4294967295"),
        ({"tf": float("nan")}, "--test-fraction nan"),
    ]:
        with pytest.raises(ConfigError) as info:
            check(**kwargs)
        assert message in str(info.value), (kwargs, str(info.value))


def test_an_unprefixed_setting_goes_to_the_feature_map_else_the_bank_else_names_both():
    assert registry.route_unprefixed("kmeans", "compressive", {"n_centroids": 8, "m": 64, "sketch": "cnn"}) == (
        {"n_centroids": 8}, {"m": 64, "sketch": "cnn"})
    # the feature map comes first: the random Fourier map has its own m
    assert registry.route_unprefixed("rff", "compressive", {"m": 64}) == ({"m": 64}, {})
    assert registry.route_unprefixed("hog", "ova-ridge", {"alpha": 2}) == ({}, {"alpha": 2})
    with pytest.raises(ConfigError) as info:
        registry.route_unprefixed("hog", "ova-ridge", {"cell_sise": 4})
    text = str(info.value)
    assert text.startswith("--set cell_sise=4: neither the feature map 'hog' nor the bank 'ova-ridge'")
    assert "cell_size, block_size" in text and "the bank's (also as bank.KEY): alpha, n_jobs" in text
    # a ridge bank has no trainer: it is not a valid key either
    with pytest.raises(ConfigError, match="neither"):
        registry.route_unprefixed("hog", "ova-ridge", {"trainer": "rbf"})
