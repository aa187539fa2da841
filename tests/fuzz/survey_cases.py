"""Issue 40's hostile cases as one list, each applicable to a saved model (``classmap predict``) and to
its export (``predict.py``) alike, so one test holds the two to the same standard.

A case changes a copy of the model folder (``mutate(folder, fmt)`` with ``fmt`` "app" or "export":
the two formats name the same value differently), and may add arguments or give a hostile image.
"""
from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

#: the array each format keeps the k-means patch mean in
MEAN_KEY = {"app": "features/state.mean_", "export": "features.mean"}


def edit_json(folder: Path, change: Callable[[dict], None]) -> None:
    doc = json.loads((folder / "model.json").read_text())
    change(doc)
    (folder / "model.json").write_text(json.dumps(doc))


def edit_array(folder: Path, key: str, change: Callable[[np.ndarray], None]) -> None:
    """Rewrite ``arrays.npz`` with ``change`` applied to the member ``key`` (same dtype and shape)."""
    from classmap_gui.core.store.npz import write_npz

    with np.load(folder / "arrays.npz", allow_pickle=False) as z:
        arrays = {k: np.array(z[k]) for k in z.files}
    change(arrays[key])
    with open(folder / "arrays.npz", "wb") as fh:
        write_npz(fh, arrays)


def _fewer_names(folder: Path, fmt: str) -> None:
    edit_json(folder, lambda d: d.__setitem__("class_names", d["class_names"][:-1]))


def _huge_size(folder: Path, fmt: str) -> None:
    edit_json(folder, lambda d: d.__setitem__("image_size", [100000, 100000]))


def _json_link(folder: Path, fmt: str) -> None:
    (folder / "model.json").unlink()
    os.symlink("/etc/passwd", folder / "model.json")


def _arrays_link(folder: Path, fmt: str) -> None:
    outside = folder.parent / f"outside-{folder.name}.npz"
    (folder / "arrays.npz").rename(outside)
    os.symlink(outside, folder / "arrays.npz")


def _nan_mean(folder: Path, fmt: str) -> None:
    edit_array(folder, MEAN_KEY[fmt], lambda a: a.reshape(-1).__setitem__(0, np.nan))


def _patch_zero(folder: Path, fmt: str) -> None:
    if fmt == "app":
        edit_json(folder, lambda d: d["features"]["params"].__setitem__("patch_size", 0))
    else:
        edit_json(folder, lambda d: d["features"].__setitem__("patch_size", 0))


def _unchanged(folder: Path, fmt: str) -> None:
    pass


@dataclass(frozen=True)
class Case:
    name: str
    mutate: Callable[[Path, str], None] = _unchanged
    args: tuple[str, ...] = ()
    image: str = "image.png"      # which file of the test's images is classified
    needles: tuple[str, ...] = ()  # words the one stderr line holds (besides the model folder or image name)
    code: int = 2                  # exit status: 2 for a model or argument refused, 1 for an unreadable image
    names: str = "model"           # what the line names: "model" (its folder) or "image"
    fmts: tuple[str, ...] = field(default=("app", "export"))


CASES = [
    Case("class names fewer than the classifier's rows", _fewer_names, needles=("class",)),
    Case("image_size 100000x100000", _huge_size, needles=("image_size",)),
    Case("model.json a link to /etc/passwd", _json_link, needles=("link",)),
    Case("arrays.npz a link out of the folder", _arrays_link, needles=("link",)),
    Case("NaN in the feature map's weights", _nan_mean, needles=("NaN",)),
    Case("patch_size 0", _patch_zero, needles=("patch_size",)),
    Case("--top 0", args=("--top", "0"), needles=("--top",), names="none"),
    Case("--top -3", args=("--top", "-3"), needles=("--top",), names="none"),
    Case("an animated GIF", image="animated.gif", needles=("GIF images are not read",), code=1, names="image"),
]
