"""The figures of README.md and docs/ against the committed bench JSONs (``python -m classmap_gui.bench.figures``).

A speed-up, accuracy, rate or latency in the documentation must say where it comes from: right after
the figure, a citation `` (`docs/bench/NAME.json` `key.path`) `` naming a committed JSON and the key
that holds it (list items by index: ``results.0.speedup_single.median``). :func:`check` finds every
figure (a number followed by ``×``, ``%``, ``frames/s``, ``images/s`` or ``ms``), and reports

* ``wrong``: a cited figure that differs from the JSON's value (a fraction cited as a percentage is
  multiplied by 100; the comparison is at the figure's own decimals);
* ``missing``: a citation whose file or key does not exist;
* ``uncited``: a figure without a citation within the same sentence after it.

Paper figures (the published results the benches are compared with) and targets are written with the
word "paper" or "target" in the same sentence and are not checked: they are no measurement. ``docs/bench/LEDGER.md`` lists every committed JSON.
"""
from __future__ import annotations

import json
import re
import sys
from pathlib import Path

FIGURE = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)\s?(×(?!\s?\d)|x\b(?!\s?\d)|%|\s?(?:frames|images|queries|windows)/s|"
                    r"\s?fps\b|\s?ms\b|\s?µs\b)")
CITE = re.compile(r"`((?:docs/bench/)?[\w.-]+\.json)`\s+`([\w.\[\]-]+)`")
SENTENCE_END = re.compile(r"(?<=[.;:!?])\s|\n\n")


def _value(data, key: str):
    for part in key.split("."):
        if isinstance(data, list):
            data = data[int(part)]
        else:
            data = data[part]
    return data


def _matches(shown: str, value, unit: str) -> bool:
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return False
    decimals = len(shown.split(".")[1]) if "." in shown else 0
    candidates = [value, 100 * value] if unit.strip() == "%" else [value]
    return any(abs(round(v, decimals) - float(shown)) <= 0.5 * 10 ** -decimals + 1e-9 for v in candidates)


def check(text: str, root: Path) -> dict:
    """``{"wrong": [...], "missing": [...], "uncited": [...]}`` for one document's ``text``; JSON paths
    are relative to the repository ``root``."""
    out = {"wrong": [], "missing": [], "uncited": []}
    cache: dict = {}
    for m in FIGURE.finditer(text):
        end = SENTENCE_END.search(text, m.end())
        sentence_end = end.start() if end else len(text)
        start = max(text.rfind(". ", 0, m.start()), text.rfind("\n\n", 0, m.start()), 0)
        if any(w in text[start:sentence_end].lower() for w in ("paper", "target")):
            continue
        if m.group(1) == "1" and m.group(2) == "×":  # "1×": a playback speed setting, no ratio
            continue
        cite = CITE.search(text, m.end(), sentence_end)
        line = text.count("\n", 0, m.start()) + 1
        figure = f"line {line}: {' '.join(m.group(0).split())}"
        nxt = FIGURE.search(text, m.end(), sentence_end)
        if cite is None or (nxt is not None and nxt.start() < cite.start()):
            out["uncited"].append(figure)
            continue
        name, key = cite.groups()
        path = root / (name if name.startswith("docs/") else f"docs/bench/{name}")
        try:
            data = cache.setdefault(path, json.loads(path.read_text()))
            value = _value(data, key)
        except (OSError, ValueError, KeyError, IndexError, TypeError):
            out["missing"].append(f"{figure} ({name} {key})")
            continue
        if not _matches(m.group(1), value, m.group(2)):
            out["wrong"].append(f"{figure}: {name} {key} = {value}")
    return out


def main(argv: list[str] | None = None) -> int:
    """Check the given documents (default README.md and docs/*.md); exit status 1 if any figure fails."""
    root = Path(__file__).resolve().parents[2]
    files = [Path(a) for a in (argv or [])] or [root / "README.md", *sorted((root / "docs").glob("*.md"))]
    bad = 0
    for f in files:
        res = check(f.read_text(), root)
        for kind, items in res.items():
            for item in items:
                print(f"{f.name}: {kind}: {item}")
            bad += len(items)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
