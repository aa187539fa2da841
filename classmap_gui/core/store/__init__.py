"""The saved-model and project format: JSON for structure, ``.npz`` (no pickles) for arrays.

* :mod:`.format` — bundle directories (``<name>.json`` + ``arrays.npz``), atomic writes, checks.
* :mod:`.serial` — estimators to/from JSON + arrays through the component registry.

A whole recogniser is saved by :meth:`classmap_gui.core.recogniser.Recogniser.save`.
The serial names are imported on first use: :mod:`.serial` reads the component registry, which
loads the numeric stack, and the CLI checks an output folder (:mod:`.format`) before paying that.
"""
from importlib import import_module

from .format import ARRAYS_FILE, array_manifest, load_bundle, save_bundle, write_file_atomic

_SERIAL = ("check_array", "dump_estimator", "load_estimator", "register", "register_class", "registered_class",
           "registered_name")

__all__ = ["ARRAYS_FILE", "array_manifest", "load_bundle", "save_bundle", "write_file_atomic", *_SERIAL]


def __getattr__(name: str):
    if name in _SERIAL:
        return getattr(import_module(".serial", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
