"""Export a trained recogniser as a folder anyone can run with numpy and OpenCV alone.

The folder holds ``model.json`` (class names, image size and colour, feature-map and classifier
settings, array manifest), ``arrays.npz`` (float32 arrays; read with ``allow_pickle=False``),
``labels.txt``, ``predict.py``, ``requirements.txt`` (:data:`REQUIREMENTS`: numpy and OpenCV 4 or 5) and
``README.txt``. ``predict.py`` is :mod:`.predict_template`
with the package's own numpy-only modules pasted in where the template names them (:data:`INLINED`:
the guards, the checks, ClassMap's filter and refine) and, at its ``# @feature-maps`` line, each exporting
feature map's module (HOG, the random CNN's forward pass, the k-means patch and pooling steps, ...), so
the exported predictor runs the app's code and cannot drift from it; it gives the app's top-p classes on
the same files (tested on 100 images against :meth:`Recogniser.predict`).

Each feature map and bank says what predict.py needs through its ``export_spec(arrays, prefix)``
(settings; arrays under ``prefix``) and its class's ``exports`` (:func:`_exported`: the settings the spec
writes; a feature map's numpy code and check, which predict.py inlines and lists in its tables),
so a component exports from its own module plus its registry entry: pixels, HOG, k-means,
random Fourier and random CNN feature maps and composites of them side by side (``"concat"``);
one-vs-all (linear or rbf), all-pairs (voting) and compressive (class sketch) banks. What cannot be
reproduced that way is refused with a :class:`ConfigError` naming the part: a component without
``export_spec``, ClassMap over a kernel bank, and
ClassMap at sizes where the app filters with an approximate index. ClassMap over linear banks
is exported: predict.py runs the same embedding, weighted-L1 filter and refine in numpy.
"""
from __future__ import annotations

import ast
import importlib.util
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from .. import registry
from ..errors import ConfigError
from ..store import type_names
from ..store.format import fsync_dir, array_manifest

#: what predict.py needs, as pip reads it (requirements.txt): the app's own lower bounds (pyproject.toml), OpenCV 4
#: and 5 both (5 has no HOGDescriptor: HOG runs on the app's numpy code, core.features.hog_ops); tested on 4.14, 5.1
REQUIREMENTS = ("numpy>=1.26,<3", "opencv-python-headless>=4.8,<6")
EXPORT_FORMAT = "classmap-export"
EXPORT_VERSION = 1
TEMPLATE = Path(__file__).with_name("predict_template.py")
#: modules of the package that predict.py runs verbatim, in this order (the template's ``# @inline`` lines); each
#: may import only numpy, OpenCV, the standard library modules of _STANDALONE_IMPORTS and modules pasted before it.
#: The feature maps' modules are not listed: each exporting class names its own (:func:`feature_code`)
INLINED = ("classmap_gui.core.guards.regular_files", "classmap_gui.core.guards.read_limits", "classmap_gui.core.guards.opencv_log",
           "classmap_gui.core.features.network_check",
           "classmap_gui.core.plain_text", "classmap_gui.core.store.bounded_zip",
           "classmap_gui.core.data.image_header", "classmap_gui.core.data.image_decode",
           "classmap_gui.core.export.checks", "classmap_gui.core.image_ops",
           "classmap_gui.core.classify.classmap.ops", "classmap_gui.core.classify.banks.ranking_ops")
_INLINE_MARK = "# @inline "
_RULES_MARK = "# @settings-rules"
_FEATURES_MARK = "# @feature-maps"
_STANDALONE_IMPORTS = {"__future__", "numpy", "cv2", "contextlib", "hashlib", "math", "os", "pathlib", "stat", "struct", "threading",
                       "unicodedata", "zipfile", "zlib"}
#: the settings of ClassMap's spec (:func:`_classmap_spec`; ClassMap is exported here, not by itself)
CLASSMAP_KEYS = ("p", "refine", "threshold")


