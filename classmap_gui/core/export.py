"""Export a trained recogniser as a folder anyone can run with numpy and OpenCV alone.

The folder holds ``model.json`` (class names, image size and colour, feature-map and classifier
settings, array manifest), ``arrays.npz`` (float32 arrays; read with ``allow_pickle=False``),
``labels.txt``, ``predict.py`` (a copy of :mod:`.export_predict_template`) and ``README.txt``.
``predict.py`` re-implements every step in plain numpy/OpenCV and gives the app's top-p classes
on the same files (tested on 100 images against :meth:`Recogniser.predict`).

Exported: pixels, HOG, k-means, random Fourier and random CNN feature maps; one-vs-all (linear
or rbf), all-pairs (voting) and compressive (class sketch) banks. What cannot be reproduced that
way is refused with a :class:`ConfigError` naming the part: ClassMap over a kernel bank, and
ClassMap at sizes where the app filters with an approximate index. ClassMap over linear banks
is exported: predict.py runs the same embedding, weighted-L1 filter and refine in numpy.
"""
from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from .errors import ConfigError
from .store.format import _fsync_dir, array_manifest

EXPORT_FORMAT = "classmap-export"
EXPORT_VERSION = 1
TEMPLATE = Path(__file__).with_name("export_predict_template.py")


def _features_spec(fm: Any, arrays: dict[str, np.ndarray]) -> dict:
    kind = type(fm).__name__
    if kind == "PixelFeatures":
        if fm.standardize:
            arrays["features.mean"] = np.asarray(fm.mean_, np.float32)
            arrays["features.scale"] = np.asarray(fm.scale_, np.float32)
        size = None if fm.size is None else [int(fm.size[0]), int(fm.size[1])]
        return {"type": "pixels", "size": size, "grey": bool(fm.grey), "standardize": bool(fm.standardize)}
    if kind == "HOGFeatures":
        import cv2

        backend = fm.backend
        if backend == "auto":
            backend = "opencv" if hasattr(cv2, "HOGDescriptor") else "numpy"
        return {"type": "hog", "cell_size": int(fm.cell_size), "block_size": int(fm.block_size),
                "block_stride": int(fm.block_stride), "n_bins": int(fm.n_bins), "signed": bool(fm.signed),
                "backend": backend}
    if kind == "KMeansFeatures":
        arrays["features.mean"] = np.asarray(fm.mean_, np.float32)
        arrays["features.whitening"] = np.asarray(fm.whitening_, np.float32)
        arrays["features.centroids"] = np.asarray(fm.centroids_, np.float32)
        return {"type": "kmeans", "patch_size": int(fm.patch_size), "stride": int(fm.stride),
                "norm_eps": float(fm.norm_eps), "encoder": str(fm.encoder), "hellinger": bool(fm.hellinger),
                "n_channels": int(fm.n_channels_)}
    if kind == "RandomFourierFeatures":
        return {"type": "rff", **_rff_spec(fm, arrays, "features")}
    if kind == "RandomCNNFeatures":
        for i, f in enumerate(fm.filters_):
            arrays[f"features.filters.{i}"] = np.asarray(f, np.float32)
        arrays["features.final_weights"] = np.asarray(fm.final_weights_, np.float32)
        arrays["features.final_bias"] = np.asarray(fm.final_bias_, np.float32)
        return {"type": "cnn", "m": int(fm.m), "depth": int(fm.depth), "kernel_size": int(fm.kernel_size),
                "pool": int(fm.pool), "final": str(fm.final), "normalize": bool(fm.normalize)}
    raise ConfigError(f"cannot export a model with the {kind} feature map: the standalone predict.py "
                      f"re-implements pixels, HOG, k-means, random Fourier and random CNN features only. Retrain with one of "
                      f"those to export.")


def _rff_spec(rff: Any, arrays: dict[str, np.ndarray], prefix: str) -> dict:
    arrays[f"{prefix}.frequencies"] = np.asarray(rff.frequencies_, np.float32)
    if rff.kind == "phase":
        arrays[f"{prefix}.offsets"] = np.asarray(rff.offsets_, np.float32)
    return {"kind": str(rff.kind), "m": int(rff.m)}


