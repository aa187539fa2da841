"""``classmap bench report``: the results page and the README's results table, written from the committed
bench JSONs (``docs/bench/*.json``), so no figure in them is typed by hand.

What is reported is data: :data:`ROWS`, one line per figure (section, label, JSON file, key path, format),
and :data:`SECTIONS`, one sentence per section. Adding a figure is adding a row; a row whose JSON or key is
not there stops the report with the file and key named, so a listed bench that has not been run yet is
noticed, not skipped. Each row's source (file and key) is printed beside its figure, in the form
:mod:`.figures` checks, so the test that the committed pages regenerate byte-identically and the figures
checker cover the same numbers.
"""
from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Callable, NamedTuple

from ..core.errors import DataError

#: the README lines between which the table is written (kept; everything between is replaced)
README_START = "<!-- results: written by `classmap bench report` from docs/bench/*.json; do not edit -->"
README_END = "<!-- end of results -->"
COMMANDS_START = "<!-- commands: written by `classmap bench report` from docs/bench/*.json; do not edit -->"
COMMANDS_END = "<!-- end of commands -->"
RESULTS_PAGE = "docs/results.md"
#: the mark of a figure whose JSON's test part had already steered a choice (the ledger says so), and its note
STEERED_MARK = "†"
STEERED_NOTE = ("† Measured on a test part that had already steered a choice (the ledger's \"test part steered\"): "
                "no figure of an unseen test part.")


def minutes(seconds: float) -> str:
    """A run time for a person: ``"58 min"`` (``"1.7 h"`` from two hours on)."""
    return f"{seconds / 3600:.1f} h" if seconds >= 7200 else f"{seconds / 60:.0f} min"


def thousands(n: float) -> str:
    """A count with a thin space between thousands: ``"100 035"``."""
    return f"{int(n):,}".replace(",", "\u202f")


class Row(NamedTuple):
    """One figure: where it is shown (``section``; ``readme`` also puts it in the README's table), what it is
    (``label``), where it comes from (``file`` in docs/bench, dotted ``key``, list items by index) and how it
    is written (``fmt``: a ``str.format`` pattern such as ``"{:.1%}"``, or a function of the value)."""

    section: str
    label: str
    file: str
    key: str
    fmt: str | Callable[[float], str]
    readme: bool = False


#: section -> (its heading on the results page, the sentence under it)
SECTIONS = {
    "hand-pose": ("The hand-pose demo", "The hand-pose model of *Show your hand* on five fresh test videos of a hand "
                  "in clutter, 320 × 240: HOG and the hand detector find the hand, the network reads the "
                  "detector's best windows and the voted box (`classmap bench scan`)."),
    "hand-reader": ("The hand reader", "The hand model's trained network under ClassMap on fresh test crops of all "
                    "2430 hand classes: the varied style it was trained in, and the camera style it never saw "
                    "(`classmap bench hand-network`)."),
    "classmap": ("2430 classes", "ClassMap against brute force (every classifier, one matrix product) on 2430 "
                 "classes: 81 hand shapes × 30 orientations, HOG features, ridge one-vs-all (`classmap bench "
                 "classmap`)."),
    "scale": ("10^5 classes", "The filter index at many classes (`classmap bench scale`): 100 035 real hand-pose "
              "classes end to end, and 10 000 synthetic ones."),
    "features": ("Features and capture bursts", "Single-layer k-means features on Fashion-MNIST's official test set "
                 "(`classmap bench features`), and digits recorded as capture bursts (`classmap bench bursts`)."),
}

