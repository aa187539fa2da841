"""Save and open projects: the one seam between the GUI and the project file format.

The format belongs to core (``classmap_gui.core.store.project``, see docs/CONTRACTS.md).
While that module is absent, a plain folder is written here with core's own pieces:
``project.json`` (class names, settings), ``images/<class-index>/<n>.png`` and the
recogniser saved by ``Recogniser.save`` in ``model/``. No pickles either way.
"""
from __future__ import annotations

import json
import shutil
from dataclasses import dataclass, field
from pathlib import Path

import cv2
import numpy as np

from ..core.data import ImageSet
from ..core.errors import ModelFormatError
from ..core.progress import check_stop, report

FALLBACK_FORMAT = "classmap-studio-gui-project"


@dataclass
class ProjectData:
    imageset: ImageSet
    recogniser: object | None = None
    settings: dict = field(default_factory=dict)


def _core_store():
    try:
        from ..core.store import project as store  # noqa: PLC0415
    except ImportError:
        return None
    return store if hasattr(store, "save_project") and hasattr(store, "load_project") else None


def save(data: ProjectData, path: str | Path, *, progress=None, should_stop=None) -> Path:
    store = _core_store()
    if store is not None:
        proj = store.Project(imageset=data.imageset, recogniser=data.recogniser, settings=data.settings)
        return Path(store.save_project(proj, path, progress=progress, should_stop=should_stop) or path)
    return _save_folder(data, Path(path), progress, should_stop)


def load(path: str | Path, *, progress=None, should_stop=None) -> ProjectData:
    store = _core_store()
    if store is not None and not (Path(path) / "project.json").exists():
        p = store.load_project(path, progress=progress, should_stop=should_stop)
        return ProjectData(p.imageset, p.recogniser, dict(p.settings or {}))
    return _load_folder(Path(path), progress, should_stop)


def _save_folder(data: ProjectData, path: Path, progress, should_stop) -> Path:
    ims = data.imageset
    tmp = path.with_name(path.name + ".saving")
    if tmp.exists():
        shutil.rmtree(tmp)
    (tmp / "images").mkdir(parents=True)
    for i, img in enumerate(ims.images):
        if i % 64 == 0:
            check_stop(should_stop)
            report(progress, 0.8 * i / max(1, len(ims)), "writing images")
        bgr = img if img.ndim == 2 else cv2.cvtColor(img, cv2.COLOR_RGB2BGR)
        d = tmp / "images" / str(int(ims.labels[i]))
        d.mkdir(exist_ok=True)
        ok, buf = cv2.imencode(".png", bgr)
        buf.tofile(str(d / f"{i:07d}.png"))
    if data.recogniser is not None:
        report(progress, 0.85, "writing the recogniser")
        data.recogniser.save(tmp / "model")
    doc = {"format": FALLBACK_FORMAT, "version": 1, "name": ims.name, "class_names": ims.class_names,
           "colour": ims.is_color, "image_size": list(ims.image_size), "n_images": len(ims),
           "settings": data.settings, "has_model": data.recogniser is not None}
    (tmp / "project.json").write_text(json.dumps(doc, indent=1))
    # keep captures that live inside an existing project folder
    if (path / "captures").is_dir():
        shutil.copytree(path / "captures", tmp / "captures")
    old = path.with_name(path.name + ".old")
    if path.exists():
        if old.exists():
            shutil.rmtree(old)
        path.rename(old)
    tmp.rename(path)
    if old.exists():
        shutil.rmtree(old)
    report(progress, 1.0, "saved")
    return path


def _load_folder(path: Path, progress, should_stop) -> ProjectData:
    try:
        doc = json.loads((path / "project.json").read_text())
    except (OSError, ValueError) as exc:
        raise ModelFormatError(f"{path} is not a ClassMap Studio project: {exc}") from exc
    if doc.get("format") != FALLBACK_FORMAT or int(doc.get("version", 99)) > 1:
        raise ModelFormatError(f"{path}: unknown project format or a newer version")
    names = [str(c) for c in doc["class_names"]]
    h, w = (int(v) for v in doc["image_size"])
    colour = bool(doc["colour"])
    files = sorted((path / "images").glob("*/*.png"), key=lambda f: f.name)
    images, labels = [], []
    for k, f in enumerate(files):
        if k % 64 == 0:
            check_stop(should_stop)
            report(progress, 0.8 * k / max(1, len(files)), "reading images")
        img = cv2.imdecode(np.fromfile(str(f), np.uint8), cv2.IMREAD_COLOR if colour else cv2.IMREAD_GRAYSCALE)
        if img is None or img.shape[:2] != (h, w):
            raise ModelFormatError(f"{f}: unreadable or not {w}x{h}")
        images.append(cv2.cvtColor(img, cv2.COLOR_BGR2RGB) if colour else img)
        lab = int(f.parent.name)
        if not 0 <= lab < len(names):
            raise ModelFormatError(f"{f}: class folder {lab} outside the {len(names)} classes")
        labels.append(lab)
    shape = (0, h, w, 3) if colour else (0, h, w)
    ims = ImageSet(np.stack(images) if images else np.zeros(shape, np.uint8), np.asarray(labels, np.int64), names,
                   name=str(doc.get("name", path.stem)))
    rec = None
    if doc.get("has_model"):
        from ..core.recogniser import Recogniser  # noqa: PLC0415
        report(progress, 0.9, "reading the recogniser")
        rec = Recogniser.load(path / "model")
    report(progress, 1.0, "opened")
    return ProjectData(ims, rec, dict(doc.get("settings") or {}))