def _classifier_spec(clf: Any, arrays: dict[str, np.ndarray]) -> dict:
    kind = type(clf).__name__
    coef = getattr(clf, "coef_", None)
    if kind in ("OneVsAllBank", "AllPairsBank") and coef is not None:
        arrays["classifier.coef"] = np.ascontiguousarray(coef, np.float32)
        arrays["classifier.intercept"] = np.ascontiguousarray(clf.intercept_, np.float32)
        if kind == "OneVsAllBank":
            return {"type": "linear-ova"}
        arrays["classifier.pairs"] = np.ascontiguousarray(clf.pairs_, np.int64)
        return {"type": "all-pairs", "n_classes": int(len(clf.classes_))}
    if kind == "OneVsAllBank" and getattr(clf, "support_vectors_", None) is not None:
        arrays["classifier.support_vectors"] = np.ascontiguousarray(clf.support_vectors_, np.float32)
        arrays["classifier.dual_coef"] = np.ascontiguousarray(clf.dual_coef_, np.float32)
        arrays["classifier.intercept"] = np.ascontiguousarray(clf.intercept_, np.float32)
        return {"type": "rbf-ova", "gamma": float(clf.gamma_)}
    if kind == "CompressiveBank":
        from .features.random_features import RandomFourierFeatures

        arrays["classifier.sketches"] = np.ascontiguousarray(clf.sketches_, np.float32)
        arrays["classifier.priors"] = np.ascontiguousarray(clf.class_priors(), np.float32)
        arrays["classifier.empty"] = np.asarray(clf.counts_ == 0, bool)
        sketch_map = getattr(clf, "map_", None)
        if sketch_map is None:
            return {"type": "compressive", "map": None}
        if not isinstance(sketch_map, RandomFourierFeatures):
            raise ConfigError(f"cannot export a compressive bank whose sketch map is {type(sketch_map).__name__}")
        return {"type": "compressive", "map": _rff_spec(sketch_map, arrays, "classifier.map")}
    raise ConfigError(f"cannot export a model with a {kind} classifier bank: the standalone predict.py "
                      f"reproduces one-vs-all (linear or rbf), all-pairs and compressive banks only. Retrain with "
                      f"one of those to export.")


def _classmap_spec(recogniser: Any, arrays: dict[str, np.ndarray]) -> dict | None:
    """ClassMap filter-and-refine (v1 over linear all-pairs, v2/v3 over linear one-vs-all) as arrays +
    settings, or None."""
    cm = getattr(recogniser, "classmap", None)
    if cm is None:
        return None
    from .classify.classmap import FILTER_INDEX_THRESHOLD

    bank = type(recogniser.classifier).__name__
    want = "AllPairsBank" if cm.refine == "v1" else "OneVsAllBank"
    if bank != want or getattr(recogniser.classifier, "coef_", None) is None:
        raise ConfigError(f"cannot export this ClassMap model (refine {cm.refine} over a {bank}): predict.py "
                          f"reproduces ClassMap v1 over a linear all-pairs bank and v2/v3 over a linear one-vs-all "
                          f"bank. Retrain with one of those, or without ClassMap.")
    if getattr(cm, "reference_coef_", None) is not None:
        raise ConfigError("cannot export a ClassMap whose references come from a separate reference bank: "
                          "predict.py reads the references from the bank itself. Retrain without reference_bank.")
    if cm.n_classes_ >= FILTER_INDEX_THRESHOLD:
        raise ConfigError(f"cannot export a ClassMap model of {cm.n_classes_} classes: from "
                          f"{FILTER_INDEX_THRESHOLD} classes on the app filters with an approximate (IVF) index "
                          f"that predict.py cannot reproduce exactly.")
    arrays["classmap.reference"] = np.ascontiguousarray(cm.reference_, np.int64)
    arrays["classmap.alpha"] = np.ascontiguousarray(cm.alpha_, np.float32)
    arrays["classmap.embeddings"] = np.ascontiguousarray(cm.class_embeddings_, np.float32)
    arrays["classmap.classes"] = np.ascontiguousarray(cm.classes_, np.int64)
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
        "features": _features_spec(recogniser.features, arrays),
        "classifier": _classifier_spec(recogniser.classifier, arrays),
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
        with open(tmp / "arrays.npz", "wb") as fh:
            np.savez(fh, **arrays)
        (tmp / "model.json").write_text(json.dumps(doc, indent=1), encoding="utf-8")
        (tmp / "labels.txt").write_text("".join(f"{i}\t{n}\n" for i, n in enumerate(doc["class_names"])),
                                        encoding="utf-8")
        shutil.copyfile(TEMPLATE, tmp / "predict.py")
        (tmp / "predict.py").chmod(0o755)
        (tmp / "README.txt").write_text(_readme(doc), encoding="utf-8")
        _fsync_dir(tmp)
        if folder.exists():
            shutil.rmtree(folder)
        tmp.replace(folder)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return folder


def _readme(doc: dict) -> str:
    h, w = doc["image_size"]
    return (f"ClassMap Studio export: {len(doc['class_names'])} classes, {doc['features']['type']} features, "
            f"{'grey' if doc['grey'] else 'colour'} images brought to {w}x{h}.\n\n"
            "Run (needs Python 3 with numpy and opencv-python):\n"
            "    python predict.py image1.png image2.jpg --top 5 [--json]\n\n"
            "Files: model.json (settings), arrays.npz (numbers, no pickles), labels.txt (class index and name),\n"
            "predict.py (the predictor; read it: it is short and plain numpy/OpenCV).\n")
