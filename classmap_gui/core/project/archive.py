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
import struct
import tempfile
import zipfile
import zlib
from pathlib import Path, PurePosixPath
from typing import Iterable

from ..errors import ModelFormatError
from ..progress import ProgressFn, StopFn, check_stop, report
from ..guards.files import NotRegularFile, open_regular
from ..store.atomic import fault_point, fsync_dir
from ..store.bounded_zip import entry_count

#: Default bound on the total uncompressed size of an archive (bytes).
MAX_TOTAL_BYTES = 8 * 1024 ** 3
#: Most entries an archive may list (one per image, capture and model file). Counted from the central
#: directory's end record before ``zipfile`` builds ~1 KB of bookkeeping per entry.
MAX_MEMBERS = 200_000
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


class SafeArchive:
    """A checked, read-only zip: every member is validated on opening (:func:`check_archive`);
    :meth:`read` and :meth:`extract` count the bytes actually inflated against the bounds.

    Use as a context manager. All failures are :class:`ModelFormatError` naming the archive.
    """

    def __init__(self, path: str | Path, *, allowed_top: Iterable[str] | None = None,
                 max_total_bytes: int = MAX_TOTAL_BYTES):
        self.path = Path(path)
        self.label = str(path)
        self.max_total_bytes = int(max_total_bytes)
        try:
            self._fh = os.fdopen(open_regular(self.path), "rb")  # a FIFO would block zipfile forever
        except NotRegularFile as exc:
            raise ModelFormatError(str(exc)) from None
        except OSError as exc:
            raise ModelFormatError(f"cannot read {path}: {exc.strerror or exc}") from None
        try:
            count = entry_count(self._fh)
            if count is not None and count > MAX_MEMBERS:
                raise ModelFormatError(f"{path} lists {count} entries, more than a project can hold "
                                       f"({MAX_MEMBERS}); refused")
            self._zf = zipfile.ZipFile(self._fh)
        except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, ValueError, OSError, NotImplementedError,
                struct.error) as exc:
            self._fh.close()  # NotImplementedError: a header claiming a zip version zipfile cannot read
            if isinstance(exc, ModelFormatError):
                raise
            raise ModelFormatError(f"{path} is not a ClassMap Studio archive (not a readable zip: {exc})") from None
        try:
            files = check_archive(self._zf, allowed_top=allowed_top, max_total_bytes=max_total_bytes, label=self.label)
        except BaseException:
            self.close()
            raise
        self._files = {info.filename: info for info in files}
        self._inflated = 0

    def __enter__(self) -> "SafeArchive":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        """Close the zip and its file handle."""
        self._zf.close()
        self._fh.close()

    def names(self) -> list[str]:
        """File members (no folders), in archive order."""
        return list(self._files)

    def has(self, name: str) -> bool:
        """True when the archive holds a member named ``name``."""
        return name in self._files

    def _stream(self, info: zipfile.ZipInfo, sink) -> None:
        try:
            with self._zf.open(info) as src:
                got = 0
                while chunk := src.read(_CHUNK):
                    got += len(chunk)
                    self._inflated += len(chunk)
                    if got > info.file_size or self._inflated > self.max_total_bytes:
                        raise ModelFormatError(f"{self.label}: member {info.filename!r} inflates beyond its "
                                               f"declared size; refused")
                    sink(chunk)
        except (zipfile.BadZipFile, EOFError, zlib.error, NotImplementedError, ValueError, RuntimeError) as exc:
            if isinstance(exc, ModelFormatError):
                raise
            raise ModelFormatError(f"{self.label} is corrupt at member {info.filename!r}: {exc}") from None
        except OSError as exc:
            raise ModelFormatError(f"cannot read {self.label}: {exc.strerror or exc}") from None

    def read(self, name: str, max_bytes: int | None = None) -> bytes:
        """The bytes of member ``name``; ModelFormatError when it is missing, corrupt, or declares more
        than ``max_bytes`` (refused from the directory entry, before a byte is inflated)."""
        info = self._files.get(name)
        if info is None:
            raise ModelFormatError(f"{self.label}: member {name!r} is missing")
        if max_bytes is not None and info.file_size > max_bytes:
            raise ModelFormatError(f"{self.label}: member {name!r} declares {info.file_size} bytes, more than "
                                   f"it can need ({max_bytes}); refused before reading it")
        parts: list[bytes] = []
        self._stream(info, parts.append)
        return b"".join(parts)

    def extract(self, dest: str | Path, prefix: str | None = None, *, progress: ProgressFn = None,
                should_stop: StopFn = None) -> list[str]:
        """Write the members (those under ``prefix/`` when given) into the existing folder ``dest``."""
        dest = Path(dest)
        infos = [i for n, i in self._files.items() if prefix is None or n.startswith(prefix.rstrip("/") + "/")]
        for k, info in enumerate(infos):
            if k % 32 == 0:
                check_stop(should_stop)
                report(progress, k / max(1, len(infos)), "unpacking")
            target = dest.joinpath(*PurePosixPath(info.filename).parts)
            try:
                target.parent.mkdir(parents=True, exist_ok=True)
                with open(target, "xb") as out:
                    self._stream(info, out.write)
            except FileExistsError:
                raise ModelFormatError(f"{self.label}: member {info.filename!r} clashes with another member") from None
            except OSError as exc:
                raise ModelFormatError(f"cannot unpack {self.label} into {dest}: {exc.strerror or exc}") from None
        report(progress, 1.0, "unpacking")
        return [i.filename for i in infos]


