"""Atomic saves that a kill at any point cannot turn into a loss.

A save writes a complete hidden sibling (``.<name>.saving-<pid>-*``), fsyncs it, and swaps it in
with two renames under a lock on the parent folder; the replaced version waits as
``.<name>.old-<pid>-*`` until the new one is in place. Reads never change the disk: a read of a
path whose save died between the renames reads the newest complete leftover where it lies
(:func:`find_leftover`). Only the next save puts it back (:func:`recover_dir`, a rename) and cleans
the leftovers of dead processes (:func:`remove_stale`), and only those that hold nothing but what a
save writes (:func:`written_by_save`): a folder someone else put there under such a name is never
deleted. :func:`keep_foreign` carries files a save did not write into the new version, so a save
never deletes a user's file. :data:`FAULT_HOOK` lets tests fail at every step.
"""
from __future__ import annotations

import contextlib
import os
import re
import shutil
import stat
import tempfile
import time
from pathlib import Path
from typing import Callable

from ..errors import ConfigError

#: Test hook: called with the name of each step of a save that a kill could interrupt
#: (``"fsync-file"``, ``"fsync-tmp"``, ``"rename-old"``, ``"rename-new"``, ``"fsync-parent"``,
#: ``"remove-old"``). The fault-injection tests arm it to end the process at that point.
FAULT_HOOK: Callable[[str], None] | None = None


def fault_point(name: str) -> None:
    """Give :data:`FAULT_HOOK` the chance to fail at step ``name`` of a save."""
    if FAULT_HOOK is not None:
        FAULT_HOOK(name)


def fsync_dir(path: Path) -> None:
    """Fsync the directory ``path`` so a rename or new entry in it survives a crash; a no-op where unsupported."""
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


def fsync_file(fh) -> None:
    """Flush and fsync an open file (a save's durability point)."""
    fh.flush()
    fault_point("fsync-file")
    os.fsync(fh.fileno())


@contextlib.contextmanager
def _dir_lock(folder: Path):
    """An exclusive lock on ``folder`` while a save swaps one of its entries: two saves to one path
    finish one after the other (the later one wins, whole) instead of failing half-way."""
    try:
        fd = os.open(str(folder), os.O_RDONLY)
    except OSError:  # pragma: no cover
        yield
        return
    try:
        try:
            import fcntl

            fcntl.flock(fd, fcntl.LOCK_EX)
        except (ImportError, OSError):  # pragma: no cover - no flock here: saves are not serialised
            pass
        yield
    finally:
        os.close(fd)


def saving_prefix(path: Path) -> str:
    """Name prefix of the hidden folder a save of ``path`` writes into (pid: stale ones are found)."""
    return f".{path.name}.saving-{os.getpid()}-"


def keep_foreign(path: Path, tmp: Path, ours: Callable[[str], bool]) -> list[str]:
    """Hard-link (or copy) into ``tmp`` every entry of the folder ``path`` that ``ours(name)`` does not
    claim, so a save keeps files it did not write; returns their names. Done before the swap, so a
    kill at any point leaves the files in the folder at ``path`` (old or new)."""
    kept = []
    if not path.is_dir():
        return kept
    for entry in sorted(path.iterdir()):
        if ours(entry.name) or (tmp / entry.name).exists():
            continue
        if entry.is_symlink():
            os.symlink(os.readlink(entry), tmp / entry.name)
        elif entry.is_dir():
            copy_tree(entry, tmp / entry.name, keep_links=True)
        elif entry.is_file():
            try:
                os.link(entry, tmp / entry.name)
            except OSError:
                shutil.copy2(entry, tmp / entry.name)
        else:  # a FIFO or socket a user left there: cannot be carried, and is not ours to delete
            raise ConfigError(f"{path} holds {entry.name!r}, which is neither a file nor a folder; a save there "
                              f"would lose it. Move it away or choose another folder")
        kept.append(entry.name)
    return kept


