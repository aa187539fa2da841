"""The progress/cancel protocol of long work in core (see DESIGN.md).

Long functions take ``progress: Callable[[float, str], None] | None`` (fraction done in
[0, 1], stage name) and ``should_stop: Callable[[], bool] | None``. These helpers keep the
calls short and map a sub-task onto a slice of its parent's progress range.
"""
from __future__ import annotations

from typing import Callable, Optional

from .errors import Cancelled

ProgressFn = Optional[Callable[[float, str], None]]
StopFn = Optional[Callable[[], bool]]


def check_stop(should_stop: StopFn) -> None:
    """Raise :class:`Cancelled` when ``should_stop()`` is true."""
    if should_stop is not None and should_stop():
        raise Cancelled("stopped on request")


def report(progress: ProgressFn, fraction: float, stage: str) -> None:
    """Call ``progress(fraction, stage)`` if given, with the fraction clipped to [0, 1]."""
    if progress is not None:
        progress(min(1.0, max(0.0, float(fraction))), stage)


def sub_progress(progress: ProgressFn, start: float, end: float, prefix: str | None = None) -> ProgressFn:
    """A progress callback for a sub-task that maps its [0, 1] onto [start, end] of the parent.

    ``prefix`` replaces the sub-task's stage name when given (e.g. "features").
    """
    if progress is None:
        return None

    def _p(fraction: float, stage: str) -> None:
        report(progress, start + (end - start) * fraction, prefix if prefix and not stage else (f"{prefix}: {stage}" if prefix else stage))

    return _p
