"""PyInstaller runtime hook: settings the frozen app needs before any import.

numba's on-disk cache (``@njit(cache=True)``) must go to a folder the user can write;
the bundle itself lives under /opt and is read-only. The spec ships the package's .py
sources next to its bytecode so numba can locate the functions it caches.
"""
import os
import sys

if "NUMBA_CACHE_DIR" not in os.environ:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    os.environ["NUMBA_CACHE_DIR"] = os.path.join(base, "classmap-studio", "numba")
# Qt finds its plugins inside the bundle; a stray QT_PLUGIN_PATH from the host would mix versions.
os.environ.pop("QT_PLUGIN_PATH", None)
if getattr(sys, "frozen", False):
    os.environ.setdefault("CLASSMAP_FROZEN", "1")
