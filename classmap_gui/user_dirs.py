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


__all__ = ["APP", "cache_dir", "config_dir", "data_dir", "hand_model_dir"]
