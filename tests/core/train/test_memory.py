"""Memory budgets once the data is known: what the options ask for must fit."""
from __future__ import annotations

import pytest

from classmap_gui.core.guards import limits
from classmap_gui.core.train import memory
from classmap_gui.core.errors import ConfigError


def _check(**kw):
    args = dict(features="kmeans", features_params={}, bank="ova-ridge", bank_params={}, classmap=None,
                n_images=100, image_shape=(32, 32), n_classes=10)
    memory.check_train_memory(**{**args, **kw})


def test_auto_sizes_are_estimated_as_their_largest_value(monkeypatch):
    auto = {"patch_size": "auto", "n_centroids": "auto", "n_patches": "auto"}
    _check(features_params=auto)  # fits on any machine the tests run on
    # 200 000 patches of 36 values: 86 MB for the sampled patches, so 50 MB free refuses "auto" like the default
    monkeypatch.setattr(limits, "available_memory", lambda: 50 << 20)
    for params in (auto, {}):
        with pytest.raises(ConfigError, match="--set n_patches: 200000 patches of 36 values"):
            _check(features_params=params)
    _check(features_params={"n_patches": 1000, "n_centroids": 16})


def test_classmap_p_must_leave_classes_to_drop():
    with pytest.raises(ConfigError, match="--classmap p=12: .* only 10"):
        _check(features="pixels", classmap={"p": 12})
    _check(features="pixels", classmap={"p": 5})
