"""PyInstaller runtime hook: environment the frozen app needs before any import.

numba's on-disk cache (``@njit(cache=True)``) cannot live next to the sources under the
read-only /opt; numba then falls back to the user's cache folder (``~/.cache/numba``, checked
on the installed package) and stamps entries with the executable, so an upgrade invalidates
them. That fallback needs the source file of each cached function to exist, which is why the
spec ships the package's .py files.
"""
import os
import sys

# Qt finds its plugins inside the bundle; a stray QT_PLUGIN_PATH from the host would mix versions.
os.environ.pop("QT_PLUGIN_PATH", None)
if getattr(sys, "frozen", False):
    os.environ.setdefault("CLASSMAP_FROZEN", "1")
