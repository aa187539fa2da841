"""The Train panel's lists of feature maps and banks and their parameters, from core's registry.

The settings form is built from the registry's :class:`~classmap_gui.core.schema.Param` descriptions
(``name, kind, default, help, choices, low, high, auto``), so the panel offers exactly the components
and values the command line and a saved model accept. What is left here is a view decision: which
parameters are too technical to show a person (worker counts, seeds, batch sizes).
"""
from __future__ import annotations

from ...core import registry
from ...core.schema import Param

#: parameters the form does not show (core's defaults apply)
HIDDEN = frozenset({"n_jobs", "random_state", "kmeans_batch_size", "max_memory_mb", "class_weight"})


def _choices(kind: str) -> tuple[tuple[str, str], ...]:
    return tuple((c.name, c.description) for c in registry.components(kind))


#: feature maps offered, with what each is (the drop-down's tooltips)
FEATURES = _choices("features")
#: classifier banks offered
BANKS = _choices("bank")


def _shown(kind: str, name: str) -> list[Param]:
    try:
        comp = registry.component(kind, name)
    except Exception:  # noqa: BLE001 - an unknown name (an old project's setting) shows no parameters
        return []
    return [p for p in comp.shown() if p.name not in HIDDEN]


def feature_params(name: str) -> list[Param]:
    """The parameters of feature map ``name`` as descriptions."""
    return _shown("features", name)


def bank_params(name: str) -> list[Param]:
    """The parameters of classifier bank ``name`` that its trainer reads, as descriptions."""
    return _shown("bank", name)
