"""The checks an exported ``predict.py`` runs on its ``model.json`` and arrays before using them, as the
app's loader checks a saved model (:meth:`classmap_gui.core.recogniser.Recogniser.load`): class names,
image size, every float array finite, each component's settings by the app's rules
(:data:`SETTINGS_RULES`, written into predict.py at export from the registry's schemas) and its
arrays' shapes against the class count. predict.py inlines this module (numpy only).

One check function per component ``type`` (:data:`COMPONENT_CHECKS`), called with ``(spec, arrays,
prefix, n_classes)``: a component that exports adds its function here. Every refusal is a
:class:`~classmap_gui.core.guards.read_limits.SettingError` naming the value.
"""
from __future__ import annotations

import numpy as np

from ..features.network_check import check_network
from ..plain_text import breaks_line
from ..guards.read_limits import MAX_IMAGE_SIDE, MAX_NETWORK_BYTES, SettingError, all_finite, check_settings

#: filled in predict.py at export (:func:`classmap_gui.core.export.folder.settings_rules`)
SETTINGS_RULES: dict = {}
#: ``{spec type: the settings its export writes}``, filled in predict.py at export from each exporting class's
#: ``exports`` (:func:`classmap_gui.core.export.folder.spec_tables`)
SPEC_KEYS: dict = {}


def _array(arrays: dict, key: str, shape: tuple, kinds: str = "f") -> np.ndarray:
    """``arrays[key]`` when present with ``len(shape)`` dimensions of the sizes ``shape`` gives (None:
    any) and a dtype of ``kinds``; SettingError otherwise."""
    arr = arrays.get(key)
    if arr is None:
        raise SettingError(f"arrays.npz has no {key}")
    if arr.dtype.kind not in kinds or arr.ndim != len(shape) or any(
            want is not None and got != want for got, want in zip(arr.shape, shape)):
        want = "x".join("any" if s is None else str(s) for s in shape) or "a scalar"
        raise SettingError(f"{key} is {arr.dtype.name} of shape {list(arr.shape)}, the model needs {want} "
                           f"({'float' if kinds == 'f' else 'integer' if kinds == 'iu' else 'bool'})")
    return arr


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


def _pixels(spec: dict, arrays: dict, prefix: str, n_classes: int) -> None:
    size = spec.get("size")
    if size is not None and not (isinstance(size, list) and len(size) == 2 and all(
            isinstance(s, int) and not isinstance(s, bool) and 1 <= s <= MAX_IMAGE_SIDE for s in size)):
        raise SettingError(f"{prefix}.size must be null or two whole numbers from 1 to {MAX_IMAGE_SIDE}")
    if spec.get("standardize"):
        mean = _array(arrays, f"{prefix}.mean", (None,))
        if np.any(_array(arrays, f"{prefix}.scale", (len(mean),)) <= 0):
            raise SettingError(f"{prefix}.scale holds values at or below 0")


def _hog(spec: dict, arrays: dict, prefix: str, n_classes: int) -> None:
    if spec.get("backend") not in ("opencv", "numpy"):
        raise SettingError(f"{prefix}.backend must be opencv or numpy")


def _kmeans(spec: dict, arrays: dict, prefix: str, n_classes: int) -> None:
    if spec.get("n_channels") not in (1, 3):
        raise SettingError(f"{prefix}.n_channels must be 1 or 3")
    dim = spec["patch_size"] ** 2 * spec["n_channels"]
    _array(arrays, f"{prefix}.mean", (dim,))
    _array(arrays, f"{prefix}.whitening", (dim, dim))
    _array(arrays, f"{prefix}.centroids", (None, dim))


def _rff(spec: dict, arrays: dict, prefix: str, n_classes: int) -> None:
    _array(arrays, f"{prefix}.frequencies", (None, spec["m"]))
    if spec["kind"] == "phase":
        _array(arrays, f"{prefix}.offsets", (spec["m"],))


def _network(spec: dict, arrays: dict, prefix: str, n_classes: int) -> None:
    onnx = _array(arrays, f"{prefix}.onnx", (None,), "u")
    if onnx.dtype != np.uint8 or not 0 < onnx.size <= MAX_NETWORK_BYTES:
        raise SettingError(f"{prefix}.onnx must be the network file's 1 to {MAX_NETWORK_BYTES} bytes")
    size, width = spec.get("input_size"), spec.get("n_features")
    if not (isinstance(size, list) and len(size) == 2 and all(
            isinstance(s, int) and not isinstance(s, bool) and 1 <= s <= MAX_IMAGE_SIDE for s in size)):
        raise SettingError(f"{prefix}.input_size must be two whole numbers from 1 to {MAX_IMAGE_SIDE}")
    if not (isinstance(width, int) and not isinstance(width, bool) and 1 <= width <= 1_000_000):
        raise SettingError(f"{prefix}.n_features must be a whole number from 1 to 1000000")
    kind = spec.get("kind", "crop")
    if kind not in ("crop", "window"):
        raise SettingError(f"{prefix}.kind must be crop or window")
    sha = spec.get("sha256")
    if not (isinstance(sha, str) and len(sha) == 64 and all(c in "0123456789abcdef" for c in sha)):
        raise SettingError(f"{prefix}.sha256 must be the network file's SHA-256 (64 hex digits)")
    try:  # the allow-list, before OpenCV sees the bytes (the app's own check, inlined)
        info = check_network(onnx.tobytes(), sha, kind="dense" if kind == "window" else "crop")
    except SettingError as exc:
        raise SettingError(f"{prefix}.onnx: {exc}; refused, nothing was run") from None
    if (kind == "crop" and list(info["input_hw"]) != size) or info["width"] != width:
        raise SettingError(f"{prefix}.onnx reads {info['input_hw'] or 'any'} images into {info['width']} features, "
                           f"model.json says {size} and {width}")