def swap_dir(tmp: Path, path: Path, before_removing_old: Callable[[Path], None] | None = None, *,
             ours: Callable[[str], bool] | None = None) -> list[str]:
    """Replace the folder ``path`` by the complete folder ``tmp`` with two renames, fsynced.

    A reader sees the old folder or the new one, never a mix; a process killed between the two
    renames leaves the old one as ``.<name>.old-<pid>-*``, which :func:`recover_dir` restores.
    ``ours(name)``: entries of ``path`` the save writes; every other entry is carried into ``tmp``
    first (:func:`keep_foreign`), under the same lock as the renames, so a save running at the same
    time cannot move the folder away while its entries are listed. ``before_removing_old(old)``
    may take what it needs from the replaced folder before it is deleted. Saves to one path are
    serialised by a lock on the parent folder. Returns the names of the entries carried over.
    """
    fault_point("fsync-tmp")
    fsync_dir(tmp)
    old = None
    kept: list[str] = []
    with _dir_lock(path.parent):
        if ours is not None:
            kept = keep_foreign(path, tmp, ours)
            fsync_dir(tmp)
        if path.exists():
            old = path.parent / f".{path.name}.old-{os.getpid()}-{time.monotonic_ns()}"
            fault_point("rename-old")
            os.replace(path, old)
        fault_point("rename-new")
        os.replace(tmp, path)
        fault_point("fsync-parent")
        fsync_dir(path.parent)
    if old is not None:
        if before_removing_old is not None:
            before_removing_old(old)
        fault_point("remove-old")
        shutil.rmtree(old, ignore_errors=True)
    return kept


