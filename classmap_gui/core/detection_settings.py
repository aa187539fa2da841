"""Checking a hand model's saved detection settings, ``metadata["detection"]``, as the rest of a model is
checked: at load (:meth:`~classmap_gui.core.recogniser.Recogniser.load`) and when a
:class:`~.scanner.Scanner` or :class:`~.reading.HandReader` is built from a recogniser, so a hand-edited
or corrupted value is one :class:`ModelFormatError` naming it, not an AttributeError deep in a scan.

:data:`DETECTION_KEYS` is the one table of what each key may hold; whoever adds a setting to what
``classmap hand-model`` writes adds its line here. Keys the table does not know are left alone (a model
from a newer version may carry more); the detector's weights are checked against the feature width by
:meth:`~.detector.HandDetector.from_json`, which knows it.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from .errors import ModelFormatError

#: scan methods a calibrated found-threshold may be saved for (scanner.METHODS)
_METHODS = ("classmap", "brute_force")


@dataclass(frozen=True)
class Rule:
    """What one setting holds: ``kind`` "number" (finite), "int" (whole), "numbers" (a list of
    ``min_len``..``max_len`` numbers), "object" (a JSON object; ``fields`` rule its known keys),
    "by_method" (``{scan method: number (infinite too) or null}``); ``low``/``high`` inclusive bounds (``open_low``:
    ``low`` itself refused); ``nullable``: null allowed."""

    kind: str
    low: float | None = None
    high: float | None = None
    open_low: bool = False
    nullable: bool = False
    min_len: int = 1
    max_len: int = 64
    fields: tuple = ()


def _number_error(value: Any, rule: Rule, whole: bool) -> str | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return "must be a finite number"
    if whole and not float(value).is_integer():
        return "must be a whole number"
    if rule.low is not None and (value < rule.low or (rule.open_low and value == rule.low)):
        return f"must be {'above' if rule.open_low else 'at least'} {rule.low:g}"
    if rule.high is not None and value > rule.high:
        return f"must be at most {rule.high:g}"
    return None


def _error(value: Any, rule: Rule) -> str | None:
    """Why ``value`` breaks ``rule``, or None."""
    if value is None:
        return None if rule.nullable else "needs a value"
    if rule.kind in ("number", "int"):
        return _number_error(value, rule, rule.kind == "int")
    if rule.kind == "numbers":
        if not isinstance(value, list) or not rule.min_len <= len(value) <= rule.max_len:
            return f"must be a list of {rule.min_len} to {rule.max_len} numbers"
        return next((f"holds {str(v)[:20]}, which {e}" for v in value if (e := _number_error(v, rule, False))), None)
    if not isinstance(value, dict):
        return "must be an object"
    if rule.kind == "by_method":
        bad = next((k for k in value if k not in _METHODS), None)
        if bad is not None:
            return f"names {str(bad)[:30]!r}, not a scan method ({', '.join(_METHODS)})"
        # -Infinity is a calibrated threshold too: no score beat "always found" on validation (choice.found_threshold)
        return next((f"[{k}] must be a number" for k, v in value.items() if v is not None and (
            isinstance(v, bool) or not isinstance(v, (int, float)) or math.isnan(v))), None)
    for key, sub in rule.fields:
        if key in value and (e := _error(value[key], sub)):
            return f".{key} {e}"
    return None


#: ``metadata["detection"]``'s keys and what each may hold (module docstring)
DETECTION_KEYS: dict[str, Rule] = {
    "sides": Rule("numbers", low=0.0, high=1.0, open_low=True),
    "background_weight": Rule("number", low=-1e6, high=1e6),
    "detector_weight": Rule("number", low=-1e6, high=1e6),
    "vote_overlap": Rule("number", low=0.0, high=1.0, open_low=True),
    "vote_temperature": Rule("number", low=0.0, high=1e6),
    "found_threshold": Rule("by_method", nullable=True),
    "detector": Rule("object", nullable=True),
    "candidates": Rule("int", low=1, high=1_000_000),
    "finder": Rule("object", nullable=True, fields=(("hog", Rule("object")),)),
    "reading": Rule("object", nullable=True, fields=(
        ("temperature", Rule("number", low=0.0, high=1e6, open_low=True)),
        ("history", Rule("int", low=1, high=100_000)),
        ("crops", Rule("int", low=1, high=64)),
        ("unsure_below", Rule("number", low=0.0, high=1.0)))),
}


def check_detection(detection: Any, where: str = "model metadata") -> dict:
    """``detection`` (a model's ``metadata["detection"]``) when every key :data:`DETECTION_KEYS` knows holds
    what it may; ModelFormatError ``"<where>: detection.<key> <what>"`` for the first that does not."""
    if not isinstance(detection, dict):
        raise ModelFormatError(f"{where}: detection must be an object of settings, got "
                               f"{type(detection).__name__} {str(detection)[:40]}")
    for key, rule in DETECTION_KEYS.items():
        if key in detection and (e := _error(detection[key], rule)):
            raise ModelFormatError(f"{where}: detection.{key} {e}")
    return detection


def model_detection(rec: Any) -> dict:
    """A recogniser's checked ``metadata["detection"]`` (``{}`` when it has none): what a Scanner or
    HandReader reads its saved settings from."""
    metadata = getattr(rec, "metadata", None) or {}
    if "detection" not in metadata:
        return {}
    return check_detection(metadata["detection"])