def _exported(kinds: tuple[str, ...] = ("features", "bank")):
    """``(component, spec type, declaration)`` for every ``exports`` entry of the registry's classes, in order.

    A declaration is ``{"keys": the settings export_spec writes}``, and for a feature map also ``"features"``
    (``(images, spec, arrays, prefix) -> (n, D) float32``) and ``"check"`` (``(spec, arrays, prefix,
    n_classes)``, SettingError naming a value; it may give the feature maps the spec holds), module-level
    functions of one numpy-only module that predict.py inlines. RuntimeError naming the class otherwise."""
    for kind in kinds:
        for comp in registry.components(kind):
            for spec_type, declared in getattr(comp.cls, "exports", {}).items():
                code = [declared.get(k) for k in ("features", "check")] if isinstance(declared, dict) else []
                if not isinstance(declared, dict) or not isinstance(declared.get("keys"), tuple) \
                        or set(declared) - {"keys", "features", "check"} or (kind == "features") != all(code) \
                        or len({getattr(f, "__module__", None) for f in code if f is not None}) > 1:
                    raise RuntimeError(f"{comp.cls.__name__}.exports[{spec_type!r}] must be {{'keys': (...)}}, a feature "
                                       f"map's with its 'features' and 'check' functions from one module")
                yield comp, spec_type, declared


def spec_tables() -> tuple[dict[str, str], dict[str, tuple[str, ...]]]:
    """``({spec type: saved type whose schema rules its settings}, {spec type: the settings it writes})``,
    from the registry: every feature map and bank whose class exports declares ``exports = {spec type:
    {"keys": ..., ...}}`` beside its ``export_spec``; the first component of a type gives the schema (the
    app's loader checks the settings by it). ClassMap's spec is this module's own."""
    schemas, keys = {"classmap": "classmap"}, {"classmap": CLASSMAP_KEYS}
    for comp, spec_type, declared in _exported():
        schemas.setdefault(spec_type, comp.name)
        keys.setdefault(spec_type, declared["keys"])
    return schemas, keys


def feature_code() -> dict[str, tuple]:
    """``{spec type: (features function, check function)}`` of every exporting feature map (the first class
    declaring a type gives it): predict.py inlines each one's module and names them in its tables."""
    out: dict[str, tuple] = {}
    for _, spec_type, declared in _exported(("features",)):
        out.setdefault(spec_type, (declared["features"], declared["check"]))
    return out


def _feature_maps(pasted: list[str]) -> str:
    """The feature maps' modules (each after the package modules it imports, where not pasted yet), then
    predict.py's tables naming their functions."""
    code = feature_code()
    out: list[str] = []

    def paste(module: str, chain: tuple[str, ...]) -> None:
        if module in pasted:
            return
        if module in INLINED or module in chain:
            raise RuntimeError(f"{chain[-1] if chain else 'a feature map'} needs {module}, which predict.py "
                               f"has not pasted before the feature maps")
        for dep in _package_imports(module):
            paste(dep, (*chain, module))
        out.append(_module_body(module, pasted, inline_ok=True))
        pasted.append(module)

    for features, _ in code.values():
        paste(features.__module__, ())
    features = ", ".join(f"{t!r}: {f.__name__}" for t, (f, _) in code.items())
    checks = ", ".join(f"{t!r}: {c.__name__}" for t, (_, c) in code.items())
    out.append(f"#: each exporting feature map's code and check, named by its class's ``exports`` (at export)\n"
               f"FEATURES = {{{features}}}\n"
               f"COMPONENT_CHECKS[\"features\"] = {{{checks}}}\n")
    return "\n\n".join(out)


def _package_imports(module: str) -> list[str]:
    """The package modules ``module`` imports relatively (those predict.py must paste before it)."""
    tree = ast.parse(Path(importlib.util.find_spec(module).origin).read_text(encoding="utf-8"))
    package = module.split(".")
    return [".".join(package[:-node.level] + ([node.module] if node.module else []))
            for node in tree.body if isinstance(node, ast.ImportFrom) and node.level]


