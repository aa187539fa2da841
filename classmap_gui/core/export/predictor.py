"""The text of the exported ``predict.py``: :mod:`.predict_template` with the package's own numpy-only code pasted
in, so the exported predictor runs the app's code and cannot drift from it.

Where the template says ``# @inline <module>``, that module (:data:`INLINED`: the guards, the checks, ClassMap's
filter and refine); at ``# @settings-rules``, the app's rules for every component's settings (from the registry's
schemas); at ``# @feature-maps``, each exporting feature map's code, named by its class's ``exports``
(:func:`feature_code`), and predict.py's ``FEATURES`` and feature checks naming it. A feature map's code is either
functions of a numpy-only module, inlined whole after the package modules it imports (HOG, k-means, the random
CNN, the network, ...), or functions of the class's own module, pasted alone when every name they use is
predict.py's and the same object there (:func:`_pasted_functions`). So a feature map that exports is its module
plus its registry entry.
"""
from __future__ import annotations

import ast
import builtins
import importlib.util
import inspect
import symtable
import sys
import textwrap
from pathlib import Path

import cv2
import numpy as np

from .. import registry
from ..store import type_names

TEMPLATE = Path(__file__).with_name("predict_template.py")
#: modules of the package that predict.py runs verbatim, in this order (the template's ``# @inline`` lines); each
#: may import only numpy, OpenCV, the standard library modules of _STANDALONE_IMPORTS and modules pasted before it.
#: The feature maps' modules are not listed: each exporting class names its own (:func:`feature_code`)
INLINED = ("classmap_gui.core.guards.regular_files", "classmap_gui.core.guards.read_limits", "classmap_gui.core.guards.opencv_log",
           "classmap_gui.core.features.network_check",
           "classmap_gui.core.plain_text", "classmap_gui.core.store.bounded_zip",
           "classmap_gui.core.data.image_header", "classmap_gui.core.data.image_decode",
           "classmap_gui.core.export.checks", "classmap_gui.core.image_ops",
           "classmap_gui.core.classify.classmap.ops", "classmap_gui.core.classify.banks.ranking_ops")
_INLINE_MARK = "# @inline "
_RULES_MARK = "# @settings-rules"
_FEATURES_MARK = "# @feature-maps"
_STANDALONE_IMPORTS = {"__future__", "numpy", "cv2", "contextlib", "hashlib", "math", "os", "pathlib", "stat", "struct", "threading",
                       "unicodedata", "zipfile", "zlib"}
#: the settings of ClassMap's spec (:func:`_classmap_spec`; ClassMap is exported here, not by itself)
CLASSMAP_KEYS = ("p", "refine", "threshold")


def _exported(kinds: tuple[str, ...] = ("features", "bank")):
    """``(component, spec type, declaration)`` for every ``exports`` entry of the registry's classes, in order.

    A declaration is ``{"keys": the settings export_spec writes}``, and for a feature map also ``"features"``
    (``(images, spec, arrays, prefix) -> (n, D) float32``) and ``"check"`` (``(spec, arrays, prefix,
    n_classes)``, SettingError naming a value; it may give the feature maps the spec holds), module-level
    functions of one module: a numpy-only one predict.py inlines, or the class's own, whose two functions it
    pastes alone (:func:`_pasted_functions`). RuntimeError naming the class otherwise."""
    for kind in kinds:
        for comp in registry.components(kind):
            for spec_type, declared in getattr(comp.cls, "exports", {}).items():
                code = [declared.get(k) for k in ("features", "check")] if isinstance(declared, dict) else []
                if not isinstance(declared, dict) or not isinstance(declared.get("keys"), tuple) \
                        or set(declared) - {"keys", "features", "check"} or (kind == "features") != all(code) \
                        or len({getattr(f, "__module__", None) for f in code if f is not None}) > 1:
                    raise RuntimeError(f"{comp.cls.__name__}.exports[{spec_type!r}] must be {{'keys': (...)}}, a feature "
                                       f"map's with its 'features' and 'check' functions from one module")
                yield comp, spec_type, declared


def spec_tables() -> tuple[dict[str, str], dict[str, tuple[str, ...]]]:
    """``({spec type: saved type whose schema rules its settings}, {spec type: the settings it writes})``,
    from the registry: every feature map and bank whose class exports declares ``exports = {spec type:
    {"keys": ..., ...}}`` beside its ``export_spec``; the first component of a type gives the schema (the
    app's loader checks the settings by it). ClassMap's spec is this module's own."""
    schemas, keys = {"classmap": "classmap"}, {"classmap": CLASSMAP_KEYS}
    for comp, spec_type, declared in _exported():
        schemas.setdefault(spec_type, comp.name)
        keys.setdefault(spec_type, declared["keys"])
    return schemas, keys


