"""The checks an exported ``predict.py`` runs on its ``model.json`` and arrays before using them, as the
app's loader checks a saved model (:meth:`classmap_gui.core.recogniser.Recogniser.load`): class names,
image size, every float array finite, each component's settings by the app's rules
(:data:`SETTINGS_RULES`, written into predict.py at export from the registry's schemas) and its
arrays' shapes against the class count. predict.py inlines this module (numpy only).

One check function per component ``type`` (:data:`COMPONENT_CHECKS`), called with ``(spec, arrays,
prefix, n_classes)``: a feature map's is its own (named by its class's ``exports``, beside the numpy code
predict.py runs for it), the banks' and ClassMap's are here. Every refusal is a
:class:`~classmap_gui.core.guards.read_limits.SettingError` naming the value.
"""
from __future__ import annotations

import numpy as np

from ..plain_text import breaks_line
from ..guards.read_limits import MAX_IMAGE_SIDE, SettingError, all_finite, check_settings, checked_array

#: filled in predict.py at export (:func:`classmap_gui.core.export.predictor.settings_rules`)
SETTINGS_RULES: dict = {}
#: ``{spec type: the settings its export writes}``, filled in predict.py at export from each exporting class's
#: ``exports`` (:func:`classmap_gui.core.export.predictor.spec_tables`)
SPEC_KEYS: dict = {}


def _settings(spec, kind: str, where: str) -> dict:
    if not isinstance(spec, dict) or not isinstance(spec.get("type"), str):
        raise SettingError(f"{where} must describe a component (an object with a type)")
    if spec["type"] not in COMPONENT_CHECKS[kind]:
        raise SettingError(f"{where} type {spec['type'][:40]!r} is not one this predict.py knows")
    missing = [key for key in SPEC_KEYS.get(spec["type"], ()) if key not in spec]
    if missing:
        raise SettingError(f"{where} ({spec['type']}) lacks {', '.join(missing)}")
    check_settings(spec, SETTINGS_RULES.get(spec["type"], {}), f"{where} ({spec['type']})")
    return spec


def _linear(spec: dict, arrays: dict, prefix: str, n_classes: int) -> None:
    checked_array(arrays, f"{prefix}.coef", (n_classes, None))
    checked_array(arrays, f"{prefix}.intercept", (n_classes,))


def _rbf(spec: dict, arrays: dict, prefix: str, n_classes: int) -> None:
    gamma = spec.get("gamma")
    if not isinstance(gamma, float) or not 0 < gamma < 1e15:
        raise SettingError(f"{prefix}.gamma must be a positive number")
    support = checked_array(arrays, f"{prefix}.support_vectors", (None, None))
    checked_array(arrays, f"{prefix}.dual_coef", (n_classes, len(support)))
    checked_array(arrays, f"{prefix}.intercept", (n_classes,))


def _all_pairs(spec: dict, arrays: dict, prefix: str, n_classes: int) -> None:
    if spec.get("n_classes") != n_classes:
        raise SettingError(f"{prefix}.n_classes must be the {n_classes} classes the model names")
    m = n_classes * (n_classes - 1) // 2
    pairs = checked_array(arrays, f"{prefix}.pairs", (m, 2), "iu")
    if pairs.size and (pairs.min() < 0 or pairs.max() >= n_classes):
        raise SettingError(f"{prefix}.pairs names classes outside 0..{n_classes - 1}")
    checked_array(arrays, f"{prefix}.coef", (m, None))
    checked_array(arrays, f"{prefix}.intercept", (m,))


def _compressive(spec: dict, arrays: dict, prefix: str, n_classes: int) -> None:
    checked_array(arrays, f"{prefix}.sketches", (n_classes, None))
    if np.any(checked_array(arrays, f"{prefix}.priors", (n_classes,)) < 0):
        raise SettingError(f"{prefix}.priors holds negative values")
    checked_array(arrays, f"{prefix}.empty", (n_classes,), "b")
    if spec.get("map") is not None:
        if not isinstance(spec["map"], dict) or spec["map"].get("type") != "rff":
            raise SettingError(f"{prefix}.map must be null or random Fourier features")
        check_component(spec["map"], "features", arrays, f"{prefix}.map", n_classes)


