"""The app's folders on this user's machine, in one place for the GUI and the CLI.

Both front ends read the environment and the platform's conventions (platformdirs) here; core is
handed the folder and reads neither (DESIGN.md: a core module never reads settings by itself).
"""
from __future__ import annotations

import os
from pathlib import Path

APP = "classmap-studio"


def data_dir() -> Path:
    """The user data folder (autosaves, captures of unsaved projects, the hand-pose model)."""
    from platformdirs import user_data_dir  # platformdirs loads on first use

    return Path(user_data_dir(APP, appauthor=False))


def config_dir() -> Path:
    """The user configuration folder (recent projects)."""
    from platformdirs import user_config_dir

    return Path(user_config_dir(APP, appauthor=False))


def cache_dir() -> Path:
    """The user cache folder (benchmark caches)."""
    from platformdirs import user_cache_dir

    return Path(user_cache_dir(APP))


def hand_model_dir() -> Path:
    """Where ``classmap hand-model`` saves the hand-pose model and the app looks for it:
    ``$CLASSMAP_HAND_MODEL``, else the user data folder."""
    from .core.detect.pose_model import hand_model_folder  # core loads on first use

    return hand_model_folder(os.environ, data_dir())


def built_hand_model(remembered=None) -> Path | None:
    """The hand-pose model the app built (or ``classmap hand-model`` did), where the app looks for it; then
    ``remembered`` (the app's last opened hand model folder); None when there is none. One answer for the app,
    the CLI and the benches (:func:`classmap_gui.core.detect.pose_model.built_hand_model`)."""
    from .core.detect.pose_model import built_hand_model as find

    return find(os.environ, data_dir(), remembered)


__all__ = ["APP", "built_hand_model", "cache_dir", "config_dir", "data_dir", "hand_model_dir"]
