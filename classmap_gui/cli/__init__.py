"""The ``classmap`` command: the same core as the app, headless.

Every failure a user can cause (bad input, a bad option, a damaged file, a full or read-only
disk) ends as one line ``classmap: error: ...`` on stderr and exit status 2; a bug ends as one
line saying it is an internal error and where its traceback was logged (exit status 70).

Modules by concern: :mod:`.common` (progress bar, ``--set`` parsing, output), :mod:`.bench`,
:mod:`.train` (``train``), :mod:`.model` (``eval``, ``predict``, ``add-class``, ``export``),
:mod:`.options` (option parsing and the early checks of options and output folders).
"""
from __future__ import annotations

import argparse
import errno
import faulthandler
import os
import sys

from ..core.errors import ClassMapError
from . import bench, hand_model, model, recover, train
from .common import ProgressBar, emit, parse_sets, parse_value

__all__ = ["ProgressBar", "build_parser", "emit", "main", "parse_sets", "parse_value"]

#: Exit status for a bug (sysexits' EX_SOFTWARE), distinct from 2 (the user's input).
EXIT_INTERNAL = 70


def cmd_datasets(args: argparse.Namespace) -> int:
    """``classmap datasets``: list the built-in data sets, whether each is installed here and how to get it."""
    from ..core.data import builtin_datasets

    rows = [{"name": d.name, "available": bool(d.available()), "description": d.description,
             "how_to_get": d.how_to_get} for d in builtin_datasets()]
    text = "\n".join(f"{r['name']:<18} {'yes' if r['available'] else 'no ':<4} {r['description']}"
                     + ("" if r["available"] else f"  (install: {r['how_to_get']})") for r in rows)
    emit(rows, args.json, f"{'name':<18} {'here':<4} description\n{text}")
    return 0


def build_parser(argv: list[str] | None = None) -> argparse.ArgumentParser:
    """The ``classmap`` parser. Given the ``argv`` it will parse, it imports the component
    registries and benchmark modules only when that command (or ``--help``) needs them, so a bad
    option or ``--out`` is refused before scikit-learn and numba are even loaded."""
    full = argv is None or any(a in ("-h", "--help") for a in argv) or not argv
    p = argparse.ArgumentParser(prog="classmap", description="Train and run many-class image recognisers.")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    s = sub.add_parser("datasets", help="list built-in data sets and whether each is available here")
    s.add_argument("--json", action="store_true")
    s.set_defaults(func=cmd_datasets)
    bench.add_commands(sub, load_options=full or "bench" in (argv or []))
    train.add_commands(sub, with_choices=full)
    model.add_commands(sub)
    hand_model.add_commands(sub)
    recover.add_commands(sub)
    return p


def _os_error_line(exc: OSError) -> str:
    """An OSError as a person reads it: what failed, on which file, and what to do for the usual ones."""
    where = f"{exc.filename}: " if exc.filename else ""
    what = exc.strerror or str(exc)
    hint = {errno.ENOSPC: " (the disk is full: free some space and try again)",
            errno.EROFS: " (the disk is read-only: choose another place)",
            errno.EACCES: " (permission denied: choose a place you may write to)",
            errno.EDQUOT: " (disk quota exceeded: free some space)"}.get(exc.errno, "")
    return f"{where}{what}{hint}"


def _log_internal_error(exc: BaseException) -> str:
    """Write the traceback of a bug to a log file; returns where it went.

    The user's log folder gets ``classmap-cli.log``, appended to but never through a link. When that
    folder cannot be written, a new private file in the temporary folder (``mkstemp``: a name no one
    could prepare, mode 0600) takes the traceback: a fixed name there could be another user's link.
    """
    import tempfile
    import time
    import traceback

    text = f"--- {time.strftime('%Y-%m-%d %H:%M:%S')} classmap {' '.join(sys.argv[1:])}\n" + \
        "".join(traceback.format_exception(exc))
    try:
        from platformdirs import user_log_dir

        folder = user_log_dir("classmap-studio", appauthor=False)
        os.makedirs(folder, exist_ok=True)
        path = os.path.join(folder, "classmap-cli.log")
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) |
                     getattr(os, "O_CLOEXEC", 0), 0o600)
    except Exception:  # noqa: BLE001 - platformdirs missing, no home, read-only, a link: use a private file
        try:
            fd, path = tempfile.mkstemp(prefix="classmap-cli-", suffix=".log")
        except OSError:
            return "(no log: nowhere writable)"
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
    except OSError:
        return "(no log: the log file could not be written)"
    return path


def main(argv: list[str] | None = None) -> int:
    """Run the ``classmap`` command with ``argv`` (default: ``sys.argv[1:]``); returns the exit status."""
    for stream in (sys.stdout, sys.stderr):  # file names that are not UTF-8 print as their bytes, not a crash
        try:
            stream.reconfigure(errors="surrogateescape")
        except (AttributeError, ValueError):  # pragma: no cover - a replaced stream (tests, pipes)
            pass
    if not faulthandler.is_enabled():  # a mapped model overwritten in place (SIGBUS) must not end silently
        try:
            faulthandler.enable()
        except (AttributeError, ValueError, OSError):  # pragma: no cover - stderr replaced by an object without a fd
            pass
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(argv)
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except ClassMapError as exc:
        print(f"classmap: error: {_one_line(str(exc))}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("classmap: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # `classmap predict ... | head`: the reader left; exit quietly like other Unix tools.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except OSError as exc:
        print(f"classmap: error: {_one_line(_os_error_line(exc))}", file=sys.stderr)
        return 2
    except MemoryError:
        print("classmap: error: out of memory; use smaller settings or data (fewer images, a smaller --size)",
              file=sys.stderr)
        return 2
    except Exception as exc:  # noqa: BLE001 - a bug: say so in one line, keep the traceback in a log
        log = _log_internal_error(exc)
        print(f"classmap: internal error ({type(exc).__name__}: {_one_line(str(exc))[:200]}); this is a bug, "
              f"please report it with the log in {log}", file=sys.stderr)
        return EXIT_INTERNAL


def _one_line(text: str) -> str:
    return " ".join(text.split())


if __name__ == "__main__":
    sys.exit(main())
