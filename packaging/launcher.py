"""Entry point of the frozen (PyInstaller) ClassMap Studio bundle.

One executable serves both commands so the two share one copy of Qt, numpy and numba:
``classmap-studio cli ARGS`` runs ``classmap``, ``classmap-studio gui ARGS`` (or no
sub-command) runs ``classmap-gui``. The ``/usr/bin`` wrappers installed by the .deb and the
``bin/`` wrappers of the .tar.gz pick the sub-command.
"""
from __future__ import annotations

import sys


def main() -> int:
    args = sys.argv[1:]
    mode = "gui"
    if args and args[0] in ("cli", "gui"):
        mode = args.pop(0)
    if mode == "cli":
        sys.argv = ["classmap", *args]
        from classmap_gui.cli import main as cli_main

        return int(cli_main(args) or 0)
    sys.argv = ["classmap-gui", *args]
    from classmap_gui.gui.app import main as gui_main

    return int(gui_main() or 0)


if __name__ == "__main__":
    sys.exit(main())
