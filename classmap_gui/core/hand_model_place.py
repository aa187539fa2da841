"""Where the hand-pose model a person built lives: the one answer the app (*File > Get the hand-pose model*),
``classmap hand-model`` and every bench that needs a hand model give (``bench scan``, ``bench hand-network``
call :func:`built_hand_model` through :func:`classmap_gui.user_dirs.built_hand_model`).

Core reads no environment: the callers pass it, with the user data folder (:mod:`classmap_gui.user_dirs`).
"""
from __future__ import annotations

from pathlib import Path
from typing import Mapping

from .detect.pose_model import hand_model_folder


def built_hand_model(environ: Mapping[str, str], user_data_dir, remembered=None) -> Path | None:
    """The folder of a built hand-pose model (one holding ``model.json``), looked for where ``classmap
    hand-model`` saves it (``environ["CLASSMAP_HAND_MODEL"]``, else ``user_data_dir/hand-pose-model``), then in
    ``remembered`` (the app's folder last opened with *File > Open model…*, or None); None when neither holds one.
    """
    for folder in (hand_model_folder(environ, user_data_dir), remembered):
        if folder not in (None, "") and (Path(folder) / "model.json").is_file():
            return Path(folder)
    return None


__all__ = ["built_hand_model"]
