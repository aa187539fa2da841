"""Where the app's shipped files are: the source tree, the installed bundle, or the package."""
from __future__ import annotations

import sys
from pathlib import Path


def resource_path(name: str) -> Path | None:
    """A shipped resource file: in the source tree, the installed bundle, or the package; None if missing."""
    here = Path(__file__).resolve()
    places = [here.parents[2] / "resources", here.parents[1] / "resources"]
    if getattr(sys, "_MEIPASS", None):
        places.insert(0, Path(sys._MEIPASS) / "resources")
    return next((p / name for p in places if (p / name).is_file()), None)


__all__ = ["resource_path"]