def _cnn(spec: dict, arrays: dict, prefix: str, n_classes: int) -> None:
    for level in range(spec["depth"]):
        _array(arrays, f"{prefix}.filters.{level}", (None, None))
    _array(arrays, f"{prefix}.final_weights", (None, None))


def _concat(spec: dict, arrays: dict, prefix: str, n_classes: int) -> None:
    parts = spec.get("parts")
    if not isinstance(parts, list) or not parts or len(parts) > 16:
        raise SettingError(f"{prefix}.parts must list 1 to 16 feature maps")
    for i, part in enumerate(parts):
        if isinstance(part, dict) and part.get("type") == "concat":  # the app's composites are one level deep
            raise SettingError(f"{prefix}.{i} is a composite inside a composite")
        check_component(part, "features", arrays, f"{prefix}.{i}", n_classes)


def _linear(spec: dict, arrays: dict, prefix: str, n_classes: int) -> None:
    _array(arrays, f"{prefix}.coef", (n_classes, None))
    _array(arrays, f"{prefix}.intercept", (n_classes,))


def _rbf(spec: dict, arrays: dict, prefix: str, n_classes: int) -> None:
    gamma = spec.get("gamma")
    if not isinstance(gamma, float) or not 0 < gamma < 1e15:
        raise SettingError(f"{prefix}.gamma must be a positive number")
    support = _array(arrays, f"{prefix}.support_vectors", (None, None))
    _array(arrays, f"{prefix}.dual_coef", (n_classes, len(support)))
    _array(arrays, f"{prefix}.intercept", (n_classes,))


def _all_pairs(spec: dict, arrays: dict, prefix: str, n_classes: int) -> None:
    if spec.get("n_classes") != n_classes:
        raise SettingError(f"{prefix}.n_classes must be the {n_classes} classes the model names")
    m = n_classes * (n_classes - 1) // 2
    pairs = _array(arrays, f"{prefix}.pairs", (m, 2), "iu")
    if pairs.size and (pairs.min() < 0 or pairs.max() >= n_classes):
        raise SettingError(f"{prefix}.pairs names classes outside 0..{n_classes - 1}")
    _array(arrays, f"{prefix}.coef", (m, None))
    _array(arrays, f"{prefix}.intercept", (m,))


def _compressive(spec: dict, arrays: dict, prefix: str, n_classes: int) -> None:
    _array(arrays, f"{prefix}.sketches", (n_classes, None))
    if np.any(_array(arrays, f"{prefix}.priors", (n_classes,)) < 0):
        raise SettingError(f"{prefix}.priors holds negative values")
    _array(arrays, f"{prefix}.empty", (n_classes,), "b")
    if spec.get("map") is not None:
        if not isinstance(spec["map"], dict) or spec["map"].get("type") != "rff":
            raise SettingError(f"{prefix}.map must be null or random Fourier features")
        check_component(spec["map"], "features", arrays, f"{prefix}.map", n_classes)


def _classmap(spec: dict, arrays: dict, prefix: str, n_classes: int) -> None:
    if spec["p"] > n_classes:
        raise SettingError(f"classmap.p is {spec['p']}, more than the {n_classes} classes")
    classes = _array(arrays, "classmap.classes", (n_classes,), "iu")
    if not np.array_equal(np.sort(classes), np.arange(n_classes)):
        raise SettingError(f"classmap.classes must hold each class 0..{n_classes - 1} once")
    E = _array(arrays, "classmap.embeddings", (n_classes, None))
    if np.any(_array(arrays, "classmap.alpha", (E.shape[1],)) < 0):
        raise SettingError("classmap.alpha holds negative values")
    refs = _array(arrays, "classmap.reference", (E.shape[1],), "iu")
    rows = len(arrays["classifier.coef"]) if "classifier.coef" in arrays else 0
    if "classmap.reference_coef" in arrays:
        _array(arrays, "classmap.reference_coef", (E.shape[1], None))
        _array(arrays, "classmap.reference_intercept", (E.shape[1],))
    elif refs.size and (refs.min() < 0 or refs.max() >= rows):
        raise SettingError(f"classmap.reference names classifiers outside 0..{rows - 1}")


#: ``{kind: {spec type: check(spec, arrays, prefix, n_classes)}}``
COMPONENT_CHECKS = {
    "features": {"pixels": _pixels, "hog": _hog, "kmeans": _kmeans, "rff": _rff, "cnn": _cnn, "network": _network,
                 "concat": _concat},
    "classifier": {"linear-ova": _linear, "rbf-ova": _rbf, "all-pairs": _all_pairs, "compressive": _compressive},
    "classmap": {"classmap": _classmap},
}


def check_component(spec, kind: str, arrays: dict, prefix: str, n_classes: int) -> None:
    """One component: its settings by the app's rules, then its own check of its arrays."""
    spec = _settings(spec, kind, prefix)
    COMPONENT_CHECKS[kind][spec["type"]](spec, arrays, prefix, n_classes)


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
