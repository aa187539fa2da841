"""The package's imports point one way, counting those made through importlib.

Every import counts, one inside a function too, and so does ``importlib.import_module("...")`` (or
``__import__``) with a literal target or an f-string's literal prefix (``f"classmap_gui.bench.{name}"``
may load any module of ``classmap_gui.bench``): a plug-in loaded by name is still an arrow. Layers are
``core``'s packages and root modules (``classmap_gui.core.train``) and the other top-level
packages and modules (``classmap_gui.cli``), as in ``../shared/tools/import_cycles.py``.
"""
from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "classmap_gui"


def _module(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _absolute(target: str, level: int, package: str) -> str:
    if not level:
        return target
    base = package.split(".")
    base = base[: len(base) - (level - 1)] if level > 1 else base
    return ".".join(base + ([target] if target else []))


def _importlib_targets(node: ast.Call, package: str) -> list[tuple[str, bool]]:
    """``(module, is_prefix)`` of an ``import_module``/``__import__`` call with a literal (prefix) argument."""
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    if name not in ("import_module", "__import__") or not node.args:
        return []
    arg = node.args[0]
    if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
        text, prefix = arg.value, False
    elif isinstance(arg, ast.JoinedStr) and arg.values and isinstance(arg.values[0], ast.Constant):
        text, prefix = arg.values[0].value, True
    else:
        return []
    level = len(text) - len(text.lstrip("."))
    mod = _absolute(text[level:].rstrip("."), level, package) if level else text.rstrip(".")
    return [(mod, prefix)]


def import_graph(root: Path = PACKAGE, source: dict[str, str] | None = None) -> dict[str, set[str]]:
    """``{module: modules it imports}`` among the package's own modules (``source`` overrides files' text)."""
    files = {_module(p): p for p in sorted(root.rglob("*.py"))}
    texts = {m: p.read_text(encoding="utf-8") for m, p in files.items()}
    texts.update(source or {})
    mods = set(texts)
    graph: dict[str, set[str]] = {}
    for me, text in texts.items():
        is_pkg = me in files and files[me].name == "__init__.py"
        package = me if is_pkg else me.rpartition(".")[0]
        out: set[str] = set()
        for node in ast.walk(ast.parse(text)):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                mod = _absolute(node.module or "", node.level, package)
                names = [mod] + [f"{mod}.{a.name}" for a in node.names]
            elif isinstance(node, ast.Call):
                for mod, prefix in _importlib_targets(node, package):
                    names.append(mod)
                    if prefix:  # any module the name may complete to
                        names += [m for m in mods if m.startswith(mod)]
            for n in names:
                while n and n not in mods:
                    n = n.rpartition(".")[0]
                if n and n != me and not me.startswith(n + "."):  # reaching one's own package is no cycle
                    out.add(n)
        graph[me] = out
    return graph


def _layer(mod: str) -> str:
    parts = mod.split(".")
    return ".".join(parts[:3] if parts[1:2] == ["core"] else parts[:2])


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one node (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph.get(start, ()))))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on.add(start)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph.get(w, ())))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return out


def layer_graph(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for v, ws in graph.items():
        for w in ws:
            lv, lw = _layer(v), _layer(w)
            if lv != lw and not lv.startswith(lw + "."):
                out.setdefault(lv, set()).add(lw)
    return out


def test_no_module_or_layer_cycle_even_through_importlib():
    graph = import_graph()
    assert cycles(graph) == []
    assert cycles(layer_graph(graph)) == []


def test_an_importlib_plugin_load_is_an_arrow():
    """A command that loads benches by name, and a bench that imports that command's package, is a cycle."""
    source = {"classmap_gui.cli.zz_loader": 'import importlib\n'
                                            'def load(n):\n    return importlib.import_module(f"classmap_gui.bench.{n}")\n',
              "classmap_gui.bench.zz_plugin": "from ..cli import zz_loader\n"}
    graph = import_graph(source=source)
    assert "classmap_gui.bench.zz_plugin" in graph["classmap_gui.cli.zz_loader"]
    assert ["classmap_gui.bench", "classmap_gui.cli"] in cycles(layer_graph(graph))
