"""``classmap recover PATH``: put back a model or project folder whose save was interrupted.

A save swaps a complete new version in with two renames; killed between them it leaves the folder
missing and the complete version beside it as ``.<name>.old-<pid>-*`` (or ``.<name>.saving-<pid>-*``).
Opening, ``predict`` and ``eval`` read that version where it lies and change nothing on disk; the next
save, or this command, renames it back into place (a rename: nothing is deleted).
"""
from __future__ import annotations

import argparse
from pathlib import Path

from ..core.errors import ConfigError
from .common import Subcommands

#: the description file a complete model (``model.json``) or project folder (``project.json``) holds
_DESCRIPTIONS = ("model.json", "project.json")


def add_commands(sub: Subcommands) -> None:
    """Register ``classmap recover``."""
    s = sub.add_parser("recover", help="put back a model or project folder whose save was interrupted",
                       description=__doc__.split("\n\n")[1])
    s.add_argument("path", help="the model or project folder that is missing after an interrupted save")
    s.set_defaults(func=cmd_recover)


def cmd_recover(args: argparse.Namespace) -> int:
    """Rename the newest complete leftover of an interrupted save of ``args.path`` into place."""
    from ..core.store.atomic import find_leftover, recover_dir

    path = Path(args.path).expanduser().absolute()
    if path.exists() or path.is_symlink():
        print(f"{path} is in place: nothing to recover")
        return 0

    def complete(p: Path) -> bool:
        return any((p / name).is_file() and not (p / name).is_symlink() for name in _DESCRIPTIONS)

    leftover = find_leftover(path, complete)
    if leftover is None:
        raise ConfigError(f"{path}: missing, and no complete version an interrupted save left beside it "
                          f"(.{path.name}.old-* or .{path.name}.saving-*)")
    if recover_dir(path, complete) is None:
        raise ConfigError(f"{path}: could not rename {leftover.name} back into place (is the folder read-only?)")
    print(f"restored {path} from {leftover.name}")
    return 0