def predict_source() -> str:
    """The text of ``predict.py``: the template with every ``# @inline <module>`` line replaced by
    that module's code (its docstring and imports dropped: the template imports numpy and cv2), and its
    ``# @feature-maps`` line by the feature maps' modules and tables (:func:`feature_code`).

    Raises RuntimeError when a marked module is not in :data:`INLINED` or imports anything beyond
    numpy and OpenCV — predict.py must run without this package.
    """
    out, pasted = [], []
    for line in TEMPLATE.read_text(encoding="utf-8").splitlines(keepends=True):
        if line.startswith(_INLINE_MARK):
            module = line[len(_INLINE_MARK):].strip()
            out.append(_module_body(module, pasted))
            pasted.append(module)
        elif line.startswith(_FEATURES_MARK):
            out.append(_feature_maps(pasted))
        elif line.startswith(_RULES_MARK):
            out.append(f"#: the app's rules for each component's settings (from its registry schemas, at export)\n"
                       f"SETTINGS_RULES = {settings_rules()!r}\n"
                       f"#: the settings each component's export writes (its class's ``exports``, at export)\n"
                       f"SPEC_KEYS = {spec_tables()[1]!r}\n")
        else:
            out.append(line)
    return "".join(out)


def settings_rules() -> dict[str, dict[str, dict]]:
    """``{spec type: {setting: rule}}``: for every saved component type, its parameters' schema as the
    app's loader checks them (:func:`~classmap_gui.core.store.saved_values.saved_schema`), as plain data
    for :func:`~classmap_gui.core.guards.read_limits.check_setting` (worker counts and image sizes left out:
    predict.py has no workers, and a size is checked as an image size)."""
    from ..store.saved_values import saved_schema

    out: dict[str, dict[str, dict]] = {}
    for spec_type, saved in spec_tables()[0].items():
        cls = type_names.saved_type(saved)
        if cls is None:
            raise RuntimeError(f"export spec {spec_type!r} is ruled by {saved!r}, which is not a saved type")
        rules = {}
        for name, param in saved_schema(cls).items():
            if param.per_core or param.image_size:
                continue
            rules[name] = {"kind": param.kind.__name__, "low": param.low, "high": param.high,
                           "choices": list(param.choices or ()) + (["auto"] if param.auto else []),
                           "nullable": bool(param.nullable or param.default is None)}
        out[spec_type] = rules
    return out


def inlined_modules() -> list[str]:
    """Every package module predict.py holds: :data:`INLINED` and the feature maps' (with what they import)."""
    pasted = list(INLINED)
    _feature_maps(pasted)
    return pasted


def _module_body(module: str, pasted: list[str], inline_ok: bool = False) -> str:
    if module not in INLINED and not inline_ok:
        raise RuntimeError(f"export template inlines {module}, which is not listed in export.INLINED")
    spec = importlib.util.find_spec(module)
    path = Path(spec.origin)
    text = path.read_text(encoding="utf-8")
    tree = ast.parse(text)
    lines = text.splitlines(keepends=True)
    drop: set[int] = set()
    for i, node in enumerate(tree.body):
        is_doc = i == 0 and isinstance(node, ast.Expr) and isinstance(getattr(node, "value", None), ast.Constant)
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            if node.__class__ is ast.ImportFrom and node.level:  # another inlined module, pasted before this one
                package = module.split(".")[:-node.level]
                names = [".".join(package + ([node.module] if node.module else []))]
                bad = [n for n in names if n not in pasted]
            else:
                bad = [n for n in names if n.split(".")[0] not in _STANDALONE_IMPORTS]
            if bad:
                raise RuntimeError(f"{module} imports {', '.join(bad)}: predict.py may only use numpy, OpenCV and "
                                   f"the modules inlined before it")
        elif not is_doc:
            continue
        drop.update(range(node.lineno - 1, node.end_lineno))
    for node in ast.walk(tree):  # imports inside functions would escape the check above
        if isinstance(node, (ast.Import, ast.ImportFrom)) and node not in tree.body:
            raise RuntimeError(f"{module} imports inside a function: predict.py may only use numpy and OpenCV")
    body = "".join(line for i, line in enumerate(lines) if i not in drop).strip("\n")
    rel = "/".join(module.split("."))
    return f"# ---- {rel}.py, the app's own code (inlined at export; do not edit here)\n{body}\n# ---- end of {rel}.py\n"


