"""The on-disk bundle: a directory holding ``<name>.json`` (structure) and ``arrays.npz`` (numbers).

Safe by construction: JSON is parsed with the standard library, the ``.npz`` is read with
``np.load(allow_pickle=False)`` and every member is checked against the dtype and shape the JSON
manifest declares. Nothing read from a file is ever imported, called or unpickled.

Writes are atomic: the bundle is written into a fresh sibling directory (files flushed and
fsynced), then renamed into place; an existing bundle is only removed after the new one is there.
"""
from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
import zipfile
from pathlib import Path
from typing import Any, Callable

import numpy as np

from ..errors import ConfigError, ModelFormatError

ARRAYS_FILE = "arrays.npz"
MAX_JSON_BYTES = 64 * 1024 * 1024
#: dtype kinds an array in a bundle may have: bool, signed/unsigned int, float.
ALLOWED_KINDS = "biuf"


def _fsync_dir(path: Path) -> None:
    try:
        fd = os.open(str(path), os.O_RDONLY)
    except OSError:  # pragma: no cover - platforms without directory fds
        return
    try:
        os.fsync(fd)
    except OSError:  # pragma: no cover
        pass
    finally:
        os.close(fd)


def swap_dir(tmp: Path, path: Path, before_removing_old: Callable[[Path], None] | None = None) -> None:
    """Replace the folder ``path`` by the complete folder ``tmp`` with two renames, fsynced.

    A reader sees the old folder or the new one, never a mix. ``before_removing_old(old)`` may
    take what it needs from the replaced folder before it is deleted.
    """
    _fsync_dir(tmp)
    old = None
    if path.exists():
        old = path.parent / f".{path.name}.old-{os.getpid()}-{time.monotonic_ns()}"
        os.replace(path, old)
    os.replace(tmp, path)
    _fsync_dir(path.parent)
    if old is not None:
        if before_removing_old is not None:
            before_removing_old(old)
        shutil.rmtree(old, ignore_errors=True)


