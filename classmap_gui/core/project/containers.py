"""How a project's files are written and read: a folder or a zip archive, behind one small interface.

Sinks (``write``, ``link``, ``add_tree``, ``save_model``, ``finish``) and sources (``read``,
``model_dir``) let :mod:`.format` write and read both forms with the same code.
"""
from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

import numpy as np

from ..errors import ModelFormatError
from ..guards.files import NotRegularFile, inside, read_regular
from ..store.atomic import copy_tree, fault_point, fsync_dir, private_tempdir
from .archive import ArchiveWriter, SafeArchive


def image_digest(img: np.ndarray) -> str:
    """A checksum of an image's pixels and shape (hex): finds unchanged images, detects corruption."""
    h = hashlib.blake2b(digest_size=16)
    h.update(repr(img.shape).encode())
    h.update(np.ascontiguousarray(img).tobytes())
    return h.hexdigest()


class FolderSink:
    """Writes a project into a fresh folder. Files are written first and fsynced together in
    :meth:`finish` from a few threads, so the file system can commit them as a group (one fsync
    per file in turn took ~6 ms each on this machine: 30 s for 5000 images)."""

    def __init__(self, root: Path):
        self.root = root
        self._written: list[Path] = []

    def write(self, rel: str, data: bytes, sync: bool = False) -> None:
        """Write ``data`` to ``rel`` under the folder; fsynced now when ``sync``, else at ``finish``."""
        f = self.root / rel
        f.parent.mkdir(parents=True, exist_ok=True)
        with open(f, "wb") as fh:
            fh.write(data)
            if sync:
                fh.flush()
                fault_point("fsync-file")
                os.fsync(fh.fileno())
        if not sync:
            self._written.append(f)

    def link(self, rel: str, src: Path) -> bool:
        """Hard-link an unchanged file of the previous version (already on disk and synced)."""
        f = self.root / rel
        f.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.link(src, f)
            return True
        except OSError:
            return False

    def add_tree(self, prefix: str, src: Path) -> None:
        """Copy the folder ``src`` into the project under ``prefix``."""
        copy_tree(src, self.root / prefix)

    def save_model(self, recogniser, where: str = "model") -> None:
        """Save a trained recogniser into the project's folder ``where`` (``model/``, or a run's ``runs/NNNN/``)."""
        recogniser.save(self.root / where)

    def finish(self) -> None:
        """Fsync every file written without ``sync`` so the saved folder is durable before it is swapped in."""
        from concurrent.futures import ThreadPoolExecutor

        def sync(f: Path) -> None:
            fd = os.open(f, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)

        fault_point("fsync-file")
        with ThreadPoolExecutor(max_workers=16) as pool:
            list(pool.map(sync, self._written))
        self._written.clear()
        for d, _, _ in os.walk(self.root):
            fsync_dir(Path(d))


class ZipSink:
    """Writes a project as the members of an archive."""

    def __init__(self, zw: ArchiveWriter):
        self.zw = zw

    def write(self, rel: str, data: bytes, sync: bool = False) -> None:
        """Add ``data`` to the archive as ``rel`` (``sync`` is moot: the whole archive is synced at the end)."""
        self.zw.write(rel, data)

    def link(self, rel: str, src: Path) -> bool:
        """An archive cannot hard-link a previous version's file: always False, so the caller writes it."""
        return False

    def add_tree(self, prefix: str, src: Path) -> None:
        """Add the folder ``src`` to the archive under ``prefix``."""
        self.zw.add_tree(prefix, src)

    def save_model(self, recogniser, where: str = "model") -> None:
        """Save the recogniser to a temporary folder and add it to the archive as ``where/`` (``model/``, ...)."""
        tmp = Path(private_tempdir("classmap-model-"))  # a killed save's leftover goes at the next save
        try:
            recogniser.save(tmp / "model")
            self.zw.add_tree(where, tmp / "model")
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    def finish(self) -> None:
        """Nothing to do: the archive is completed and synced by its writer."""
        pass


class FolderSource:
    """Reads a project saved as a folder, refusing links and anything that leads out of it."""
    def __init__(self, root: Path):
        self.root = root

    def read(self, rel: str, max_bytes: int | None = None) -> bytes:
        """The bytes of the regular file ``rel``; OSError for a link, a FIFO or device, or a path
        that leads out of the project through a linked folder."""
        f = self.root / rel
        if f.is_symlink() or not inside(f, self.root):
            raise NotRegularFile(f"{rel} is a link (to outside the project?); refused")
        return read_regular(f, max_bytes=max_bytes, follow_links=False)

    def model_dir(self, tmp: Path, where: str = "model") -> Path:
        """The project's folder ``where`` (``model/``, ``runs/NNNN``), read in place (``tmp`` unused); refused
        when it, or a folder on the way, is a link."""
        parts = where.split("/")
        steps = [self.root.joinpath(*parts[:k]) for k in range(1, len(parts) + 1)]
        d = steps[-1]
        if any(p.is_symlink() for p in steps) or (d.exists() and not inside(d, self.root)):
            raise NotRegularFile(f"{where}/ is a link; refused")
        return d


class ZipSource:
    """Reads a project saved as a ``.cmproj`` archive through ``SafeArchive``."""
    def __init__(self, arc: SafeArchive):
        self.arc = arc

    def read(self, rel: str, max_bytes: int | None = None) -> bytes:
        """The bytes of the archive member ``rel``; FileNotFoundError when it is missing, ModelFormatError
        when it declares more than ``max_bytes`` (checked before reading)."""
        if not self.arc.has(rel):
            raise FileNotFoundError(f"{rel} is not in the archive")
        return self.arc.read(rel, max_bytes)

    def model_dir(self, tmp: Path, where: str = "model") -> Path:
        """Extract the archive's ``where/`` (``model/``, ``runs/NNNN``) into ``tmp`` and return that folder."""
        self.arc.extract(tmp, where)
        return tmp.joinpath(*where.split("/"))


def captures_in(folder: Path) -> Path | None:
    """A folder project's ``captures/`` when it is a real folder inside the project, else None; a link
    there (a save would follow it and copy files from elsewhere into the project) is refused."""
    captures = folder / "captures"
    if captures.is_symlink() or (captures.exists() and not inside(captures, folder)):
        raise ModelFormatError(f"{folder}: captures/ is a link (to outside the project?); refused. Replace it "
                               f"by a folder holding the captures")
    return captures if captures.is_dir() else None
