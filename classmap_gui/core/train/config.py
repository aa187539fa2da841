"""How to train a recogniser, as plain data: the settings the CLI, the Train panel and project files share.

A light module (no numeric stack), so the CLI's parser and the GUI's settings form take their defaults
from it without loading what :mod:`classmap_gui.core.train.training` needs to train.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field

from ..errors import ConfigError

__all__ = ["TrainConfig"]


@dataclass
class TrainConfig:
    """How to train a recogniser.

    features / features_params: a feature map name for ``make_features`` and its parameters.
    bank / bank_params: a classifier bank name for ``make_bank`` and its parameters.
    classmap: None for brute force, or ClassMap parameters (``{"d": 45, "p": 40, ...}``); its
    ``reference_penalty`` (e.g. 10) makes training fit the references as a second bank with a penalty
    that many times stronger (ridge alpha x, C /; see ``ClassMap.fit_embedding(reference_bank=...)``).
    A bank penalty and ClassMap's ``reference_penalty``, ``embedding_examples``, ``refine`` and ``p`` may be
    ``"auto"`` or a list of candidates: chosen on validation by :class:`~classmap_gui.core.train.search.ClassMapSearch`.
    search: that search's own settings (``tolerance``, ``n_se``, ``curve_seeds``; empty: its defaults).
    test_fraction: part of each class held out for the test report (0: report on the training set).
    classmap_fraction: part of each class held out to fit the ClassMap embedding (used when classmap).
    seed: random seed for splits and every fitted component that takes ``random_state``.
    """

    features: str = "kmeans"
    features_params: dict = field(default_factory=dict)
    bank: str = "ova-liblinear"
    bank_params: dict = field(default_factory=dict)
    classmap: dict | None = None
    test_fraction: float = 0.2
    classmap_fraction: float = 0.2
    seed: int = 0
    search: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        """The settings as a plain dict (JSON-able), for reports and project files."""
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> "TrainConfig":
        """Settings from a dict saved by ``to_dict``; ConfigError names any unknown key."""
        unknown = set(d) - set(cls.__dataclass_fields__)
        if unknown:
            raise ConfigError(f"unknown training setting(s): {', '.join(sorted(unknown))}")
        return cls(**d)