def _classmap(spec: dict, arrays: dict, prefix: str, n_classes: int) -> None:
    if spec["p"] > n_classes:
        raise SettingError(f"classmap.p is {spec['p']}, more than the {n_classes} classes")
    classes = checked_array(arrays, "classmap.classes", (n_classes,), "iu")
    if not np.array_equal(np.sort(classes), np.arange(n_classes)):
        raise SettingError(f"classmap.classes must hold each class 0..{n_classes - 1} once")
    E = checked_array(arrays, "classmap.embeddings", (n_classes, None))
    if np.any(checked_array(arrays, "classmap.alpha", (E.shape[1],)) < 0):
        raise SettingError("classmap.alpha holds negative values")
    refs = checked_array(arrays, "classmap.reference", (E.shape[1],), "iu")
    rows = len(arrays["classifier.coef"]) if "classifier.coef" in arrays else 0
    if "classmap.reference_coef" in arrays:
        checked_array(arrays, "classmap.reference_coef", (E.shape[1], None))
        checked_array(arrays, "classmap.reference_intercept", (E.shape[1],))
    elif refs.size and (refs.min() < 0 or refs.max() >= rows):
        raise SettingError(f"classmap.reference names classifiers outside 0..{rows - 1}")


#: ``{kind: {spec type: check(spec, arrays, prefix, n_classes)}}``; the feature maps' are filled in predict.py at
#: export from each feature map's ``exports`` (:func:`classmap_gui.core.export.predictor.feature_code`)
COMPONENT_CHECKS = {
    "features": {},
    "classifier": {"linear-ova": _linear, "rbf-ova": _rbf, "all-pairs": _all_pairs, "compressive": _compressive},
    "classmap": {"classmap": _classmap},
}


def check_component(spec, kind: str, arrays: dict, prefix: str, n_classes: int) -> None:
    """One component: its settings by the app's rules, then its own check of its arrays; a check may give
    the feature maps the component holds (``(spec, prefix)`` pairs, e.g. a composite's parts), each checked
    the same way in turn."""
    spec = _settings(spec, kind, prefix)
    for part, where in COMPONENT_CHECKS[kind][spec["type"]](spec, arrays, prefix, n_classes) or ():
        check_component(part, "features", arrays, where, n_classes)  # the feature maps it holds, in turn


def check_export(doc: dict, arrays: dict) -> None:
    """The whole model as the app's loader checks one; SettingError naming the first value refused."""
    names = doc.get("class_names")
    if not isinstance(names, list) or len(names) < 2 or not all(isinstance(n, str) and n.strip() for n in names):
        raise SettingError("class_names must be a list of at least 2 names")
    if any(breaks_line(n) for n in names) or len(set(names)) != len(names):
        raise SettingError("class_names must differ from each other and hold no control characters")
    size = doc.get("image_size")
    if not (isinstance(size, list) and len(size) == 2 and all(
            isinstance(s, int) and not isinstance(s, bool) and 1 <= s <= MAX_IMAGE_SIDE for s in size)):
        raise SettingError(f"image_size must be two whole numbers from 1 to {MAX_IMAGE_SIDE}, got {str(size)[:40]}")
    if not isinstance(doc.get("grey"), bool):
        raise SettingError("grey must be true or false")
    bad = next((key for key, arr in arrays.items() if not all_finite(arr)), None)
    if bad is not None:
        raise SettingError(f"arrays.npz: {bad} holds NaN, infinite or absurdly large values")
    check_component(doc.get("features"), "features", arrays, "features", len(names))
    check_component(doc.get("classifier"), "classifier", arrays, "classifier", len(names))
    if doc.get("classmap") is not None:
        if not isinstance(doc["classmap"], dict):
            raise SettingError("classmap must be null or an object of settings")
        if doc["classifier"]["type"] not in ("linear-ova", "all-pairs"):
            raise SettingError("classmap needs a linear one-vs-all or all-pairs classifier")
        spec = dict(doc["classmap"], type="classmap")
        check_component(spec, "classmap", arrays, "classmap", len(names))


def check_parts_fit(doc: dict, arrays: dict, predict, errors: tuple = ()) -> None:
    """The components fit together, as the app's loader checks on one blank image: ``predict([blank],
    doc, arrays, 1)`` runs and names one of the classes; SettingError saying what broke otherwise
    (``errors``: the image library's own exception types, also caught)."""
    blank = np.zeros(doc["image_size"] if doc["grey"] else [*doc["image_size"], 3], np.uint8)
    try:
        with np.errstate(all="ignore"):
            cls = np.asarray(predict([blank], doc, arrays, 1)[0])
        if cls.shape != (1, 1) or not 0 <= cls[0, 0] < len(doc["class_names"]):
            raise IndexError("the result is not one of the class names")
    except (KeyError, TypeError, ValueError, IndexError, AttributeError, ArithmeticError, MemoryError, *errors) as exc:
        raise SettingError(f"its parts do not fit together ({type(exc).__name__}: "
                           f"{' '.join(str(exc).split())[:160]})") from None