#: every figure of the results page; ``readme=True`` rows also make the README's table
ROWS: list[Row] = [
    Row("hand-pose", "Hand shape named right, ClassMap", "scan.json", "scan.0.shape_accuracy", "{:.1%}", True),
    Row("hand-pose", "Hand shape named right, brute force", "scan.json", "scan.1.shape_accuracy", "{:.1%}"),
    Row("hand-pose", "Box on the hand, ClassMap", "scan.json", "scan.0.localisation", "{:.1%}"),
    Row("hand-pose", "Box on the hand, brute force", "scan.json", "scan.1.localisation", "{:.1%}"),
    Row("hand-pose", "Frame rate, ClassMap", "scan.json", "scan.0.frames_per_second", "{:.1f} frames/s", True),
    Row("hand-pose", "Frame rate, brute force", "scan.json", "scan.1.frames_per_second", "{:.1f} frames/s"),
    Row("hand-pose", "ClassMap's speed over brute force (median of rounds)", "scan.json",
        "speedup_rounds.320x240.wall.median", "{:.2f}×", True),
    Row("hand-pose", "Run time of the bench", "scan.json", "seconds", minutes),
    Row("hand-reader", "Shape named right, varied style, ClassMap", "hand-network.json",
        "crops.varied.classmap.shape_accuracy", "{:.1%}", True),
    Row("hand-reader", "Shape named right, varied style, brute force", "hand-network.json",
        "crops.varied.brute_force.shape_accuracy", "{:.1%}"),
    Row("hand-reader", "Exact class, varied style, ClassMap", "hand-network.json",
        "crops.varied.classmap.class_accuracy", "{:.1%}"),
    Row("hand-reader", "Exact class, varied style, brute force", "hand-network.json",
        "crops.varied.brute_force.class_accuracy", "{:.1%}"),
    Row("hand-reader", "Shape named right, camera style (never trained on), ClassMap", "hand-network.json",
        "crops.camera.classmap.shape_accuracy", "{:.1%}", True),
    Row("hand-reader", "Shape named right, camera style, brute force", "hand-network.json",
        "crops.camera.brute_force.shape_accuracy", "{:.1%}"),
    Row("hand-reader", "Exact class, camera style, ClassMap", "hand-network.json",
        "crops.camera.classmap.class_accuracy", "{:.1%}"),
    Row("hand-reader", "Fewer classifier evaluations per crop", "hand-network.json", "evaluations.ratio", "{:.1f}×"),
    Row("hand-reader", "Fewer multiply-adds per crop in the bank", "hand-network.json", "operations.ratio",
        "{:.1f}×"),
    Row("hand-reader", "Network file (MB)", "hand-network.json", "network.bytes", lambda b: f"{b / 1e6:.1f}"),
    Row("hand-reader", "Network training time (one GPU; the crops rendered by 14 CPU processes)", "hand-network.json", "network.training_seconds", minutes),
    Row("classmap", "Test accuracy, ClassMap", "classmap-hand-pose.json", "selected.accuracy", "{:.1%}", True),
    Row("classmap", "Test accuracy, brute force", "classmap-hand-pose.json", "brute_force.accuracy", "{:.1%}", True),
    Row("classmap", "Fewer classifier evaluations per image", "classmap-hand-pose.json",
        "summary.evaluations_ratio", "{:.1f}×"),
    Row("classmap", "Speed over brute force, one image at a time (median)", "classmap-hand-pose.json",
        "summary.latency_speedup.single.median", "{:.2f}×", True),
    Row("classmap", "Speed over brute force, in batches (median)", "classmap-hand-pose.json",
        "summary.latency_speedup.batch.median", "{:.2f}×"),
    Row("classmap", "Latency per image, ClassMap", "classmap-hand-pose.json", "selected.latency_single_ms",
        "{:.3f} ms"),
    Row("classmap", "Latency per image, brute force", "classmap-hand-pose.json", "brute_force.latency_single_ms",
        "{:.3f} ms"),
    Row("classmap", "Run time of the bench", "classmap-hand-pose.json", "seconds", minutes),
    Row("classmap", "Glyph-pose (2430 classes): test accuracy, ClassMap", "classmap.json", "selected.accuracy",
        "{:.1%}"),
    Row("classmap", "Glyph-pose: speed over brute force, one image at a time", "classmap.json",
        "summary.latency_speedup.single.median", "{:.2f}×"),
    Row("classmap", "Glyph-pose: run time of the bench", "classmap.json", "seconds", minutes),
    Row("scale", "Classes", "scale-hand-pose.json", "real.classes", thousands),
    Row("scale", "Test accuracy, ClassMap", "scale-hand-pose.json", "real.classmap.accuracy", "{:.1%}", True),
    Row("scale", "Test accuracy, brute force", "scale-hand-pose.json", "real.brute_force.accuracy", "{:.1%}"),
    Row("scale", "Speed over brute force, one image at a time (median)", "scale-hand-pose.json",
        "real.latency_speedup.single.median", "{:.1f}×", True),
    Row("scale", "Speed over brute force, in batches (median)", "scale-hand-pose.json",
        "real.latency_speedup.batch.median", "{:.1f}×"),
    Row("scale", "Peak memory (GB)", "scale-hand-pose.json", "real.peak_memory_gb", "{:.1f}"),
    Row("scale", "Run time of the bench", "scale-hand-pose.json", "real.seconds.total", minutes),
    Row("scale", "10 000 synthetic classes: index over the fastest flat search (median)", "scale.json",
        "results.0.speedup_single.median", "{:.2f}×"),
    Row("features", "Test accuracy, k-means features", "features.json", "accuracy", "{:.2%}", True),
    Row("features", "Run time of the bench", "features.json", "seconds_total", minutes),
    Row("features", "Bursts: a random split reports", "bursts.json", "mean.random.reported", "{:.1%}"),
    Row("features", "Bursts: the same model on new bursts", "bursts.json", "mean.random.new_bursts", "{:.1%}"),
    Row("features", "Bursts: the burst-grouped split reports", "bursts.json", "mean.grouped.reported", "{:.1%}"),
    Row("features", "Bursts: that model on new bursts", "bursts.json", "mean.grouped.new_bursts", "{:.1%}"),
]

