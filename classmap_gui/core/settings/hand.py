"""The hand model's settings, declared once: :data:`SETTINGS`, read by the build, the choice on validation
videos, the scanner, the reader, the GUI, the CLI's ``--quick`` and the store's check.

Each :class:`Setting` has a group — ``"build"`` (:func:`..detect.pose_model.make_hand_model`'s options, ``bench scan``'s
too), ``"choice"`` (what :mod:`..detect.choice` chooses from), ``"scan"`` (saved in ``metadata["detection"]``: what a
:class:`~..detect.scanner.Scanner` reads; its default is the scanner's when a model holds none) and ``"reading"``
(saved in ``metadata["detection"]["reading"]``: a :class:`~..detect.reading.HandReader`'s and the GUI's) — a default,
a help line, the value of the ``--quick`` build where it differs, and for saved settings a :class:`Rule` of what
a saved value may hold. :func:`options`, :func:`defaults`, :func:`quick` and :data:`DETECTION_KEYS` are views of
that one table; adding a setting is one line here.

Saved settings are checked as the rest of a model is: at load (:meth:`~classmap_gui.core.recogniser.Recogniser.load`)
and when a Scanner or HandReader is built from a recogniser, so a hand-edited or corrupted value is one
:class:`ModelFormatError` naming it, not an AttributeError deep in a scan. Keys the table does not know are left
alone (a model from a newer version may carry more); the detector's weights are checked against the feature width
by :meth:`~..detect.detector.HandDetector.from_json`, which knows it.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from ..errors import ModelFormatError
from ..selection.policy import REFERENCE_PENALTIES, TOLERANCE

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


_NOT_QUICK = object()


@dataclass(frozen=True)
class Setting:
    """One hand-model setting (module docstring): ``group``, ``name``, ``default``, ``help``; ``quick``: its value in
    the ``--quick`` build (when it differs); ``rule``: what a saved value may hold (saved groups only)."""

    group: str
    name: str
    default: Any
    help: str
    quick: Any = _NOT_QUICK
    rule: Rule | None = None


_SIDES = (0.30, 0.36, 0.43, 0.52, 0.62)
_CANDIDATES = 32

SETTINGS: tuple[Setting, ...] = (
    # the build (classmap hand-model --set KEY=VALUE, bench scan's options)
    Setting("build", "images_per_class", 32, "generated hand-pose images per class (before the validation hold-out)",
            quick=20),
    Setting("build", "shapes", None, "hand shapes (None: all 81; a count or names) — fewer for a quick build", quick=8),
    Setting("build", "orientations", None, "orientations (None: all 30; a count spread over the grid)", quick=6),
    Setting("build", "features", "window",
            "the reader's features: window (the window network embeds every window of the frame; its background class "
            "finds the hand), network (a crop network: HOG and the hand detector find the hand, the network reads the "
            "detector's best windows) or hog (HOG does both)"),
    Setting("build", "bank", "auto", "the hand classes' classifiers: network-head (the window network's own class "
            "head), ova-ridge (ridge fitted on the build's images) or auto (network-head with window features: it named "
            "the shape better on validation crops, docs/bench/hand-bank-choice.json; else ova-ridge)"),
    Setting("build", "candidates", _CANDIDATES, "windows per frame a crop network reads in the scan (the hand "
            "detector's best)"),
    Setting("build", "style", "varied", "training style: varied (randomised domain) or clean"),
    Setting("build", "shift_jitter", 0.06, "training framing: the hand's centre jitter, fraction of the crop"),
    Setting("build", "scale_jitter", 0.10, "training framing: the hand's size jitter, relative"),
    Setting("build", "background", 6000, "generated background crops (clutter and near misses) in the background class",
            quick=1000),
    Setting("build", "hard_negatives", 3000, "false alarms mined per bootstrap round in generated hand scenes "
            "(HOG and crop-network models)", quick=300),
    Setting("build", "bootstrap_rounds", 1, "bootstrap rounds (each: train brute force, mine false alarms)"),
    Setting("build", "miner_alpha", 3.0, "the mining model's ridge penalty: fixed (it only finds false alarms; the "
            "scan model of an earlier revision chose 2.1 on validation), which halves a bootstrap round's training"),
    Setting("build", "validation_fraction", 0.1, "share of every class held out to choose p"),
    Setting("build", "d", 45, "ClassMap reference classifiers", quick=12),
    Setting("build", "p_sweep", "10,15,20,30,40,60,90,135", "candidate p values (chosen on validation; widened past an "
            "edge choice)", quick="4,8"),
    Setting("build", "refine", "v2,v3", "candidate ClassMap refines, chosen on validation with p"),
    Setting("build", "embedding_examples", "embedding,embedding+training", "candidate images that embed the classes, "
            "chosen on validation: the embedding part, or every training image too"),
    Setting("build", "reference_penalties", REFERENCE_PENALTIES, "candidate reference-bank penalty multiples, chosen on "
            "validation (core.selection.reference_penalty, as bench classmap chooses)"),
    Setting("build", "tolerance", TOLERANCE, "chosen p: the shared operating-point rule's margin (core.selection)"),
    Setting("build", "sides", ",".join(f"{v:.2f}" for v in _SIDES),
            "window sides (fractions of the frame's shorter side) mined and chosen from"),
    Setting("build", "detector_scenes", 400, "generated hand scenes whose windows train the hand detector (0: none; "
            "HOG and crop-network models)", quick=60),
    Setting("build", "detector_alpha", 10.0, "the detector's ridge penalty"),
    Setting("build", "seed", 0, "random seed"),
    # what the scan and reading settings are chosen from, on validation videos (core.detect.choice)
    Setting("choice", "validation_video_seeds", "1,101,102,103,104,105,106,107,108", "seeds of the validation videos "
            "(the seed-1 video steered earlier revisions of the scanner: validation too)", quick="101,102"),
    Setting("choice", "reading_video_seeds", "101,102,103", "validation videos (all frames) the reader's settings are "
            "chosen on", quick="101"),
    Setting("choice", "background_weights", "0,0.02,0.05,0.1,0.3,1,3",
            "candidate weights of the background response in a window's score"),
    Setting("choice", "side_sets", "0.36,0.43,0.52,0.62;0.36,0.43,0.52", "candidate window-side sets "
            "(';'-separated, >= 3 each)"),
    Setting("choice", "vote_overlaps", "0.3", "candidate box-voting overlaps"),
    Setting("choice", "vote_temperatures", "0,0.02,0.05,0.2", "candidate box-voting temperatures (0: no voting)"),
    Setting("choice", "detector_weights", "0.01,0.02,0.03", "candidate weights of the hand detector in a window's score"),
    Setting("choice", "no_hand_frames", 120, "clutter scenes without a hand (own seeds) that calibrate 'hand found'",
            quick=20),
    Setting("choice", "temperatures", "0.005,0.01,0.02,0.05,0.1,0.2,0.5,1,2,5", "candidate reader temperatures (softmax of "
            "responses; a ridge bank's lie within about 2, the network head's logits over tens)"),
    Setting("choice", "histories", "1,3,5,8", "candidate reader histories (frames integrated along the hand's track)"),
    Setting("choice", "crops", "0,1,5,9", "candidate reader re-crops per frame (0: the frame-pass reading, the "
            "scan's own windows, no network run)"),
    Setting("choice", "frame_size", (320, 240), "frame size (w, h) the choice scans at"),
    Setting("choice", "capture_video_seeds", "201,202,203,204,205,206,207,208,209,210,211,212",
            "validation videos in the demo's style (the hand filling the Run panel's capture box; key poses from all "
            "2430 classes) its no-hand margin and 'sure' threshold are chosen on (empty: none)", quick="201"),
    Setting("choice", "capture_contexts", "0.05,0.1,0.15,0.2,0.25,0.3", "candidate borders around the capture box "
            "(fractions of its side, its edge repeated) before a window network reads it", quick="0.25"),
    # saved in metadata["detection"]: the scanner's settings (its defaults when a model holds none)
    Setting("scan", "sides", _SIDES, "window sides, fractions of the frame's shorter side",
            rule=Rule("numbers", low=0.0, high=1.0, open_low=True)),
    Setting("scan", "background_weight", 1.0, "the background response's weight in a window's score",
            rule=Rule("number", low=-1e6, high=1e6)),
    Setting("scan", "detector_weight", 1.0, "the hand detector's weight in a window's score (models with one)",
            rule=Rule("number", low=-1e6, high=1e6)),
    Setting("scan", "vote_overlap", 0.3, "box voting: windows overlapping the best by this IoU vote",
            rule=Rule("number", low=0.0, high=1.0, open_low=True)),
    Setting("scan", "vote_temperature", 0.02, "box voting: the softness of the score weights (0: no voting)",
            rule=Rule("number", low=0.0, high=1e6)),
    Setting("scan", "found_threshold", None, "per scan method, the best box's score from which a hand is found",
            rule=Rule("by_method", nullable=True)),
    Setting("scan", "detector", None, "the HOG hand detector (HOG and crop-network models)",
            rule=Rule("object", nullable=True)),
    Setting("scan", "candidates", _CANDIDATES, "windows per frame a crop network reads",
            rule=Rule("int", low=1, high=1_000_000)),
    Setting("scan", "finder", None, "the crop network's HOG finder settings",
            rule=Rule("object", nullable=True, fields=(("hog", Rule("object")),))),
    # saved in metadata["detection"]["reading"]: the reader's and the GUI's
    Setting("reading", "temperature", 0.05, "softmax temperature of the responses",
            rule=Rule("number", low=0.0, high=1e6, open_low=True)),
    Setting("reading", "history", 1, "frames integrated along the hand's track", rule=Rule("int", low=1, high=100_000)),
    Setting("reading", "crops", 1, "re-crops of the voted box per frame (0: read the scan's own windows that voted "
            "for the box, no network run)", rule=Rule("int", low=0, high=64)),
    Setting("reading", "unsure_below", 0.5, "confidence below which a reading is shown as a guess",
            rule=Rule("number", low=0.0, high=1.0)),
    Setting("reading", "no_hand_margin", 0.0, "the Run panel's capture box reads 'no hand' only when the background "
            "class's score beats the best hand class's by this much", rule=Rule("number", low=-1e6, high=1e6)),
    Setting("reading", "capture_context", None, "the Run panel's capture box: the border around it (a fraction of its "
            "side) a window network reads it with (null: the network's window context)",
            rule=Rule("number", low=0.0, high=2.0, nullable=True)),
    Setting("reading", "capture_temperature", None, "the Run panel's capture box: softmax temperature of its reading "
            "(null: temperature)", rule=Rule("number", low=0.0, high=1e6, open_low=True, nullable=True)),
    Setting("reading", "capture_unsure_below", None, "the Run panel's capture box: confidence below which a reading "
            "is shown as a guess (null: unsure_below)", rule=Rule("number", low=0.0, high=1.0, nullable=True)),
)
GROUPS = ("build", "choice", "scan", "reading")


def _of(group: str) -> list[Setting]:
    if group not in GROUPS:
        raise ValueError(f"hand settings: no group {group!r} ({', '.join(GROUPS)})")
    return [s for s in SETTINGS if s.group == group]


def options(group: str) -> dict[str, tuple[Any, str]]:
    """``{name: (default, help)}`` of a group (what a command line lists as ``--set`` options)."""
    return {s.name: (s.default, s.help) for s in _of(group)}


def defaults(group: str) -> dict[str, Any]:
    """``{name: default}`` of a group."""
    return {s.name: s.default for s in _of(group)}


def quick(group: str) -> dict[str, Any]:
    """``{name: value}`` of a group's settings whose ``--quick`` build value differs from the default."""
    return {s.name: s.quick for s in _of(group) if s.quick is not _NOT_QUICK}


#: ``metadata["detection"]``'s keys and what each may hold (the saved groups of :data:`SETTINGS`)
DETECTION_KEYS: dict[str, Rule] = {
    **{s.name: s.rule for s in _of("scan")},
    "reading": Rule("object", nullable=True, fields=tuple((s.name, s.rule) for s in _of("reading"))),
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


__all__ = ["DETECTION_KEYS", "GROUPS", "SETTINGS", "Rule", "Setting", "check_detection", "defaults", "model_detection",
           "options", "quick"]
