"""Export a trained recogniser as a folder anyone can run with numpy and OpenCV alone.

The folder holds ``model.json`` (class names, image size and colour, feature-map and classifier
settings, array manifest), ``arrays.npz`` (float32 arrays; read with ``allow_pickle=False``),
``labels.txt``, ``predict.py``, ``requirements.txt`` (:data:`REQUIREMENTS`: numpy and OpenCV 4 or 5) and
``README.txt``. ``predict.py`` is the package's own numpy code in :mod:`.predict_template`
(:func:`.predictor.predict_source`), so the exported predictor runs the app's code and cannot drift
from it; it gives the app's top-p classes on the same files (tested on 100 images against
:meth:`Recogniser.predict`).

Each feature map and bank says what predict.py needs through its ``export_spec(arrays, prefix)``
(settings; arrays under ``prefix``) and its class's ``exports`` (the settings the spec writes; a feature
map's numpy code and check, which predict.py pastes in and lists in its tables: :mod:`.predictor`),
so a component exports from its own module plus its registry entry: pixels, HOG, k-means,
random Fourier and random CNN feature maps and composites of them side by side (``"concat"``);
one-vs-all (linear or rbf), all-pairs (voting) and compressive (class sketch) banks. What cannot be
reproduced that way is refused with a :class:`ConfigError` naming the part: a component without
``export_spec``, ClassMap over a kernel bank, and
ClassMap at sizes where the app filters with an approximate index. ClassMap over linear banks
is exported: predict.py runs the same embedding, weighted-L1 filter and refine in numpy.
"""
from __future__ import annotations

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
from .predictor import predict_source

#: what predict.py needs, as pip reads it (requirements.txt): the app's own lower bounds (pyproject.toml), OpenCV 4
#: and 5 both (5 has no HOGDescriptor: HOG runs on the app's numpy code, core.features.hog_ops); tested on 4.14, 5.1
REQUIREMENTS = ("numpy>=1.26,<3", "opencv-python-headless>=4.8,<6")
EXPORT_FORMAT = "classmap-export"
EXPORT_VERSION = 1
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
