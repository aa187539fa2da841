"""No module reaches into another module's private names (``_name``).

A name with a leading underscore is private to the module that defines it: other modules use the
owner's public name. Flagged, in every module of the package (tests are outside it):

- ``from m import _name`` and ``import m._private`` / ``from m._private import x`` of another module;
- ``obj._name`` (or ``getattr(obj, "_name")``) read, written or called where ``obj`` is not ``self``, ``cls`` or ``super()``, and
  ``_name`` is not defined in the module itself (a class comparing ``other._key`` with its own
  ``self._key`` reads its own private name).

Dunder names are public protocol, and a few underscore names are public API of the standard library
(:data:`PUBLIC`).
"""
from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "classmap_gui"
#: underscore names that are public API: namedtuple's methods, PyInstaller's bundle folder, os._exit,
#: sys._current_frames (documented), scikit-learn's estimator protocol for declaring and checking parameters
PUBLIC = {"_replace", "_asdict", "_fields", "_make", "_field_defaults", "_MEIPASS", "_exit", "_current_frames",
          "_parameter_constraints", "_validate_params"}
#: ``{module: private modules it may import}``: scikit-learn's constraint classes, imported in one place
PRIVATE_IMPORTS = {"classmap_gui/core/guards/constraints.py": {"_param_validation"}}
#: built-ins that read or write an attribute named by a string
ATTR_CALLS = {"getattr", "setattr", "hasattr", "delattr"}


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__")) and name not in PUBLIC


def _defined(tree: ast.AST) -> set[str]:
    """Private names the module itself defines (functions, classes, variables, attributes it assigns)."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            out.add(node.id)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, (ast.Store, ast.Del)) \
                and isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"):
            out.add(node.attr)
    return {n for n in out if _private(n)}


def _own(value: ast.expr) -> bool:
    if isinstance(value, ast.Name):
        return value.id in ("self", "cls")
    return isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "super"


def violations(path: Path, root: Path = PACKAGE) -> list[str]:
    """``"file:line: name"`` for every access to another module's private name in ``path``."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    own = _defined(tree)
    where = path.relative_to(root.parent)
    out = []
    for node in ast.walk(tree):
        found = []
        if isinstance(node, ast.ImportFrom):
            found = [p for p in (node.module or "").split(".") if _private(p)
                     and p not in PRIVATE_IMPORTS.get(str(where), ())] + \
                [a.name for a in node.names if _private(a.name)]
        elif isinstance(node, ast.Import):
            found = [p for a in node.names for p in a.name.split(".") if _private(p)]
        elif isinstance(node, ast.Attribute) and _private(node.attr) and not _own(node.value) \
                and node.attr not in own:
            found = [f"{ast.unparse(node.value)}.{node.attr}"]
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ATTR_CALLS \
                and len(node.args) >= 2 and not _own(node.args[0]) and isinstance(node.args[1], ast.Constant) \
                and isinstance(node.args[1].value, str) and _private(node.args[1].value) \
                and node.args[1].value not in own:
            found = [f"{node.func.id}({ast.unparse(node.args[0])}, {node.args[1].value!r})"]
        out += [f"{where}:{node.lineno}: {name}" for name in found]
    return out


def test_no_module_reads_another_modules_private_names():
    found = [v for path in sorted(PACKAGE.rglob("*.py")) for v in violations(path)]
    assert not found, "access to another module's private names:\n" + "\n".join(found)


def test_the_check_sees_each_kind_of_access(tmp_path):
    src = tmp_path / "m.py"
    src.write_text("from .a import _x, y\nfrom ._k import f\nimport p._q\nimport os\n"
                   "class A:\n    def f(self, o):\n        self._own = o._other\n"
                   "        return o._own, self._y, super()._z, o.__len__, os._exit, o._replace(), getattr(o, '_h', 0)\n")
    assert sorted(line.split(": ", 1)[1] for line in violations(src, tmp_path)) == \
        ["_k", "_q", "_x", "getattr(o, '_h')", "o._other"]
