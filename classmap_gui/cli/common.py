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
    """A one-line terminal progress bar with stage name and remaining-time estimate (stderr)."""

    def __init__(self, stream=sys.stderr, enabled: bool | None = None):
        self.stream = stream
        self.enabled = stream.isatty() if enabled is None else enabled
        self.stage = None
        self.t0 = time.perf_counter()
        self.last = 0.0

    def __call__(self, fraction: float, stage: str) -> None:
        if not self.enabled:
            return
        now = time.perf_counter()
        if stage != self.stage:
            if self.stage is not None:
                self.stream.write("\n")
            self.stage, self.t0 = stage, now
        elif now - self.last < 0.1 and fraction < 1.0:
            return
        self.last = now
        elapsed = now - self.t0
        eta = f" {elapsed / fraction - elapsed:5.0f}s left" if 0.02 < fraction < 1 else ""
        filled = int(30 * fraction)
        self.stream.write(f"\r{stage[:40]:<40} [{'#' * filled}{'.' * (30 - filled)}] {100 * fraction:5.1f}%{eta}   ")
        self.stream.flush()

    def close(self) -> None:
        """End the bar's line so later output starts on a fresh one; call when the work is done."""
        if self.enabled and self.stage is not None:
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
