"""What training will hold, planned before any work from the options and the data's shape, and checked
against the memory budget (:func:`~classmap_gui.core.guards.limits.check_fits`).

Apart from :mod:`~classmap_gui.core.guards.limits` because it asks the registry for each component's class
(its ``memory_plan``), and the registry stands on the guards' parameter schema.
"""
from __future__ import annotations

import math

from ..errors import ConfigError
from ..guards.limits import MemoryPlan, check_fits, planned_size
from ..registry import component


def _is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def memory_plan(kind: str, name: str, params: dict, n_images: int, image_shape: tuple[int, ...]) -> MemoryPlan:
    """The registry component ``name``'s :class:`MemoryPlan` (its class's ``memory_plan``, else the default)."""
    cls = component(kind, name).cls
    if hasattr(cls, "memory_plan"):
        return cls.memory_plan(params, n_images, image_shape)
    return MemoryPlan(width=4 * math.prod(image_shape))


def check_train_memory(*, features: str, features_params: dict, bank: str, bank_params: dict,
                       classmap: dict | None, n_images: int, image_shape: tuple[int, ...], n_classes: int) -> None:
    """Memory and data-dependent checks before training: what the options ask for must fit.

    image_shape: ``(h, w)`` or ``(h, w, 3)`` of one image. The feature map and the bank plan their
    largest float32 arrays themselves (:func:`memory_plan`: patches sampled for k-means, random
    projections, the feature matrix); ClassMap's are checked here.
    """
    for kind, name, params in (("features", features, features_params), ("bank", bank, bank_params)):
        for option, nbytes, what in memory_plan(kind, name, params, n_images, image_shape).budgets:
            check_fits(option, nbytes, what)
    if classmap is not None:
        p = classmap.get("p", 40)
        if _is_int(p) and p > n_classes:
            raise ConfigError(f"--classmap p={p}: ClassMap keeps p candidate classes, but the data has only "
                              f"{n_classes}; choose p below {n_classes} (or leave ClassMap off for few classes)")
        d = classmap.get("d", 45)
        if _is_int(d) and d > max(n_classes, 1) * 4 and d > 64:
            raise ConfigError(f"--classmap d={d}: an embedding of {d} dimensions for {n_classes} classes; "
                              f"choose d at most {max(64, 4 * n_classes)}")
        triples = planned_size(classmap, "n_triples", 60_000)
        check_fits("--classmap n_triples", triples * 3 * 8 * 4, f"{triples} triples")


def model_bytes(features: str, features_params: dict, n_classes: int, image_shape: tuple[int, ...],
                minimum: int = 0) -> int:
    """A rough upper estimate of a saved model's size: the feature map's own arrays and a (C, D) bank."""
    plan = memory_plan("features", features, features_params, 0, image_shape)
    return minimum + 4 * (plan.own_floats + 2 * n_classes * plan.width)