class Command(NamedTuple):
    """A long command of the README with how long it took, read from the JSON of its last run."""

    command: str
    what: str
    file: str
    key: str


#: the README's long commands, each with the run time its JSON recorded on the 2-core machine
COMMANDS: list[Command] = [
    Command("classmap hand-model", "build the hand-pose model of Show your hand, once", "scan.json",
            "model.seconds.total"),
    Command("classmap bench scan", "find the hand in five test videos, ClassMap vs brute force (on the hand model the app built)", "scan.json",
            "seconds"),
    Command("classmap bench classmap", "ClassMap vs brute force vs a faiss index, 2430 classes",
            "classmap-hand-pose.json", "seconds"),
    Command("classmap bench features", "single-layer k-means features on Fashion-MNIST", "features.json",
            "seconds_total"),
    Command("classmap bench compressive", "compressive classification (the paper's Table 1)", "compressive.json",
            "total_seconds"),
    Command("classmap bench scale --data hand-pose --set orientations=1235", "100 035 classes, images cached",
            "scale-hand-pose.json", "real.seconds.total"),
]

README_CAPTION = {"hand-pose": "Hand-pose demo", "hand-reader": "Hand reader (test crops)", "classmap": "2430 classes", "scale": "10^5 classes",
                  "features": "Fashion-MNIST"}


def value(data: object, key: str):
    """The value at dotted ``key`` of parsed JSON ``data`` (list items by index); KeyError when absent."""
    for part in key.split("."):
        if isinstance(data, list):
            if not part.isdigit() or int(part) >= len(data):
                raise KeyError(part)
            data = data[int(part)]
        elif isinstance(data, dict):
            data = data[part]
        else:
            raise KeyError(part)
    return data


def _number(root: Path, file: str, key: str, label: str, loaded: dict) -> float:
    """The number at ``key`` of docs/bench/``file``; DataError naming the file, the key and the ``label`` using it."""
    path = root / "docs" / "bench" / file
    if file not in loaded:
        if not path.is_file():
            raise DataError(f"{path} is listed in the results ({label!r}) but is not there: run the bench that "
                            f"writes it with --out {path}, or take its rows out of bench/report.py")
        loaded[file] = json.loads(path.read_text())
    try:
        v = value(loaded[file], key)
    except KeyError:
        raise DataError(f"{path} has no {key!r} (the results' {label!r}): the bench's JSON changed shape; fix "
                        "the key in bench/report.py") from None
    if not isinstance(v, (int, float)) or isinstance(v, bool):
        raise DataError(f"{path} {key!r} is {v!r}, not a number (the results' {label!r})")
    return v


def figures(root: Path, rows: list[Row] | None = None) -> list[tuple[Row, str]]:
    """Each row (default :data:`ROWS`) with its figure written out; DataError naming the file and key of the
    first one missing."""
    loaded: dict = {}
    out = []
    for row in ROWS if rows is None else rows:
        v = _number(root, row.file, row.key, row.label, loaded)
        out.append((row, row.fmt(v) if callable(row.fmt) else row.fmt.format(v)))
    return out


def commands_block(root: Path, commands: list[Command] | None = None) -> str:
    """The README's block of long commands (default :data:`COMMANDS`), each with its recorded run time."""
    loaded: dict = {}
    lines = ["```sh"]
    for c in COMMANDS if commands is None else commands:
        lines += [f"# {c.what}: {minutes(_number(root, c.file, c.key, c.command, loaded))}", f".venv/bin/{c.command}"]
    return "\n".join([*lines, "```"]) + "\n"


def _cite(row: Row) -> str:
    return f"`{row.file}` `{row.key}`"


def _is_marked(row: Row, steered: set[str]) -> bool:
    """A figure of a JSON in ``steered`` measured on its test part (a run time is none)."""
    return row.file in steered and row.fmt is not minutes