def label_line(index: int, name: str) -> str:
    """One ``labels.txt`` line: ``index<TAB>name``. Class names cannot hold tabs, newlines or other
    control characters (:class:`~classmap_gui.core.data.imageset.ImageSet` and model loading refuse
    them), so every name stays on its line as written."""
    return f"{index}\t{name}\n"


def _component_spec(obj: Any, arrays: dict[str, np.ndarray], prefix: str, what: str) -> dict:
    """``obj.export_spec(arrays, prefix)``: every exportable feature map and bank says itself what predict.py
    needs (so a new component exports by its own module); ConfigError naming it when it cannot."""
    if not hasattr(obj, "export_spec"):
        name = type_names.saved_type_name(type(obj)) or type(obj).__name__
        raise ConfigError(f"cannot export a model with the {name} {what}: the standalone predict.py does not "
                          f"re-implement it. Retrain with an exportable {what} ({', '.join(exportable(what))}).")
    return obj.export_spec(arrays, prefix)


def exportable(what: str) -> list[str]:
    """Names of the registry's components of kind ``what`` ("feature map" / "classifier bank") that export."""
    kind = {"feature map": "features", "classifier bank": "bank"}[what]
    return [c.name for c in registry.components(kind) if hasattr(c.cls, "export_spec")]


def _classmap_spec(recogniser: Any, arrays: dict[str, np.ndarray]) -> dict | None:
    """ClassMap filter-and-refine (v1 over linear all-pairs, v2/v3 over linear one-vs-all) as arrays +
    settings, or None."""
    cm = getattr(recogniser, "classmap", None)
    if cm is None:
        return None
    from ..classify.classmap.bank_view import bank_kind

    bank = type_names.saved_type_name(type(recogniser.classifier)) or type(recogniser.classifier).__name__
    want = "pairs" if cm.refine_strategy == "all-pairs-vote" else "ova"     # a bank of each trainer is its own type
    if bank_kind(recogniser.classifier) != want or getattr(recogniser.classifier, "coef_", None) is None:
        raise ConfigError(f"cannot export this ClassMap model (refine {cm.refine} over a {bank} bank): predict.py "
                          f"reproduces ClassMap all-pairs-vote (v1) over a linear all-pairs bank and best-response "
                          f"(v2) / first-above-threshold (v3) over a linear one-vs-all bank. Retrain with one of "
                          f"those, or without ClassMap.")
    if cm.current_filter().kind != "exact":
        raise ConfigError(f"cannot export this ClassMap model of {cm.n_classes_} classes: it filters with an "
                          f"approximate index ({cm.current_filter().kind}) that predict.py cannot reproduce exactly "
                          f"(predict.py scans every class). Retrain with ClassMap filter exact to export it.")
    arrays["classmap.reference"] = np.ascontiguousarray(cm.reference_, np.int64)
    arrays["classmap.alpha"] = np.ascontiguousarray(cm.alpha_, np.float32)
    arrays["classmap.embeddings"] = np.ascontiguousarray(cm.class_embeddings_, np.float32)
    arrays["classmap.classes"] = np.ascontiguousarray(cm.classes_, np.int64)
    if getattr(cm, "reference_coef_", None) is not None:   # references from a smoother, separate bank
        arrays["classmap.reference_coef"] = np.ascontiguousarray(cm.reference_coef_, np.float32)
        arrays["classmap.reference_intercept"] = np.ascontiguousarray(cm.reference_intercept_, np.float32)
    threshold = getattr(cm, "threshold_", None)
    return {"p": int(min(int(cm.p), cm.n_classes_)), "refine": cm.refine,
            "threshold": None if threshold is None else float(threshold)}


