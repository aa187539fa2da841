"""The Train panel's lists of feature maps and banks and their parameters, from core's registry.

The settings form is built from the registry's :class:`~classmap_gui.core.guards.schema.Param` descriptions
(``name, kind, default, help, choices, low, high, auto``), so the panel offers exactly the components
and values the command line and a saved model accept. What is left here is a view decision: which
parameters are too technical to show a person (worker counts, seeds, batch sizes), and showing a
penalty that training chooses by itself when it is not given (a ridge bank's ``alpha``) as the explicit
choice "auto": otherwise the form showed the registry's default 1.0, a typed 1.0 equalled it and was left
out, and training quietly chose another value.
"""
from __future__ import annotations

from dataclasses import replace

from ...core import registry
from ...core.guards.schema import Param

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
    """The parameters of classifier bank ``name`` that its trainer reads, as descriptions; one that training
    chooses when unset defaults to "auto" (a number typed in is then always passed on)."""
    from ...core.train.training import auto_params

    try:
        chosen = set(auto_params(name, {}))
    except Exception:  # noqa: BLE001 - an unknown bank (an old project's setting): nothing is chosen
        chosen = set()
    return [replace(p, default="auto", auto=True,
                    help=f"{p.help}. auto: training chooses it on a validation part of the training images "
                         "(the Stages log says \"choosing {p.name}\"); type a number to fix it")
            if p.name in chosen else p for p in _shown("bank", name)]


def classmap_params() -> list[Param]:
    """ClassMap's parameters as descriptions: its defaults and ranges are the ones `classmap train --classmap`
    uses (a box ticked and left untouched sends none of them)."""
    return _shown("classmap", "classmap")
