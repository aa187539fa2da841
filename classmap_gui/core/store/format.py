"""The on-disk bundle: a directory holding ``<name>.json`` (structure) and ``arrays.npz`` (numbers).

Safe by construction: JSON is parsed with the standard library (size, depth and number length
bounded), the ``.npz`` is read by :mod:`.npz` (no pickles; nothing inflates before the manifest's
declared sizes pass a memory budget) and every member is checked against the dtype and shape
the JSON manifest declares. Only regular files inside the bundle are read, never through a link.
Nothing read from a file is ever imported, called or unpickled.

Writes are atomic (:mod:`.atomic`): the bundle is written into a fresh sibling directory (files
flushed and fsynced), then swapped into place; files in the folder that the save did not write
are kept; a save killed at any point leaves a loadable bundle: a load reads it where it lies (a
load never renames or deletes anything), the next save puts it back.
"""
from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any, Callable

import numpy as np

from ..errors import ConfigError, ModelFormatError, StorageError
from ..guards.files import NotRegularFile, read_regular
from ..guards.read_limits import MAX_JSON_BYTES, MAX_JSON_CONTAINERS  # model.json's bounds (an export's too)
from .atomic import (find_leftover, fsync_dir, fault_point, fsync_file, recover_dir, remove_stale, saving_prefix,
                     swap_dir, write_file_atomic)
from .bounded_zip import ALLOWED_KINDS
from .npz import read_npz, write_npz

ARRAYS_FILE = "arrays.npz"

__all__ = ["ARRAYS_FILE", "MAX_JSON_BYTES", "array_manifest", "check_bundle_target", "fault_point", "fsync_file",
           "load_bundle", "parse_json", "save_bundle", "swap_dir", "write_file_atomic", "fsync_dir"]


def parse_json(raw: bytes, where: str) -> Any:
    """JSON from bytes; ModelFormatError for bad UTF-8, bad JSON, nesting too deep or numbers too long."""
    try:
        return json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise ModelFormatError(f"{where} is corrupt (not UTF-8 text: {exc.reason} at byte {exc.start})") from None
    except RecursionError:
        raise ModelFormatError(f"{where} is corrupt (nested too deeply to be a model description)") from None
    except ValueError as exc:  # JSONDecodeError, or an integer of thousands of digits
        raise ModelFormatError(f"{where} is corrupt (not valid JSON: {str(exc)[:160]})") from None

def array_manifest(arrays: dict[str, np.ndarray]) -> dict[str, dict[str, Any]]:
    """``{key: {"dtype": "<f4", "shape": [..]}}`` for the JSON side of a bundle."""
    out = {}
    for key, arr in arrays.items():
        if arr.dtype.kind not in ALLOWED_KINDS:
            raise ConfigError(f"array {key!r} has dtype {arr.dtype}; only bool, int and float arrays can be saved")
        out[key] = {"dtype": arr.dtype.str, "shape": list(arr.shape)}
    return out




def _bundle_complete(json_name: str) -> Callable[[Path], bool]:
    return lambda p: (p / json_name).is_file() and (p / ARRAYS_FILE).is_file()


def _ours(json_name: str) -> Callable[[str], bool]:
    return lambda name: name in (json_name, ARRAYS_FILE)


def _written(json_name: str) -> Callable[[str], bool]:
    """Relative paths a save of a bundle writes (its two files; ``.tmp`` while writing)."""
    return lambda rel: rel in (json_name, ARRAYS_FILE) or (rel.endswith(".tmp") and "/" not in rel)


def check_bundle_target(path: str | Path, json_name: str, *, need_bytes: int = 0) -> Path:
    """Check that a bundle can be saved at ``path`` before any work is spent on it; returns it absolute.

    Refuses (ConfigError) a file, a non-empty folder that is not a bundle, a parent that is a file;
    (StorageError) a place that cannot be written (read-only disk, no permission) or with less than
    ``need_bytes`` free. Creates nothing: a probe folder is made and removed next to the target.
    """
    path = Path(path).expanduser().absolute()
    if path.is_symlink() and not path.is_dir():
        raise ConfigError(f"{path} is a link that leads nowhere; choose a folder name for the model")
    if path.exists():
        if not path.is_dir():
            raise ConfigError(f"{path} exists and is a file; choose a folder name for the model")
        try:  # the kinds come from the listing itself (d_type): no second look that a concurrent save could race
            with os.scandir(path) as it:
                listing = [(e.name, e.is_symlink() or e.is_file() or e.is_dir()) for e in it]
        except FileNotFoundError:  # another save to this path is swapping it right now: a bundle
            listing = []
        entries = [name for name, _ in listing]
        if entries and json_name not in entries:
            raise ConfigError(f"{path} is a non-empty folder that does not hold a saved model; it was left "
                              f"untouched. Choose a new or empty folder")
        special = [name for name, plain in listing if not plain]
        if special:  # a save keeps a user's files, but cannot carry a FIFO or socket across
            raise ConfigError(f"{path} holds {special[0]!r}, which is neither a file nor a folder; a save there "
                              f"would lose it. Move it away or choose another folder")
    base = path.parent
    while not base.exists():
        if base.is_symlink() or base.parent == base:
            break
        base = base.parent
    if not base.is_dir():
        raise ConfigError(f"cannot save to {path}: {base} is not a folder")
    try:
        probe = tempfile.mkdtemp(prefix=f".{path.name}.probe-", dir=str(base))
        os.rmdir(probe)
    except OSError as exc:
        raise StorageError(f"cannot save to {path}: cannot create files in {base} ({exc.strerror or exc})") from None
    if need_bytes:
        st = os.statvfs(base)
        free = st.f_bavail * st.f_frsize
        if free < need_bytes:
            raise StorageError(f"cannot save to {path}: {free // 2 ** 20} MB free on that disk, the model needs "
                               f"about {need_bytes // 2 ** 20 + 1} MB; free some space or choose another place")
    return path