def export_recogniser(recogniser: Any, folder: str | Path, *, overwrite: bool = False) -> Path:
    """Write the export folder of ``recogniser`` at ``folder``; returns it.

    Raises ConfigError (nothing written) when a component cannot be exported, or when
    ``folder`` exists and is not empty (unless ``overwrite`` and it is an earlier export).
    """
    arrays: dict[str, np.ndarray] = {}
    doc = {
        "format": EXPORT_FORMAT, "version": EXPORT_VERSION,
        "class_names": list(recogniser.class_names),
        "image_size": [int(v) for v in recogniser.image_size], "grey": bool(recogniser.grey),
        "features": _component_spec(recogniser.features, arrays, "features", "feature map"),
        "classifier": _component_spec(recogniser.classifier, arrays, "classifier", "classifier bank"),
        "classmap": _classmap_spec(recogniser, arrays),
    }
    doc["arrays"] = array_manifest(arrays)
    folder = Path(folder).expanduser().absolute()
    if folder.exists():
        if not folder.is_dir():
            raise ConfigError(f"{folder} exists and is a file; choose a folder name for the export")
        earlier = (folder / "model.json").is_file() and (folder / "predict.py").is_file()
        if any(folder.iterdir()) and not (overwrite and earlier):
            raise ConfigError(f"{folder} is not empty; choose a new folder for the export")
    folder.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{folder.name}.export-", dir=str(folder.parent)))
    try:
        # mkdtemp makes the folder private (0700); an export is for sharing: the user's umask decides
        tmp.chmod(0o777 & ~_umask())
        with open(tmp / "arrays.npz", "wb") as fh:
            np.savez(fh, **arrays)
        (tmp / "model.json").write_text(json.dumps(doc, indent=1), encoding="utf-8")
        (tmp / "labels.txt").write_text("".join(label_line(i, n) for i, n in enumerate(doc["class_names"])),
                                        encoding="utf-8", newline="\n")
        (tmp / "predict.py").write_text(predict_source(), encoding="utf-8")
        (tmp / "predict.py").chmod(0o777 & ~_umask())  # executable for whoever may read it
        (tmp / "requirements.txt").write_text(requirements_text(), encoding="utf-8", newline="\n")
        (tmp / "README.txt").write_text(_readme(doc), encoding="utf-8")
        fsync_dir(tmp)
        if folder.exists():
            shutil.rmtree(folder)
        tmp.replace(folder)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return folder


def _umask() -> int:
    """The process's file-creation mask: from /proc where there is one (reading it there changes
    nothing other threads see), else by setting and at once restoring it."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def requirements_text() -> str:
    """``requirements.txt`` of an export: :data:`REQUIREMENTS`, one a line, under a comment saying what for."""
    return ("# what predict.py needs: pip install -r requirements.txt (OpenCV 4 and 5 both work; any\n"
            "# opencv-python* package will do, the headless one has no GUI libraries to pull in)\n"
            + "".join(f"{r}\n" for r in REQUIREMENTS))


def _readme(doc: dict) -> str:
    h, w = doc["image_size"]
    needs = " and ".join(REQUIREMENTS)
    return (f"ClassMap Studio export: {len(doc['class_names'])} classes, {doc['features']['type']} features, "
            f"{'grey' if doc['grey'] else 'colour'} images brought to {w}x{h}.\n\n"
            f"Needs Python 3 (tested with 3.11) with {needs}\n"
            "(OpenCV 4 or 5), listed in requirements.txt. In a fresh virtual environment:\n"
            "    python3 -m venv venv && venv/bin/pip install -r requirements.txt\n\n"
            "Run:\n"
            "    venv/bin/python predict.py image1.png image2.jpg --top 5 [--json]\n"
            "    venv/bin/python predict.py some-folder/       (every image file in it, by name)\n\n"
            "Reads PNG, JPEG, BMP, TIFF and WebP files, as ClassMap Studio does (not GIF: an animated one\n"
            "would be classified by its first frame alone).\n\n"
            "Exit status: 0; 1 when an image could not be read (one line per image on stderr, the others\n"
            "are still classified); 2 when the model or an argument cannot be used (one line on stderr).\n\n"
            "Files: model.json (settings), arrays.npz (numbers, no pickles), labels.txt (class index, a tab,\n"
            "and the name), requirements.txt (what pip installs),\n"
            "predict.py (the predictor; read it: it is short and plain numpy/OpenCV).\n")