def feature_code() -> dict[str, tuple]:
    """``{spec type: (features function, check function)}`` of every exporting feature map (the first class
    declaring a type gives it): predict.py inlines each one's module and names them in its tables."""
    out: dict[str, tuple] = {}
    for _, spec_type, declared in _exported(("features",)):
        out.setdefault(spec_type, (declared["features"], declared["check"]))
    return out


def _feature_maps(pasted: list[str]) -> str:
    """The feature maps' code (a module after the package modules it imports, where not pasted yet; or functions
    of a class's own module, alone), then predict.py's tables naming their functions."""
    code = feature_code()
    out: list[str] = []

    def paste(module: str, chain: tuple[str, ...]) -> None:
        if module in pasted:
            return
        if module in INLINED or module in chain:
            raise RuntimeError(f"{chain[-1] if chain else 'a feature map'} needs {module}, which predict.py "
                               f"has not pasted before the feature maps")
        for dep in _package_imports(module):
            paste(dep, (*chain, module))
        out.append(_module_body(module, pasted, inline_ok=True))
        pasted.append(module)

    alone = []
    for spec_type, (features, check) in code.items():
        if features.__module__ == _owner(spec_type).__module__:   # the class's own module: these functions only
            alone += [features, check]
        else:
            paste(features.__module__, ())
    if alone:
        out.append(_pasted_functions(alone, pasted))
    features = ", ".join(f"{t!r}: {f.__name__}" for t, (f, _) in code.items())
    checks = ", ".join(f"{t!r}: {c.__name__}" for t, (_, c) in code.items())
    out.append(f"#: each exporting feature map's code and check, named by its class's ``exports`` (at export)\n"
               f"FEATURES = {{{features}}}\n"
               f"COMPONENT_CHECKS[\"features\"] = {{{checks}}}\n")
    return "\n\n".join(out)


def _owner(spec_type: str) -> type:
    """The first feature map class that exports ``spec_type``."""
    return next(comp.cls for comp, t, _ in _exported(("features",)) if t == spec_type)


def _pasted_functions(functions: list, pasted: list[str]) -> str:
    """The source of each of ``functions`` (module-level functions of a feature map's own module), after checking
    that every global name they use is a builtin, numpy (``np``), OpenCV (``cv2``) or a name of a module pasted
    before, bound to the same object in their module as there; RuntimeError naming the function and name
    otherwise (then move the code to a numpy-only module the class names)."""
    defined = {"np": np, "cv2": cv2}
    for module in pasted:
        mod = sys.modules.get(module) or importlib.import_module(module)
        for node in ast.parse(Path(mod.__file__).read_text(encoding="utf-8")).body:
            names = [node.name] if isinstance(node, (ast.FunctionDef, ast.ClassDef)) else \
                [t.id for t in getattr(node, "targets", [getattr(node, "target", None)]) if isinstance(t, ast.Name)]
            defined.update({n: getattr(mod, n) for n in names if hasattr(mod, n)})
    out = []
    for fn in dict.fromkeys(functions):
        src = textwrap.dedent(inspect.getsource(fn))
        if fn.__qualname__ != fn.__name__ or not src.startswith("def "):
            raise RuntimeError(f"{fn.__qualname__}: predict.py pastes module-level functions only (no decorators)")
        home = sys.modules[fn.__module__]
        for name in sorted(_global_names(symtable.symtable(src, fn.__module__, "exec").get_children()[0])):
            if hasattr(builtins, name) and not hasattr(home, name):
                continue
            if name not in defined or getattr(home, name, None) is not defined[name]:
                raise RuntimeError(f"{fn.__module__}.{fn.__name__} uses {name!r}, which predict.py does not hold as "
                                   f"its module does: name its code in a numpy-only module (inlined whole) instead")
        out.append(f"# ---- {fn.__module__}.{fn.__name__}, the app's own code (pasted at export)\n{src}")
    return "\n\n".join(out)


def _global_names(table) -> set[str]:
    """The global names a function's symbol table (and its nested scopes: comprehensions, lambdas) reads."""
    names = set(table.get_globals()) if table.get_type() == "function" else set()
    for child in table.get_children():
        names |= _global_names(child)
    return names


def _package_imports(module: str) -> list[str]:
    """The package modules ``module`` imports relatively (those predict.py must paste before it)."""
    tree = ast.parse(Path(importlib.util.find_spec(module).origin).read_text(encoding="utf-8"))
    package = module.split(".")
    return [".".join(package[:-node.level] + ([node.module] if node.module else []))
            for node in tree.body if isinstance(node, ast.ImportFrom) and node.level]


