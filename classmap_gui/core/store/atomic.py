"""Atomic saves that a kill at any point cannot turn into a loss.

A save writes a complete hidden sibling (``.<name>.saving-<pid>-*``), fsyncs it, and swaps it in
with two renames under a lock on the parent folder; the replaced version waits as
``.<name>.old-<pid>-*`` until the new one is in place. :func:`recover_dir` restores the newest
complete leftover when a save died between the renames; :func:`remove_stale` cleans leftovers of
dead processes, at the next save and (:func:`tidy_after_open`) the next open. :func:`keep_foreign` carries files a save did not write into the new version,
so a save never deletes a user's file. :data:`FAULT_HOOK` lets tests fail at every step.
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


def remove_stale(path: Path, complete: bool) -> None:
    """Delete leftovers of saves to ``path`` whose process died: half-written ``.<name>.saving-<pid>-*``
    and, once ``path`` is ``complete`` again, previous versions ``.<name>.old-<pid>-*``."""
    kinds = "saving|old" if complete else "saving"
    if not path.parent.is_dir():
        return
    for p in path.parent.glob(f".{glob_escape(path.name)}.*"):
        m = re.match(rf"\.{re.escape(path.name)}\.(?:{kinds})-(\d+)-", p.name)
        if m and int(m.group(1)) != os.getpid() and not pid_alive(int(m.group(1))):
            try:
                shutil.rmtree(p) if p.is_dir() and not p.is_symlink() else p.unlink()
            except OSError:  # read-only or vanished: leave it, it harms nothing
                pass


def tidy_after_open(path: Path) -> None:
    """After ``path`` (a model or project, complete) was opened: delete the leftovers of saves to it whose
    process was killed (:func:`remove_stale`), so a kill during a save leaves nothing behind once the
    result is opened again. Never fails: a read-only folder keeps its leftovers, which harm nothing."""
    try:
        remove_stale(Path(path).absolute(), complete=True)
    except OSError:
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


def recover_dir(path: Path, is_complete: Callable[[Path], bool]) -> bool:
    """Restore ``path`` from the newest complete leftover of a save that died mid-swap.

    Used when ``path`` is missing: first a previous version ``.<name>.old-*`` (killed between the
    two renames), else a complete ``.<name>.saving-*`` of a dead process (killed just before the
    last rename of a first save). Returns True when something was restored.
    """
    if path.exists() or not path.parent.is_dir():
        return False
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
        return False
    found.sort(reverse=True)  # previous complete versions first, newest first
    try:
        with _dir_lock(path.parent):
            if path.exists():
                return False
            os.replace(found[0][2], path)
            fsync_dir(path.parent)
    except OSError:  # read-only: the caller reports the folder as missing
        return False
    return True


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
