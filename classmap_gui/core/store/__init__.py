"""The saved-model format: JSON for structure, ``.npz`` (no pickles) for arrays; the atomic swaps projects reuse.

* :mod:`.format` — bundle directories (``<name>.json`` + ``arrays.npz``), atomic writes, checks.
* :mod:`.serial` — estimators to/from JSON + arrays through the component registry.

A whole recogniser is saved by :meth:`classmap_gui.core.recogniser.Recogniser.save`. Importing the
store loads no numeric stack (the registry imports component classes on first use), so the CLI
checks an output folder (:mod:`.format`) before paying for scikit-learn and numba.
"""
from .format import ARRAYS_FILE, array_manifest, load_bundle, save_bundle, write_file_atomic
from .serial import (check_array, dump_estimator, load_estimator, register, register_class, registered_class,
                     registered_name)

__all__ = ["ARRAYS_FILE", "array_manifest", "check_array", "dump_estimator", "load_bundle", "load_estimator",
           "register", "register_class", "registered_class", "registered_name", "save_bundle", "write_file_atomic"]
