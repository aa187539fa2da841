"""Project files: the image set, captures, settings and the trained recogniser, kept safely.

A project is a folder, or the same folder zipped into one ``.cmproj`` file::

    project.json                  format name + version, class names, image size, the image
                                  list [file, label, pixel checksum] in order, settings (JSON);
                                  written last
    images/0000-<class>/000000.png  one lossless PNG per image, a sub-folder per class
    captures/...                  webcam captures as they were taken (kept verbatim)
    model/                        the recogniser, saved by ``Recogniser.save`` (JSON + .npz)
    runs/NNNN/                    the recognisers of the newest training runs (records in
                                  project.json; :mod:`.runs`)

Format 2 added capture groups (``"groups"``: one burst id per image) and training runs; format-1
projects open unchanged (no groups: every image its own; no runs).

Safety: only JSON and PNG/``.npz`` (``allow_pickle=False``) are read; every name, size and
label is validated; archive members cannot escape their folder (:mod:`.archive`). A corrupt,
foreign or newer-version project is a :class:`ModelFormatError` and nothing is overwritten.

Atomic saves: a folder project is written complete into a hidden sibling folder (files
fsynced, ``project.json`` last; unchanged images hard-linked from the previous version) and
then swapped in with two renames; if the process dies between the renames,
:func:`load_project` reads the previous complete version where it lies (opening changes nothing on
disk) and the next save puts it back. An archive is
written to a temporary file and renamed over the target. Measured (5000 64x64 images, load
~11 on 2 cores): folder save 7 s, re-save after editing 10 images 5 s, archive save 3 s,
open 3 s either way.
"""
from __future__ import annotations

import json
import math
import os
import shutil
import tempfile
import time
from pathlib import Path

import cv2
import numpy as np

from ..data.imageset import ImageSet
from ..errors import ConfigError, DataError, ModelFormatError, StorageError
from ..guards.files import NotRegularFile
from ..guards.limits import MEMORY_SHARE, available_memory
from ..progress import ProgressFn, StopFn, check_stop, report
from ..recogniser import Recogniser
from ..store.atomic import copy_tree, find_leftover, recover_dir, remove_stale, saving_prefix, swap_dir
from .archive import MAX_TOTAL_BYTES, ArchiveWriter, SafeArchive
from .containers import FolderSink, FolderSource, ZipSink, ZipSource, captures_in, image_digest
from .manifest import (ARCHIVE_SUFFIX, FORMAT, IMAGE_PATH, MANIFEST, TOP_LEVEL, VERSION, check_doc, fail,
                       png_size, read_manifest)
from .model import Project
from .runs import RUNS_DIR, RunLog, check_records, read_run_models, run_folder
from .saved_settings import check_saved_settings

def is_archive(path: str | Path) -> bool:
    """True when ``path`` names a one-file project (``.cmproj``) rather than a project folder."""
    return Path(path).suffix.lower() == ARCHIVE_SUFFIX


def class_dir_name(index: int, name: str) -> str:
    """The folder of class ``index``: its number (keeps names unique) and a filesystem-safe name."""
    safe = "".join(ch if ch.isalnum() and ch.isascii() or ch in "-_. " else "_" for ch in name).strip(" .")[:48]
    return f"{index:04d}-{safe or 'class'}"


# ---------------------------------------------------------------- saving

