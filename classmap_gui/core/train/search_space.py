"""What the one search (:class:`~.search.ClassMapSearch`) may try: the "auto" candidates of a bank's penalty
and of ClassMap's searched parameters, and how a given value reads (one value, a list of candidates, "auto").
"""
from __future__ import annotations

from ..errors import ConfigError

AUTO = "auto"
#: "auto" candidates of a bank penalty: ridge alphas relative to n * mean feature variance; C as they are
PENALTY_GRID = {"alpha": (1e-4, 1e-3, 1e-2, 3e-2, 1e-1, 3e-1, 1.0, 3.0, 10.0),
                "C": (1e-3, 1e-2, 1e-1, 1.0, 10.0)}
#: "auto" candidates of ClassMap's searched parameters (p: those below the number of classes)
REFERENCE_PENALTIES = (1.0, 3.0, 10.0, 30.0, 100.0)
P_SWEEP = (5, 10, 15, 20, 30, 40, 60, 80)
#: the ClassMap parameters the search chooses (the others are fixed values)
SEARCHED = ("reference_penalty", "embedding_examples", "refine", "p")
#: what a ClassMap operating point is
KEYS = ("reference_penalty", "embedding_examples", "refine", "p")


def candidates(value, default) -> list:
    """A parameter's candidates: ``"auto"`` -> ``default``, a list or tuple -> its items, a value -> ``[value]``."""
    if isinstance(value, str) and value == AUTO:
        return list(default)
    if isinstance(value, (list, tuple)):
        if not value:
            raise ConfigError("a searched parameter needs at least one candidate")
        return list(value)
    return [value]


def searched(value) -> bool:
    """Whether a parameter value asks for a search (``"auto"`` or a list of candidates)."""
    return (isinstance(value, str) and value == AUTO) or isinstance(value, (list, tuple))


def penalty_key(bank) -> str | None:
    """The parameter that is ``bank``'s penalty (the class names it once: ``penalty``), or None."""
    key = getattr(bank, "penalty", None)  # the class attribute, also through a wrapper that forwards attributes
    return key if isinstance(key, str) and key in bank.get_params(deep=False) else None