def pid_alive(pid: int) -> bool:
    """Whether a process ``pid`` exists (a leftover named after a dead one is stale)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return True
    return True


def written_by_save(leftover: Path, ours: Callable[[str], bool]) -> bool:
    """Whether deleting the leftover ``leftover`` of a save loses nothing a save did not write.

    True for a regular file ending ``.tmp`` that is empty or a zip (an archive save's temporary file),
    and for a folder whose every file is either one a save writes (``ours(relative path)``, ``/``
    separated) or a hard link with another name elsewhere (a user's file a save carried across:
    its data stays in the other version). A link, a FIFO, or any other file makes it False.
    """
    try:
        st = os.lstat(leftover)
        if stat.S_ISREG(st.st_mode):
            if not leftover.name.endswith(".tmp"):
                return False
            with open(leftover, "rb") as fh:
                head = fh.read(2)
            return head in (b"", b"PK")
        if not stat.S_ISDIR(st.st_mode):
            return False
        for d, dirs, names in os.walk(leftover):
            rel = Path(d).relative_to(leftover)
            if any((Path(d) / n).is_symlink() for n in dirs):
                return False
            for n in names:
                f = os.lstat(Path(d) / n)
                if not stat.S_ISREG(f.st_mode) or (f.st_nlink < 2 and not ours((rel / n).as_posix())):
                    return False
    except OSError:
        return False
    return True


def remove_stale(path: Path, complete: bool, ours: Callable[[str], bool]) -> None:
    """At a save of ``path``: delete leftovers of earlier saves to it whose process died — half-written
    ``.<name>.saving-<pid>-*`` and, once ``path`` is ``complete`` again, previous versions
    ``.<name>.old-<pid>-*`` — but only those :func:`written_by_save` says hold nothing else
    (``ours``: the relative paths a save writes). Anything else under such a name stays."""
    kinds = "saving|old" if complete else "saving"
    if not path.parent.is_dir():
        return
    for p in path.parent.glob(f".{glob_escape(path.name)}.*"):
        m = re.match(rf"\.{re.escape(path.name)}\.(?:{kinds})-(\d+)-", p.name)
        if m and int(m.group(1)) != os.getpid() and not pid_alive(int(m.group(1))) and written_by_save(p, ours):
            try:
                shutil.rmtree(p) if p.is_dir() and not p.is_symlink() else p.unlink()
            except OSError:  # read-only or vanished: leave it, it harms nothing
                pass


def private_tempdir(prefix: str) -> str:
    """A new private folder ``<tmp>/<prefix><pid>-*``, after deleting the ones of this user's dead
    processes (a save killed while it held one): named with the pid, so no live process's folder
    and no other user's is ever touched."""
    base = tempfile.gettempdir()
    uid = os.getuid() if hasattr(os, "getuid") else None
    try:
        entries = os.listdir(base)
    except OSError:
        entries = []
    for name in entries:
        m = re.fullmatch(rf"{re.escape(prefix)}(\d+)-[^/]+", name)
        if not m or int(m.group(1)) == os.getpid() or pid_alive(int(m.group(1))):
            continue
        p = os.path.join(base, name)
        try:
            st = os.lstat(p)
            if stat.S_ISDIR(st.st_mode) and (uid is None or st.st_uid == uid):
                shutil.rmtree(p)
        except OSError:  # vanished, or not ours to remove: harmless
            pass
    return tempfile.mkdtemp(prefix=f"{prefix}{os.getpid()}-", dir=base)


def glob_escape(name: str) -> str:
    """``name`` with glob wildcards (``*?[``) bracketed, so it matches only itself in a glob pattern."""
    return re.sub(r"([*?\[])", r"[\1]", name)


def find_leftover(path: Path, is_complete: Callable[[Path], bool]) -> Path | None:
    """The newest complete leftover of a save of the missing ``path`` that died mid-swap, or None.

    First a previous version ``.<name>.old-*`` (killed between the two renames), else a complete
    ``.<name>.saving-*`` of a dead process (killed just before the last rename of a first save).
    Changes nothing on disk: a read opens what this returns where it lies.
    """
    if path.exists() or path.is_symlink() or not path.parent.is_dir():
        return None
    pat = re.compile(rf"\.{re.escape(path.name)}\.(old|saving)-(\d+)-")
    found = []
    for p in path.parent.glob(f".{glob_escape(path.name)}.*"):
        m = pat.match(p.name)
        if not m or p.is_symlink() or not p.is_dir() or not is_complete(p):
            continue
        if m.group(1) == "saving" and (int(m.group(2)) == os.getpid() or pid_alive(int(m.group(2)))):
            continue
        found.append((m.group(1) == "old", p.stat().st_mtime, p))
    if not found:
        return None
    found.sort(reverse=True)  # previous complete versions first, newest first
    return found[0][2]


def recover_dir(path: Path, is_complete: Callable[[Path], bool]) -> Path | None:
    """At a save of ``path``: put the leftover :func:`find_leftover` finds back at the missing ``path``
    (one rename; nothing is deleted), so the save carries the files kept in it. Returns the folder
    that was restored (its former name), or None."""
    leftover = find_leftover(path, is_complete)
    if leftover is None:
        return None
    try:
        with _dir_lock(path.parent):
            if path.exists():
                return None
            os.replace(leftover, path)
            fsync_dir(path.parent)
    except OSError:  # read-only: the save that follows reports it
        return None
    return leftover


def write_file_atomic(path: str | Path, data: bytes) -> None:
    """Write ``data`` to ``path`` via a temporary file in the same folder, fsync, rename."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=str(path.parent))
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fsync_file(fh)
        fault_point("rename-new")
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    fsync_dir(path.parent)


def copy_tree(src: Path, dst: Path, *, keep_links: bool = False) -> None:
    """Copy regular files under ``src`` to ``dst`` (hard links when possible: captures never change).

    Links are skipped (never followed out of ``src``; ``src`` itself being a link copies nothing), or
    re-created as links with ``keep_links`` (carrying a user's folder into a new save without reading
    what its links point at).
    """
    if src.is_symlink():
        if keep_links:
            os.symlink(os.readlink(src), dst)
        return
    for d, dirs, names in os.walk(src):
        rel = Path(d).relative_to(src)
        (dst / rel).mkdir(parents=True, exist_ok=True)
        for n in names + [x for x in dirs if (Path(d) / x).is_symlink()]:
            f = Path(d) / n
            if f.is_symlink():
                if keep_links:
                    os.symlink(os.readlink(f), dst / rel / n)
                continue
            if not f.is_file() or (n.endswith(".tmp") and not keep_links):
                continue
            try:
                os.link(f, dst / rel / n)
            except OSError:
                shutil.copy2(f, dst / rel / n)