def _marked(label: str, row: Row, steered: set[str]) -> str:
    return f"{label} {STEERED_MARK}" if _is_marked(row, steered) else label


def _note(rows: list[Row], steered: set[str]) -> list[str]:
    """The lines under a table: :data:`STEERED_NOTE` when one of its ``rows`` is marked."""
    return ["", STEERED_NOTE] if any(_is_marked(r, steered) for r in rows) else []


def readme_table(done: list[tuple[Row, str]], steered: set[str] = frozenset()) -> str:
    """The README's table: the ``readme`` rows, a column naming each figure's JSON and key; a figure of a JSON
    in ``steered`` (:func:`.figures.steered_parts`) is marked and the note says why."""
    lines = ["| | Result | Source (docs/bench/) |", "| --- | --- | --- |"]
    for row, shown in done:
        if row.readme:
            first = row.label.split()[0]
            label = first[0].lower() + row.label[1:] if first[1:].islower() else row.label   # not "classMap"
            lines.append(f"| {README_CAPTION[row.section]}: {_marked(label, row, steered)} | {shown} | "
                         f"{_cite(row)} |")
    return "\n".join(lines + _note([r for r, _ in done if r.readme], steered)) + "\n"


def results_page(done: list[tuple[Row, str]], steered: set[str] = frozenset()) -> str:
    """docs/results.md: every row, by section, under the section's sentence (figures marked as in
    :func:`readme_table`)."""
    out = ["# Results", "",
           "Every figure on this page is written by `classmap bench report` from the committed bench JSON named",
           "beside it (in `docs/bench/`); the test part of each, and why it was chosen, is in the",
           "[ledger](bench/LEDGER.md). Rates and times are of a shared 2-core machine; each JSON records the",
           "load average it ran at.", ""]
    for section, (heading, sentence) in SECTIONS.items():
        rows = [(r, s) for r, s in done if r.section == section]
        if not rows:
            continue
        out += [f"## {heading}", "", *textwrap.wrap(sentence, 110), "", "| | Result | Source |",
                "| --- | --- | --- |"]
        out += [f"| {_marked(r.label, r, steered)} | {s} | {_cite(r)} |" for r, s in rows]
        out += [*_note([r for r, _ in rows], steered), ""]
    return "\n".join(out)


def with_block(readme: str, start: str, end: str, text: str) -> str:
    """``readme`` with the lines between the marker lines ``start`` and ``end`` replaced by ``text``."""
    if readme.count(start + "\n") != 1 or readme.count(end) != 1 or readme.index(start) > readme.index(end):
        raise DataError(f"README.md must hold the line {start!r} once and, below it, {end!r} once")
    head, rest = readme.split(start + "\n", 1)
    _, tail = rest.split(end, 1)
    return f"{head}{start}\n{text}{end}{tail}"


def render(root: Path) -> dict[str, str]:
    """``{relative path: text}`` of the results page and the README as the committed JSONs make them."""
    from .figures import steered_parts

    done, steered = figures(root), steered_parts(root)
    readme = (root / "README.md").read_text(encoding="utf-8")
    readme = with_block(readme, README_START, README_END, readme_table(done, steered))
    readme = with_block(readme, COMMANDS_START, COMMANDS_END, commands_block(root))
    return {RESULTS_PAGE: results_page(done, steered), "README.md": readme}


OPTIONS = {"root": (".", "the repository folder (README.md and docs/ are written there)"),
           "check": (False, "write nothing; exit with an error if a page differs from what the JSONs make")}


def run(*, root: str = ".", check: bool = False, progress=None, should_stop=None) -> dict:
    """Write (or with ``check``, compare) the pages; the paths written and the figures' count."""
    base = Path(root).resolve()
    if not (base / "docs" / "bench").is_dir():
        raise DataError(f"{base} has no docs/bench folder: run `classmap bench report` in the repository, or pass "
                        "--root REPOSITORY")
    pages = render(base)
    stale = [p for p, text in pages.items()
             if not (base / p).is_file() or (base / p).read_text(encoding="utf-8") != text]
    if check:
        if stale:
            raise DataError(f"{', '.join(stale)} differ from what docs/bench/*.json make: run `classmap bench report`")
        return {"bench": "report", "checked": sorted(pages), "figures": len(figures(base))}
    for p in stale:
        (base / p).write_text(pages[p], encoding="utf-8")
    return {"bench": "report", "written": stale, "unchanged": sorted(set(pages) - set(stale)),
            "figures": len(figures(base))}
