"""Saved type names: every name a saved model holds still loads as its class, old bank names included."""
from __future__ import annotations

import numpy as np
import pytest

from classmap_gui.core import registry
from classmap_gui.core.errors import ModelFormatError
from classmap_gui.core.store import dump_estimator, load_estimator, registered_class, type_names


def test_every_pinned_name_loads_as_a_class_saved_under_it():
    for name in (*type_names._PINNED_NAMES, *type_names._SAVED_EXTRA):   # the names saved models hold still load
        cls = type_names.saved_type(name)
        assert isinstance(cls, type) and type_names.saved_type_name(cls) == name, name


def test_saved_type_names_map_to_classes_and_unknown_ones_are_refused():
    # names written into models saved by every earlier version
    for name in ("kmeans", "hog", "pixels", "rff", "cnn", "all-pairs", "compressive", "compressive-classifier",
                 "classmap", "ova-liblinear", "ova-ridge", "ova-rbf", "all-pairs-ridge"):
        assert registered_class(name) is type_names.saved_type(name)
    with pytest.raises(ModelFormatError, match="'evil'"):
        registered_class("evil")
    bank = registry.make_bank("ova-ridge").fit(np.eye(4, dtype=np.float32).repeat(3, 0), np.arange(4).repeat(3))
    arrays: dict = {}
    spec = dump_estimator(bank, arrays, "c")
    assert spec["type"] == "ova-ridge" and spec["params"] == {"alpha": 1.0, "n_jobs": -1,
                                                                  "keep_statistics": "auto"}
    np.testing.assert_array_equal(load_estimator(spec, arrays).coef_, bank.coef_)


def test_a_bank_saved_before_the_split_per_trainer_loads_as_its_trainers_class():
    from classmap_gui.core.classify import AllPairsRidge, OneVsAllRBF, OneVsAllRidge

    old = {"C": 1.0, "alpha": 3.0, "class_weight": None, "gamma": "scale", "max_iter": 1000, "n_jobs": -1,
           "random_state": 0, "tol": 0.0001}
    X, y = np.eye(4, dtype=np.float32).repeat(3, 0), np.arange(4).repeat(3)
    for saved, trainer, cls in (("one-vs-all", "ridge", OneVsAllRidge), ("one-vs-all", "rbf", OneVsAllRBF),
                                ("all-pairs", "ridge", AllPairsRidge)):
        params = {k: v for k, v in old.items() if k in ("alpha", "C", "tol", "max_iter", "n_jobs", "random_state")
                  or saved == "one-vs-all"}
        fitted = cls(**{k: v for k, v in params.items() if k in cls().get_params()}).fit(X, y)
        arrays: dict = {}
        spec = dump_estimator(fitted, arrays, "c")
        spec = {**spec, "type": saved, "params": {**params, "trainer": trainer}}   # as the old version wrote it
        got = load_estimator(spec, arrays)
        assert type(got) is cls and got.get_params() == fitted.get_params()
        np.testing.assert_array_equal(got.decision_function(X), fitted.decision_function(X))
    with pytest.raises(ModelFormatError, match="trainer 'magic'"):
        load_estimator({"type": "one-vs-all", "params": {**old, "trainer": "magic"}, "state": {}}, {})