def save_bundle(path: str | Path, json_name: str, doc: dict[str, Any], arrays: dict[str, np.ndarray]) -> Path:
    """Write ``doc`` (JSON-able) and ``arrays`` as a bundle directory at ``path``, atomically.

    ``doc`` gets an ``"arrays"`` manifest added. An existing bundle at ``path`` (a folder with
    ``json_name`` in it) is replaced; files in it that a save does not write (a README a user put
    there) are kept. Any other non-empty folder is refused with ConfigError. A disk that is full,
    read-only or not ours is a StorageError, and the folder at ``path`` is left as it was.
    """
    path = check_bundle_target(path, json_name)
    arrays = {k: np.ascontiguousarray(v) for k, v in arrays.items()}
    doc = dict(doc)
    doc["arrays"] = array_manifest(arrays)
    text = json.dumps(doc, indent=1, allow_nan=True)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.exists():  # a save that died mid-swap: its complete version comes back, with a user's files
            recover_dir(path, _bundle_complete(json_name))
        remove_stale(path, complete=(path / json_name).is_file(), ours=_written(json_name))
        tmp = Path(tempfile.mkdtemp(prefix=saving_prefix(path), suffix=".tmp", dir=str(path.parent)))
    except OSError as exc:
        raise StorageError(f"cannot save to {path}: {exc.strerror or exc}") from None
    try:
        _apply_umask(tmp)
        with open(tmp / ARRAYS_FILE, "wb") as fh:
            write_npz(fh, arrays)  # uncompressed, data aligned: large arrays are memory-mapped on load
            fsync_file(fh)
        with open(tmp / json_name, "w", encoding="utf-8") as fh:
            fh.write(text)
            fsync_file(fh)
        swap_dir(tmp, path, ours=_ours(json_name))
    except OSError as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        raise StorageError(f"cannot save to {path}: {exc.strerror or exc}; "
                           f"{'the model there is unchanged' if (path / json_name).is_file() else 'nothing was saved'}"
                           ) from None
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return path


def _apply_umask(folder: Path) -> None:
    """``mkdtemp`` makes 0700 folders; a saved model gets the permissions the user's umask gives."""
    mask = os.umask(0)
    os.umask(mask)
    os.chmod(folder, 0o777 & ~mask)


def foreign_entries(path: str | Path, json_name: str) -> list[str]:
    """Names in the bundle folder ``path`` that a save did not write (kept by :func:`save_bundle`)."""
    path = Path(path).expanduser()
    if not path.is_dir():
        return []
    ours = _ours(json_name)
    return sorted(e.name for e in path.iterdir() if not ours(e.name))


def load_bundle(path: str | Path, json_name: str, format_name: str, max_version: int, *,
                max_array_bytes: int | None = None) -> tuple[dict, dict[str, np.ndarray]]:
    """Read and check a bundle: returns ``(doc, arrays)``.

    ``path`` is the bundle folder or its JSON file. A bundle whose save was killed mid-swap is read
    from its complete leftover where it lies (:func:`find_leftover`); nothing on disk changes. Raises :class:`ModelFormatError` for a missing or
    foreign file, a link or special file inside the bundle, a newer format version, a corrupt or
    pickle-bearing ``.npz``, arrays declaring more than ``max_array_bytes`` (default: most of
    the free memory), or any array whose dtype/shape differs from the manifest.
    """
    path = Path(path).expanduser()
    folder = path.parent if path.name == json_name and not path.is_dir() else path
    jpath = folder / json_name
    if not folder.exists() and not folder.is_symlink():
        folder = find_leftover(folder.absolute(), _bundle_complete(json_name)) or folder
        jpath = folder / json_name
    if not folder.exists():
        raise ModelFormatError(f"{folder}: no such model folder")
    if not folder.is_dir():
        raise ModelFormatError(f"{folder} is not a saved model (not a folder)")
    if not jpath.exists() and not jpath.is_symlink():
        raise ModelFormatError(f"{folder} is not a saved model: {json_name} is missing")
    try:
        raw = read_regular(jpath, max_bytes=MAX_JSON_BYTES, follow_links=False,
                           too_big="is too large to be a model description")
    except NotRegularFile as exc:
        raise ModelFormatError(str(exc)) from None
    except OSError as exc:
        raise ModelFormatError(f"cannot read {jpath}: {exc.strerror or exc}") from None
    if raw.count(b"[") + raw.count(b"{") > MAX_JSON_CONTAINERS:  # ~60 bytes each once parsed: refused unparsed
        raise ModelFormatError(f"{jpath} is too large to be a model description (too many lists and objects)")
    doc = parse_json(raw, str(jpath))
    if not isinstance(doc, dict) or doc.get("format") != format_name:
        raise ModelFormatError(f"{jpath} is not a {format_name} file (format field is "
                               f"{str(doc.get('format'))[:60] if isinstance(doc, dict) else None!r})")
    version = doc.get("version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise ModelFormatError(f"{jpath}: invalid format version {str(version)[:20]!r}")
    if version > max_version:
        shown = str(version) if version < 10 ** 9 else f"{str(version)[:9]}..."
        raise ModelFormatError(f"{jpath} was written by a newer ClassMap Studio (format version {shown}, "
                               f"this one reads up to {max_version}); upgrade ClassMap Studio to open it")
    manifest = doc.get("arrays")
    if not isinstance(manifest, dict):
        raise ModelFormatError(f"{jpath}: the array manifest is missing")
    arrays = read_npz(folder / ARRAYS_FILE, manifest, budget=max_array_bytes)
    return doc, arrays