class ArchiveWriter:
    """Write a zip atomically: members go to a temporary file next to ``path``, which is flushed,
    fsynced and renamed over ``path`` only when the ``with`` block ends without an error."""

    def __init__(self, path: str | Path):
        self.path = Path(path)

    def __enter__(self) -> "ArchiveWriter":
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, self._tmp = tempfile.mkstemp(prefix=f".{self.path.name}.saving-{os.getpid()}-", suffix=".tmp",
                                         dir=str(self.path.parent))
        mask = os.umask(0)
        os.umask(mask)
        os.chmod(self._tmp, 0o666 & ~mask)  # mkstemp makes 0600; the saved file follows the user's umask
        self._fh = os.fdopen(fd, "wb")
        self._zf = zipfile.ZipFile(self._fh, "w", allowZip64=True)
        return self

    def _info(self, name: str) -> zipfile.ZipInfo:
        info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
        info.external_attr = (stat.S_IFREG | 0o644) << 16
        info.create_system = 3
        info.compress_type = zipfile.ZIP_STORED if name.lower().endswith(_STORED) else zipfile.ZIP_DEFLATED
        return info

    def write(self, name: str, data: bytes) -> None:
        """Add member ``name`` (a relative posix path) holding ``data``."""
        info = self._info(name)
        self._zf.writestr(info, data, compress_type=info.compress_type)

    def add_file(self, name: str, path: str | Path) -> None:
        """Add member ``name`` holding the regular file ``path``, copied in chunks (a model's arrays may
        be larger than memory); a link or special file is refused (NotRegularFile)."""
        with os.fdopen(open_regular(path, follow_links=False), "rb") as src:
            info = self._info(name)
            info.file_size = os.fstat(src.fileno()).st_size
            with self._zf.open(info, "w") as out:
                while chunk := src.read(_CHUNK):
                    out.write(chunk)

    def add_tree(self, prefix: str, folder: str | Path) -> None:
        """Add every regular file under ``folder`` as ``prefix/<relative path>``. Links are skipped,
        ``folder`` itself included: nothing outside the folder gets into the archive."""
        folder = Path(folder)
        if folder.is_symlink():
            return
        for d, dirs, names in os.walk(folder):
            dirs.sort()
            for n in sorted(names):
                f = Path(d) / n
                if f.is_file() and not f.is_symlink() and not n.endswith(".tmp"):
                    self.add_file(f"{prefix}/{f.relative_to(folder).as_posix()}", f)

    def __exit__(self, exc_type, exc, tb) -> None:
        try:
            self._zf.close()
            if exc_type is None:
                self._fh.flush()
                fault_point("fsync-file")
                os.fsync(self._fh.fileno())
            self._fh.close()
            if exc_type is None:
                fault_point("rename-new")
                os.replace(self._tmp, self.path)
                fsync_dir(self.path.parent)
        finally:
            if os.path.exists(self._tmp):
                os.unlink(self._tmp)