def predict_source() -> str:
    """The text of ``predict.py``: the template with every ``# @inline <module>`` line replaced by
    that module's code (its docstring and imports dropped: the template imports numpy and cv2), and its
    ``# @feature-maps`` line by the feature maps' modules and tables (:func:`feature_code`).

    Raises RuntimeError when a marked module is not in :data:`INLINED` or imports anything beyond
    numpy and OpenCV — predict.py must run without this package.
    """
    out, pasted = [], []
    for line in TEMPLATE.read_text(encoding="utf-8").splitlines(keepends=True):
        if line.startswith(_INLINE_MARK):
            module = line[len(_INLINE_MARK):].strip()
            out.append(_module_body(module, pasted))
            pasted.append(module)
        elif line.startswith(_FEATURES_MARK):
            out.append(_feature_maps(pasted))
        elif line.startswith(_RULES_MARK):
            out.append(f"#: the app's rules for each component's settings (from its registry schemas, at export)\n"
                       f"SETTINGS_RULES = {settings_rules()!r}\n"
                       f"#: the settings each component's export writes (its class's ``exports``, at export)\n"
                       f"SPEC_KEYS = {spec_tables()[1]!r}\n")
        else:
            out.append(line)
    return "".join(out)


def settings_rules() -> dict[str, dict[str, dict]]:
    """``{spec type: {setting: rule}}``: for every saved component type, its parameters' schema as the
    app's loader checks them (:func:`~classmap_gui.core.store.saved_values.saved_schema`), as plain data
    for :func:`~classmap_gui.core.guards.read_limits.check_setting` (worker counts and image sizes left out:
    predict.py has no workers, and a size is checked as an image size)."""
    from ..store.saved_values import saved_schema

    out: dict[str, dict[str, dict]] = {}
    for spec_type, saved in spec_tables()[0].items():
        cls = type_names.saved_type(saved)
        if cls is None:
            raise RuntimeError(f"export spec {spec_type!r} is ruled by {saved!r}, which is not a saved type")
        rules = {}
        for name, param in saved_schema(cls).items():
            if param.per_core or param.image_size:
                continue
            rules[name] = {"kind": param.kind.__name__, "low": param.low, "high": param.high,
                           "choices": list(param.choices or ()) + (["auto"] if param.auto else []),
                           "nullable": bool(param.nullable or param.default is None)}
        out[spec_type] = rules
    return out


def inlined_modules() -> list[str]:
    """Every package module predict.py holds: :data:`INLINED` and the feature maps' (with what they import)."""
    pasted = list(INLINED)
    _feature_maps(pasted)
    return pasted


def _module_body(module: str, pasted: list[str], inline_ok: bool = False) -> str:
    if module not in INLINED and not inline_ok:
        raise RuntimeError(f"export template inlines {module}, which is not listed in export.INLINED")
    spec = importlib.util.find_spec(module)
    path = Path(spec.origin)
    text = path.read_text(encoding="utf-8")
    tree = ast.parse(text)
    lines = text.splitlines(keepends=True)
    drop: set[int] = set()
    for i, node in enumerate(tree.body):
        is_doc = i == 0 and isinstance(node, ast.Expr) and isinstance(getattr(node, "value", None), ast.Constant)
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            if node.__class__ is ast.ImportFrom and node.level:  # another inlined module, pasted before this one
                package = module.split(".")[:-node.level]
                names = [".".join(package + ([node.module] if node.module else []))]
                bad = [n for n in names if n not in pasted]
            else:
                bad = [n for n in names if n.split(".")[0] not in _STANDALONE_IMPORTS]
            if bad:
                raise RuntimeError(f"{module} imports {', '.join(bad)}: predict.py may only use numpy, OpenCV and "
                                   f"the modules inlined before it")
        elif not is_doc:
            continue
        drop.update(range(node.lineno - 1, node.end_lineno))
    for node in ast.walk(tree):  # imports inside functions would escape the check above
        if isinstance(node, (ast.Import, ast.ImportFrom)) and node not in tree.body:
            raise RuntimeError(f"{module} imports inside a function: predict.py may only use numpy and OpenCV")
    body = "".join(line for i, line in enumerate(lines) if i not in drop).strip("\n")
    rel = "/".join(module.split("."))
    return f"# ---- {rel}.py, the app's own code (inlined at export; do not edit here)\n{body}\n# ---- end of {rel}.py\n"
