"""Safe single-file archives (``.cmproj``): a zip of a project folder that cannot escape it.

Reading a zip from a stranger is where path tricks and zip bombs live, so every member is
checked before a byte is written: no absolute paths, no ``..``, no backslashes or drive
letters, no symlinks or special files, no duplicate names, only the top-level entries the
format knows, a bounded member count, a bounded total size, and a bounded compression ratio.
Members are extracted by writing their bytes ourselves (never ``extractall``), counting the
bytes actually inflated, so a lying header cannot overrun the bound either.

Writing is atomic: the zip goes to a temporary file next to the target, is flushed and
fsynced, and replaces the target with one rename.
"""
from __future__ import annotations

import os
import stat
import tempfile
import zipfile
import zlib
from pathlib import Path, PurePosixPath
from typing import Iterable

from ..errors import ModelFormatError
from ..progress import ProgressFn, StopFn, check_stop, report
from .format import _fsync_dir

#: Default bound on the total uncompressed size of an archive (bytes).
MAX_TOTAL_BYTES = 8 * 1024 ** 3
MAX_MEMBERS = 2_000_000
#: Inflating more than this many bytes per compressed byte is a zip bomb, not a project.
MAX_RATIO = 200
_CHUNK = 1 << 20
#: Extensions stored without compression: already compressed.
_STORED = (".png", ".jpg", ".jpeg", ".webp", ".npz")


def check_member_name(name: str, allowed_top: Iterable[str] | None = None) -> PurePosixPath:
    """The member ``name`` as a relative path, or ModelFormatError when it could escape its folder.

    ``allowed_top``: the only first path components accepted (e.g. ``{"project.json", "images"}``).
    """
    if not name or "\\" in name or "\x00" in name or name.startswith("/") or (len(name) > 1 and name[1] == ":"):
        raise ModelFormatError(f"archive member {name!r} has an unsafe path; refused")
    p = PurePosixPath(name)
    parts = p.parts
    if not parts or any(part in ("", ".", "..") for part in parts) or len(name) > 1024:
        raise ModelFormatError(f"archive member {name!r} has an unsafe path; refused")
    if allowed_top is not None and parts[0] not in allowed_top:
        raise ModelFormatError(f"archive member {name!r} is not part of a ClassMap Studio project; refused")
    return p


def _is_special(info: zipfile.ZipInfo) -> bool:
    """True for symlinks, devices, fifos: anything but a regular file or a folder."""
    mode = (info.external_attr >> 16) & 0xFFFF
    if info.create_system != 3 or stat.S_IFMT(mode) == 0:  # no unix file type recorded: a plain file
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


def check_archive(zf: zipfile.ZipFile, *, allowed_top: Iterable[str] | None = None,
                  max_total_bytes: int = MAX_TOTAL_BYTES, label: str = "archive") -> list[zipfile.ZipInfo]:
    """Validate every member of ``zf``; returns the file members (folders dropped).

    Raises ModelFormatError naming the first offending member.
    """
    allowed = set(allowed_top) if allowed_top is not None else None
    infos = zf.infolist()
    if len(infos) > MAX_MEMBERS:
        raise ModelFormatError(f"{label} has {len(infos)} members, more than a project can hold; refused")
    seen: set[str] = set()
    total = 0
    files = []
    for info in infos:
        p = check_member_name(info.filename.rstrip("/") if info.is_dir() else info.filename, allowed)
        key = str(p)
        if key.lower() in seen:
            raise ModelFormatError(f"{label}: member {key!r} appears twice; refused")
        seen.add(key.lower())
        if _is_special(info):
            raise ModelFormatError(f"{label}: member {key!r} is a link or special file; refused")
        if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
            raise ModelFormatError(f"{label}: member {key!r} uses compression method {info.compress_type}, "
                                   f"which ClassMap Studio never writes; refused")
        if info.flag_bits & 0x1:
            raise ModelFormatError(f"{label}: member {key!r} is encrypted; projects never are")
        if info.is_dir():
            continue
        total += info.file_size
        if total > max_total_bytes:
            raise ModelFormatError(f"{label} unpacks to more than {max_total_bytes / 1024 ** 3:.1f} GiB; refused")
        if info.file_size > 1024 * 1024 and info.file_size > MAX_RATIO * max(1, info.compress_size):
            raise ModelFormatError(f"{label}: member {key!r} inflates {info.file_size // max(1, info.compress_size)}"
                                   f"-fold (a zip bomb?); refused")
        files.append(info)
    return files