def save_project(project: Project, path: str | Path, *, progress: ProgressFn = None,
                 should_stop: StopFn = None) -> Path:
    """Save ``project`` to ``path`` (a folder, or one file when it ends in ``.cmproj``), atomically.

    An existing project at ``path`` is replaced only once the new one is complete; anything
    else there (a foreign file, a non-empty folder that is not a project) is refused with
    :class:`ConfigError`. Saving over a folder project re-uses (hard-links) the image files that
    did not change, so a save after a few edits writes only those. Returns the path written.
    """
    path = Path(path).expanduser().absolute()
    _check_target(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        restored = None if is_archive(path) else recover_dir(path, _complete)  # a save that died mid-swap
        remove_stale(path, complete=path.is_file() or (path / MANIFEST).is_file(), ours=_written)
    except OSError as exc:
        raise StorageError(f"cannot save the project to {path}: {exc.strerror or exc}") from None
    captures = project.captures_dir
    if restored is not None and captures is not None and captures.parent == restored:  # opened from it
        captures = path / "captures"
    if captures is None and path.is_dir() and (path / "captures").is_dir() and not (path / "captures").is_symlink():
        captures = path / "captures"
    try:
        if is_archive(path):
            with ArchiveWriter(path) as zw:
                _write_project(project, ZipSink(zw), captures, {}, progress, should_stop)
        else:
            _save_folder(project, path, captures, progress, should_stop)
    except OSError as exc:
        kept = "the project there is unchanged" if path.exists() else "nothing was saved"
        raise StorageError(f"cannot save the project to {path}: {exc.strerror or exc}; {kept}") from None
    report(progress, 1.0, "saved")
    return path


def _save_folder(project: Project, path: Path, captures: Path | None, progress: ProgressFn,
                 should_stop: StopFn) -> None:
    """Write into a hidden sibling, carry over files a save does not write, swap it in."""
    tmp = Path(tempfile.mkdtemp(prefix=saving_prefix(path), dir=str(path.parent)))
    try:
        mask = os.umask(0)
        os.umask(mask)
        os.chmod(tmp, 0o777 & ~mask)  # mkdtemp makes 0700; a project follows the user's umask
        _write_project(project, FolderSink(tmp), captures, _reusable_images(path), progress, should_stop)
        check_stop(should_stop)
        swap_dir(tmp, path, lambda old: _rescue_captures(old / "captures", path / "captures"),
                 ours=lambda name: name in TOP_LEVEL)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def _complete(folder: Path) -> bool:
    return (folder / MANIFEST).is_file()


def _written(rel: str) -> bool:
    """Relative paths a folder save writes (the manifest, images, recognisers; ``.tmp`` while writing)."""
    return (rel == MANIFEST or bool(IMAGE_PATH.fullmatch(rel)) or rel.endswith(".tmp")
            or (rel.startswith(("model/", f"{RUNS_DIR}/")) and rel.endswith((".json", ".npz"))))


def _reusable_images(path: Path) -> dict[str, Path]:
    """digest -> file of the images of the project now at ``path`` (empty when none or unreadable)."""
    try:
        doc = read_manifest(path, str(path))
        entries = check_doc(doc, str(path))[4]
    except (ModelFormatError, OSError):
        return {}
    return {e[2]: path / e[0] for e in entries}


def _write_project(project: Project, sink, captures: Path | None, reuse: dict[str, Path], progress: ProgressFn,
                   should_stop: StopFn) -> None:
    ims = project.imageset
    if not isinstance(ims, ImageSet):
        raise ConfigError("a project needs an ImageSet")
    try:
        settings_text = json.dumps(dict(project.settings or {}), allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"project settings must be plain JSON (str, numbers, lists, dicts): {exc}") from None
    h, w = ims.image_size
    dirs = [class_dir_name(i, n) for i, n in enumerate(ims.class_names)]
    entries = []
    n = len(ims)
    for i in range(n):
        if i % 64 == 0:
            check_stop(should_stop)
            report(progress, 0.8 * i / max(1, n), "writing images")
        img = ims.images[i]
        digest = image_digest(img)
        rel = f"images/{dirs[int(ims.labels[i])]}/{i:06d}.png"
        old = reuse.get(digest)
        if old is None or not sink.link(rel, old):
            ok, buf = cv2.imencode(".png", img if img.ndim == 2 else cv2.cvtColor(img, cv2.COLOR_RGB2BGR))
            if not ok:  # pragma: no cover - encoding a valid uint8 array does not fail
                raise DataError(f"could not encode image {i} as PNG")
            sink.write(rel, buf.tobytes())
        entries.append([rel, int(ims.labels[i]), digest])
    if captures is not None and Path(captures).is_dir():
        check_stop(should_stop)
        report(progress, 0.8, "keeping captures")
        sink.add_tree("captures", Path(captures))
    has_model = project.recogniser is not None
    if has_model:
        check_stop(should_stop)
        report(progress, 0.85, "writing the recogniser")
        sink.save_model(project.recogniser)
    runs = project.runs if project.runs is not None else RunLog()
    current = runs.current_of(project.recogniser)
    for rid, model in sorted(runs.models.items()):
        if rid != current:
            check_stop(should_stop)
            report(progress, 0.9, f"writing the model of run {rid}")
            sink.save_model(model, run_folder(rid))
    doc = {
        "format": FORMAT, "version": VERSION, "saved": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "name": ims.name, "class_names": list(ims.class_names), "image_size": [h, w], "colour": ims.is_color,
        "images": entries, "has_model": has_model, "settings": json.loads(settings_text),
        "runs": runs.records, "run_models": sorted(runs.models), "runs_current": current, "runs_next_id": runs.next_id,
    }
    if ims.groups is not None:
        doc["groups"] = ims.groups.tolist()
    sink.finish()
    sink.write(MANIFEST, json.dumps(doc, indent=1).encode("utf-8"), sync=True)  # last: a project is complete once it exists
    report(progress, 1.0, "written")


def _check_target(path: Path) -> None:
    if is_archive(path):
        if path.is_dir():
            raise ConfigError(f"{path} is a folder; a .cmproj project is a single file. Choose another name.")
        if path.exists() and (not path.is_file() or not _looks_like_archive(path)):
            raise ConfigError(f"{path} exists and is not a ClassMap Studio project; it was left untouched. "
                              f"Choose another name.")
    else:
        if path.exists() and not path.is_dir():
            raise ConfigError(f"{path} exists and is a file; choose a folder name, or end the name in .cmproj")
        if path.is_dir() and any(path.iterdir()) and not (path / MANIFEST).is_file():
            raise ConfigError(f"{path} is a non-empty folder that is not a ClassMap Studio project; it was left "
                              f"untouched. Choose a new or empty folder.")


def _looks_like_archive(path: Path) -> bool:
    import zipfile

    try:
        with zipfile.ZipFile(path) as zf:
            return MANIFEST in zf.namelist()
    except (zipfile.BadZipFile, OSError, ValueError, EOFError):
        return False


def _rescue_captures(old: Path, new: Path) -> None:
    """Move captures written into the old version while the save ran (the camera does not wait); a link
    there is not followed (it would move a folder elsewhere into the project)."""
    if not old.is_dir() or old.is_symlink():
        return
    for d, _, names in os.walk(old):
        for n in names:
            src = Path(d) / n
            dst = new / src.relative_to(old)
            if n.endswith(".tmp") or dst.exists() or src.is_symlink():
                continue
            dst.parent.mkdir(parents=True, exist_ok=True)
            os.replace(src, dst)


# ---------------------------------------------------------------- loading

def load_project(path: str | Path, *, captures_to: str | Path | None = None, load_model: bool = True,
                 max_total_bytes: int = MAX_TOTAL_BYTES, progress: ProgressFn = None,
                 should_stop: StopFn = None) -> Project:
    """Open the project folder or ``.cmproj`` archive at ``path``.

    ``captures_to``: for an archive, a folder to unpack its captures into (else they are
    dropped; they are in the image set already once saved). Raises :class:`ModelFormatError`
    for anything corrupt, foreign, unsafe or newer, naming the file at fault.
    """
    path = Path(path).expanduser().absolute()
    if path.is_file() or is_archive(path):
        if not path.exists():
            raise ModelFormatError(f"{path}: no such project file")
        with SafeArchive(path, allowed_top=TOP_LEVEL, max_total_bytes=max_total_bytes) as arc:
            proj = _read_project(ZipSource(arc), str(path), load_model, progress, should_stop)
            if captures_to is not None and any(n.startswith("captures/") for n in arc.names()):
                with tempfile.TemporaryDirectory(prefix="classmap-open-") as tmp:
                    arc.extract(tmp, "captures")
                    copy_tree(Path(tmp) / "captures", Path(captures_to))
                proj.captures_dir = Path(captures_to)
        proj.path = path
        return proj
    folder = _locate(path)
    proj = _read_project(FolderSource(folder), str(path), load_model, progress, should_stop)
    proj.path = path  # opened from a leftover: the next save to ``path`` puts it back
    proj.captures_dir = captures_in(folder)
    return proj



def _locate(path: Path) -> Path:
    """The folder to read for the project at ``path``: ``path``, or where a save that died mid-swap left
    the previous complete version (read there; nothing is renamed or deleted by a read)."""
    if (path / MANIFEST).is_file():
        return path
    leftover = find_leftover(path, _complete)
    if leftover is not None:
        return leftover
    if not path.exists():
        raise ModelFormatError(f"{path}: no such project")
    if not path.is_dir():
        raise ModelFormatError(f"{path} is not a ClassMap Studio project")
    raise ModelFormatError(f"{path} is not a ClassMap Studio project: {MANIFEST} is missing")


def _read_project(source, where: str, load_model: bool, progress: ProgressFn, should_stop: StopFn) -> Project:
    doc = read_manifest(source, where)
    names, h, w, colour, entries, settings = check_doc(doc, where)
    n = len(entries)
    shape = (n, h, w, 3) if colour else (n, h, w)
    too_big = fail(where, f"{n} images of {w}x{h} need {math.prod(shape) / 1024 ** 3:.1f} GiB of memory, "
                           f"more than this computer has free")
    if math.prod(shape) > MEMORY_SHARE * available_memory():  # checked before a byte is allocated
        raise too_big
    try:  # a manifest may declare far more than fits in memory; say so instead of crashing
        images = np.empty(shape, np.uint8)
    except MemoryError:
        raise too_big from None
    labels = np.empty(n, np.int64)
    png_bytes = 2 * h * w * (3 if colour else 1) + 65536  # the largest PNG of one such image, stored raw
    for i, (rel, label, digest) in enumerate(entries):
        if i % 64 == 0:
            check_stop(should_stop)
            report(progress, 0.85 * i / max(1, n), "reading images")
        try:
            data = source.read(rel, max_bytes=png_bytes)
        except OSError as exc:
            raise fail(where, f"image {rel} is missing or unreadable ({exc.strerror or exc})") from None
        if png_size(data) != (h, w):
            raise fail(where, f"image {rel} is not a {w}x{h} PNG")
        img = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR if colour else cv2.IMREAD_GRAYSCALE)
        if img is None or img.shape[:2] != (h, w):
            raise fail(where, f"image {rel} is corrupt")
        images[i] = cv2.cvtColor(img, cv2.COLOR_BGR2RGB) if colour else img
        if image_digest(images[i]) != digest:
            raise fail(where, f"image {rel} does not match its checksum (changed or damaged)")
        labels[i] = label
    name = doc.get("name") if isinstance(doc.get("name"), str) else Path(where).stem
    groups = doc.get("groups")
    if groups is not None and (not isinstance(groups, list) or len(groups) != n or not all(
            isinstance(g, int) and not isinstance(g, bool) and 0 <= g < 2 ** 62 for g in groups)):
        raise fail(where, f"groups must list one non-negative capture-group number per image ({n})")
    records = check_records(doc.get("runs"), where)
    try:
        imageset = ImageSet(images, labels, names, name=name,
                            groups=None if groups is None else np.asarray(groups, np.int64))
    except DataError as exc:  # a class name a project can never hold (control characters, ...)
        raise fail(where, str(exc)) from None
    recogniser = None
    if doc.get("has_model") is True and load_model:
        check_stop(should_stop)
        report(progress, 0.9, "reading the recogniser")
        with tempfile.TemporaryDirectory(prefix="classmap-open-") as tmp:
            try:
                model_dir = source.model_dir(Path(tmp))
            except NotRegularFile as exc:
                raise fail(where, str(exc)) from None
            recogniser = _load_recogniser(model_dir, where)
        rec_names = getattr(recogniser, "class_names", None)
        if rec_names is not None and list(rec_names) != names:
            raise fail(where, "the saved recogniser's classes differ from the project's classes")
    models = {}
    if load_model:
        def load(rid: int):
            check_stop(should_stop)
            with tempfile.TemporaryDirectory(prefix="classmap-open-") as tmp:
                try:
                    model_dir = source.model_dir(Path(tmp), run_folder(rid))
                except NotRegularFile as exc:
                    raise fail(where, str(exc)) from None
                return _load_recogniser(model_dir, where, run_folder(rid))
        models = read_run_models(doc, records, recogniser, where, load)
    report(progress, 1.0, "opened")
    next_id = doc.get("runs_next_id")
    next_id = next_id if isinstance(next_id, int) and not isinstance(next_id, bool) and 0 < next_id <= 10 ** 6 else None
    settings, notes = check_saved_settings(settings)  # each value the schema refuses: its default, and a note
    proj = Project(imageset=imageset, recogniser=recogniser, settings=settings,
                   runs=RunLog(records, models, next_id=next_id))
    proj.settings_notes = [f"{where}: saved setting {note}" for note in notes]
    return proj


def _load_recogniser(model_dir: Path, where: str, rel: str = "model"):
    if not model_dir.is_dir() or model_dir.is_symlink():
        raise fail(where, f"the project says it holds a recogniser but {rel}/ is missing")
    try:
        return Recogniser.load(model_dir)
    except ModelFormatError as exc:  # name the project's model/, not an internal unpacking folder
        raise fail(where, f"its recogniser cannot be loaded: {str(exc).replace(str(model_dir), rel)}") from None


def project_info(path: str | Path) -> dict:
    """Name, classes, image count and whether a model is saved, without reading the images."""
    path = Path(path).expanduser().absolute()
    if path.is_file():
        with SafeArchive(path, allowed_top=TOP_LEVEL) as arc:
            doc = read_manifest(ZipSource(arc), str(path))
    else:
        doc = read_manifest(_locate(path), str(path))
    names, h, w, colour, entries, _ = check_doc(doc, str(path))
    return {"name": doc.get("name"), "classes": names, "n_images": len(entries), "image_size": (h, w),
            "colour": colour, "has_model": doc.get("has_model") is True, "saved": doc.get("saved")}
