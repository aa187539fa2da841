"""What every ``classmap`` sub-command shares: the progress bar, ``--set`` parsing and output."""
from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any, Protocol

from ..settings_text import parse_sets, parse_value  # noqa: F401  (the sub-commands' import)


class Subcommands(Protocol):
    """What ``ArgumentParser.add_subparsers()`` returns (argparse names its class only privately)."""

    def add_parser(self, name: str, **kwargs: Any) -> argparse.ArgumentParser: ...


class ProgressBar:
    """Progress on stderr: on a terminal one line redrawn in place (stage, bar, percent and the whole run's
    time left, from the run's start: a stage's own pace says little about the stages after it); elsewhere (a
    pipe, a log file; when ``enabled`` is True: the benches and the hand-model build) one plain line per
    stage and at most one a minute, so a long run is never silent. Stage names are shown whole."""

    #: seconds between plain lines within one stage when stderr is not a terminal
    PLAIN_EVERY = 60.0

    def __init__(self, stream=None, enabled: bool | None = None, terminal: bool | None = None):
        self.stream = stream = sys.stderr if stream is None else stream
        tty = bool(getattr(stream, "isatty", lambda: False)())
        self.terminal = tty if terminal is None else terminal
        self.enabled = tty if enabled is None else enabled
        self.stage = None
        self.t0 = time.perf_counter()
        self.last = 0.0
        self.width = 0

    def left(self, fraction: float, now: float) -> str:
        """The whole run's time left, ``" 3 min left"`` / ``" 42 s left"``; "" while unknown."""
        elapsed = now - self.t0
        if not 0.02 < fraction < 1 or elapsed < 1:
            return ""
        left = elapsed / fraction - elapsed
        return f", about {round(left / 60):.0f} min left" if left >= 90 else f", {left:.0f} s left"

    def __call__(self, fraction: float, stage: str) -> None:
        if not self.enabled:
            return
        now = time.perf_counter()
        new_stage = stage != self.stage
        if self.terminal:
            if not new_stage and now - self.last < 0.1 and fraction < 1.0:
                return
            filled = int(30 * fraction)
            line = f"{stage} [{'#' * filled}{'.' * (30 - filled)}] {100 * fraction:5.1f}%{self.left(fraction, now)}"
            self.stream.write("\r" + line.ljust(self.width))
            self.width = len(line)
        else:
            if not new_stage and now - self.last < self.PLAIN_EVERY and fraction < 1.0:
                return
            self.stream.write(f"{stage}: {100 * fraction:.0f}%{self.left(fraction, now)}\n")
        self.stage, self.last = stage, now
        self.stream.flush()

    def close(self) -> None:
        """End the bar's line so later output starts on a fresh one; call when the work is done."""
        if self.enabled and self.terminal and self.stage is not None:
            self.stream.write("\n")
            self.stream.flush()
        self.stage = None


def emit(result: object, as_json: bool, text: str | None = None) -> None:
    """Print ``result`` as JSON, or ``text`` (default: JSON anyway) for people."""
    if as_json or text is None:
        print(json.dumps(result, indent=2, default=json_default))
    else:
        print(text)


def json_default(o: object) -> object:
    """``json.dumps`` fallback for numpy scalars and arrays."""
    import numpy as np

    if isinstance(o, np.generic):
        return o.item()
    if isinstance(o, np.ndarray):
        return o.tolist()
    raise TypeError(f"not JSON serialisable: {type(o).__name__}")