def extract_archive(path: str | Path, dest: str | Path, *, allowed_top: Iterable[str] | None = None,
                    max_total_bytes: int = MAX_TOTAL_BYTES, progress: ProgressFn = None,
                    should_stop: StopFn = None) -> list[str]:
    """Check, then extract the zip at ``path`` into the existing folder ``dest``.

    Returns the extracted member names. Raises ModelFormatError for a file that is not a zip,
    is corrupt (bad CRC, truncated), or fails :func:`check_archive`.
    """
    path, dest = Path(path), Path(dest)
    label = str(path)
    try:
        zf = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, ValueError) as exc:
        raise ModelFormatError(f"{path} is not a ClassMap Studio archive (not a readable zip: {exc})") from None
    except OSError as exc:
        raise ModelFormatError(f"cannot read {path}: {exc.strerror or exc}") from None
    written = 0
    names = []
    with zf:
        files = check_archive(zf, allowed_top=allowed_top, max_total_bytes=max_total_bytes, label=label)
        for k, info in enumerate(files):
            if k % 32 == 0:
                check_stop(should_stop)
                report(progress, k / max(1, len(files)), "unpacking")
            target = dest.joinpath(*PurePosixPath(info.filename).parts)
            target.parent.mkdir(parents=True, exist_ok=True)
            try:
                with zf.open(info) as src, open(target, "xb") as out:
                    got = 0
                    while chunk := src.read(_CHUNK):
                        got += len(chunk)
                        written += len(chunk)
                        if got > info.file_size or written > max_total_bytes:
                            raise ModelFormatError(f"{label}: member {info.filename!r} inflates beyond its "
                                                   f"declared size; refused")
                        out.write(chunk)
            except FileExistsError:
                raise ModelFormatError(f"{label}: member {info.filename!r} clashes with another member") from None
            except (zipfile.BadZipFile, EOFError, zlib.error, NotImplementedError, ValueError, RuntimeError) as exc:
                raise ModelFormatError(f"{label} is corrupt at member {info.filename!r}: {exc}") from None
            except OSError as exc:
                raise ModelFormatError(f"cannot unpack {label} into {dest}: {exc.strerror or exc}") from None
            names.append(info.filename)
    report(progress, 1.0, "unpacking")
    return names


def write_archive(folder: str | Path, path: str | Path, *, progress: ProgressFn = None,
                  should_stop: StopFn = None, last: str | None = None) -> Path:
    """Zip every regular file under ``folder`` into ``path`` atomically; ``last`` is written last.

    Symlinks in ``folder`` are not followed and not stored. Returns ``path``.
    """
    folder, path = Path(folder), Path(path)
    files = []
    for d, dirs, names in os.walk(folder):
        dirs.sort()
        for n in sorted(names):
            f = Path(d) / n
            if f.is_file() and not f.is_symlink():
                files.append(f)
    if last is not None:
        files.sort(key=lambda f: f.relative_to(folder).as_posix() == last)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.saving-{os.getpid()}-", suffix=".tmp", dir=str(path.parent))
    try:
        with os.fdopen(fd, "wb") as fh:
            with zipfile.ZipFile(fh, "w", allowZip64=True) as zf:
                for k, f in enumerate(files):
                    if k % 32 == 0:
                        check_stop(should_stop)
                        report(progress, k / max(1, len(files)), "writing the archive")
                    rel = f.relative_to(folder).as_posix()
                    comp = zipfile.ZIP_STORED if f.suffix.lower() in _STORED else zipfile.ZIP_DEFLATED
                    zf.write(f, rel, compress_type=comp)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    _fsync_dir(path.parent)
    report(progress, 1.0, "writing the archive")
    return path