def write_file_atomic(path: str | Path, data: bytes) -> None:
    """Write ``data`` to ``path`` via a temporary file in the same folder, fsync, rename."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=str(path.parent))
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    _fsync_dir(path.parent)


def array_manifest(arrays: dict[str, np.ndarray]) -> dict[str, dict[str, Any]]:
    """``{key: {"dtype": "<f4", "shape": [..]}}`` for the JSON side of a bundle."""
    out = {}
    for key, arr in arrays.items():
        if arr.dtype.kind not in ALLOWED_KINDS:
            raise ConfigError(f"array {key!r} has dtype {arr.dtype}; only bool, int and float arrays can be saved")
        out[key] = {"dtype": arr.dtype.str, "shape": list(arr.shape)}
    return out


def save_bundle(path: str | Path, json_name: str, doc: dict[str, Any], arrays: dict[str, np.ndarray]) -> Path:
    """Write ``doc`` (JSON-able) and ``arrays`` as a bundle directory at ``path``, atomically.

    ``doc`` gets an ``"arrays"`` manifest added. An existing bundle at ``path`` (a folder with
    ``json_name`` in it) is replaced; any other non-empty folder is refused with ConfigError.
    """
    path = Path(path).expanduser()
    if path.exists():
        if not path.is_dir():
            raise ConfigError(f"{path} exists and is a file; choose a folder name for the model")
        if any(path.iterdir()) and not (path / json_name).exists():
            raise ConfigError(f"{path} is a non-empty folder that does not hold a saved model; "
                              f"choose a new or empty folder")
    arrays = {k: np.ascontiguousarray(v) for k, v in arrays.items()}
    doc = dict(doc)
    doc["arrays"] = array_manifest(arrays)
    text = json.dumps(doc, indent=1, allow_nan=True)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{path.name}.", suffix=".tmp", dir=str(path.parent)))
    try:
        with open(tmp / ARRAYS_FILE, "wb") as fh:
            np.savez(fh, **arrays)
            fh.flush()
            os.fsync(fh.fileno())
        with open(tmp / json_name, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        swap_dir(tmp, path)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return path


def load_bundle(path: str | Path, json_name: str, format_name: str, max_version: int) -> tuple[dict, dict[str, np.ndarray]]:
    """Read and check a bundle: returns ``(doc, arrays)``.

    ``path`` is the bundle folder or its JSON file. Raises :class:`ModelFormatError` for a
    missing or foreign file, a newer format version, a corrupt or pickle-bearing ``.npz``, or any
    array whose dtype/shape differs from the manifest. Nothing in the files is executed.
    """
    path = Path(path).expanduser()
    folder = path.parent if path.is_file() and path.name == json_name else path
    jpath = folder / json_name
    if not folder.exists():
        raise ModelFormatError(f"{folder}: no such model folder")
    if not jpath.is_file():
        raise ModelFormatError(f"{folder} is not a saved model: {json_name} is missing")
    if jpath.stat().st_size > MAX_JSON_BYTES:
        raise ModelFormatError(f"{jpath} is too large to be a model description")
    try:
        doc = json.loads(jpath.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ModelFormatError(f"{jpath} is corrupt (not valid JSON: {exc})") from None
    if not isinstance(doc, dict) or doc.get("format") != format_name:
        raise ModelFormatError(f"{jpath} is not a {format_name} file (format field is "
                               f"{doc.get('format') if isinstance(doc, dict) else None!r})")
    version = doc.get("version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise ModelFormatError(f"{jpath}: invalid format version {version!r}")
    if version > max_version:
        raise ModelFormatError(f"{jpath} was written by a newer ClassMap Studio (format version {version}, "
                               f"this one reads up to {max_version}); upgrade ClassMap Studio to open it")
    manifest = doc.get("arrays")
    if not isinstance(manifest, dict):
        raise ModelFormatError(f"{jpath}: the array manifest is missing")
    arrays = _read_arrays(folder / ARRAYS_FILE, manifest)
    return doc, arrays


def _read_arrays(npz_path: Path, manifest: dict) -> dict[str, np.ndarray]:
    if not npz_path.is_file():
        raise ModelFormatError(f"{npz_path} is missing")
    out: dict[str, np.ndarray] = {}
    try:
        with np.load(npz_path, allow_pickle=False) as z:
            names = set(z.files)
            missing = sorted(set(manifest) - names)
            extra = sorted(names - set(manifest))
            if missing:
                raise ModelFormatError(f"{npz_path} is incomplete: missing {', '.join(missing[:5])}")
            if extra:
                raise ModelFormatError(f"{npz_path} holds members the model does not declare: {', '.join(extra[:5])}")
            for key, spec in manifest.items():
                try:
                    want_dtype = np.dtype(str(spec["dtype"]))
                    want_shape = tuple(int(s) for s in spec["shape"])
                except (KeyError, TypeError, ValueError):
                    raise ModelFormatError(f"{npz_path}: bad manifest entry for {key!r}") from None
                if want_dtype.kind not in ALLOWED_KINDS:
                    raise ModelFormatError(f"{npz_path}: array {key!r} declares dtype {want_dtype}, "
                                           f"which a model never holds (possible pickle); refused")
                arr = z[key]  # raises ValueError for object arrays: allow_pickle=False
                if arr.dtype != want_dtype or arr.shape != want_shape:
                    raise ModelFormatError(f"{npz_path}: array {key!r} is {arr.dtype}{list(arr.shape)}, "
                                           f"the model declares {want_dtype}{list(want_shape)}")
                out[key] = arr
    except ModelFormatError:
        raise
    except ValueError as exc:
        if "pickle" in str(exc).lower():
            raise ModelFormatError(f"{npz_path} contains a pickled object; model files never do, so it was "
                                   f"refused without loading it") from None
        raise ModelFormatError(f"{npz_path} is corrupt: {exc}") from None
    except (zipfile.BadZipFile, OSError, EOFError, KeyError) as exc:
        raise ModelFormatError(f"{npz_path} is corrupt or unreadable: {exc}") from None
    return out
