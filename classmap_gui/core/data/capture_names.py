"""File names of captured frames, and the capture bursts read back from them.

A frame is saved as ``capture-YYYYmmdd-HHMMSS-NNNNN-b<burst>.png`` (:func:`capture_name`): the time
it was taken, a counter, and the token of its capture burst (:func:`new_burst_token`; frames of one
video file recorded into one class share one). Loading a folder of captures (:func:`groups_from_names`)
turns the tokens back into :attr:`ImageSet.groups`, so a saved and re-imported capture still splits
with every burst on one side. Older names (``capture-YYYYmmdd-HHMMSS-NNNNN.png``, no burst) and any
other file stay readable: each such image is its own group.
"""
from __future__ import annotations

import re
import time
from pathlib import Path

import numpy as np

_BURST = re.compile(r"^capture-\d{8}-\d{6}-\d+-b([0-9A-Za-z]+)\.[A-Za-z]+$")


def new_burst_token() -> str:
    """A token naming one capture burst: the time it began, to the microsecond (``20261130171502123456``)."""
    t = time.time()
    return time.strftime("%Y%m%d%H%M%S", time.localtime(t)) + f"{int(t % 1 * 1e6):06d}"


def capture_name(stamp: str, counter: int, burst: str | None = None) -> str:
    """The file name of a captured frame taken at ``stamp`` (``YYYYmmdd-HHMMSS``), ``counter``-th in its
    folder, in capture burst ``burst`` (None: a single snapshot, no burst)."""
    if burst and not re.fullmatch(r"[0-9A-Za-z]+", burst):
        raise ValueError(f"a burst token is letters and digits, got {burst!r}")
    return f"capture-{stamp}-{counter:05d}" + (f"-b{burst}" if burst else "") + ".png"


def burst_of(path: str | Path) -> str | None:
    """The capture burst token in a file name written by :func:`capture_name`, or None."""
    m = _BURST.match(Path(path).name)
    return m.group(1) if m else None


def groups_from_names(paths: list, labels) -> np.ndarray | None:
    """``(n,) int64`` capture groups of images loaded from ``paths`` with ``labels``: one group per burst
    token within a class, every image without a token its own; None when no name carries a burst (then
    every image is its own group anyway)."""
    tokens = [burst_of(p) for p in paths]
    if not any(tokens):
        return None
    ids: dict = {}
    out = np.empty(len(tokens), np.int64)
    for i, (tok, lab) in enumerate(zip(tokens, np.asarray(labels).tolist())):
        out[i] = ids.setdefault((lab, tok) if tok else (None, i), len(ids))
    return out
