"""The figures of README.md and docs/ against the committed bench JSONs (``python -m classmap_gui.bench.figures``).

Every speed-up, accuracy, rate or latency in the documentation must say where it comes from: right after
the figure, a citation `` (`docs/bench/NAME.json` `key.path`) `` naming a committed JSON and the key
that holds it (list items by index: ``results.0.speedup_single.median``). No word exempts a figure: a
paper's published figure cites ``docs/reference/published.json`` (each with its paper and section), a target
cites ``docs/reference/targets.json`` (each with the issue that set it), a measurement cites its bench's JSON;
a number that is none of these (a setting) is written without a figure's unit. :func:`check` finds every
figure (a number followed by ``×`` or ``x``, ``%``, ``frames/s``, ``images/s``, ``queries/s``, ``windows/s``,
``fps``, ``ms`` or ``µs``), and reports

* ``wrong``: a cited figure that differs from the JSON's value (a fraction cited as a percentage is
  multiplied by 100; the comparison is at the figure's own decimals);
* ``missing``: a citation whose file or key does not exist;
* ``uncited``: a figure without a citation within the same sentence after it.

A figure in a table row may instead be covered by a citation in the paragraph just above the table
(its caption) naming a part of a JSON (``classmap``, a list of points): the figure must then equal some
number in that part, at its own decimals.

``docs/bench/LEDGER.md`` lists every committed JSON; :func:`check_ledger` holds each JSON to its row: the
revision the JSON recorded and every ``test_seed`` it keeps (at the top, under ``options``, ``real``, ...: any
depth) must be the ones the row names, and the command in the row's bench column must be the run the JSON
records (its ``options`` or ``command``), so a JSON re-run, or run with other options, without its ledger line
fails. A row whose test part had already steered a choice says :data:`STEERED`; :func:`steered_parts` lists
those JSONs, whose figures the results mark (they are no figures of an unseen test part).
"""
from __future__ import annotations

import json
import re
import shlex
import sys
from pathlib import Path

FIGURE = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)\s?(×(?!\s?\d)|x\b(?!\s?\d)|%|\s?(?:frames|images|queries|windows)/s|"
                    r"\s?fps\b|\s?ms\b|\s?µs\b)")
CITE = re.compile(r"`((?:docs/(?:bench|reference)/)?[\w.-]+\.json)`\s+`([\w.\[\]-]+)`")
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


def _numbers(data) -> list:
    if isinstance(data, dict):
        return [v for x in data.values() for v in _numbers(x)]
    if isinstance(data, list):
        return [v for x in data for v in _numbers(x)]
    return [data] if isinstance(data, (int, float)) and not isinstance(data, bool) else []


def _cited(name: str, key: str, root: Path, cache: dict):
    """The value at ``key`` of the committed JSON ``name``; LookupError when the file or key does not exist."""
    path = root / (name if name.startswith("docs/") else f"docs/bench/{name}")
    try:
        return _value(cache.setdefault(path, json.loads(path.read_text())), key)
    except (OSError, ValueError, KeyError, IndexError, TypeError) as exc:
        raise LookupError(f"{name} {key}") from exc


def _table_caption_check(text: str, m: re.Match, root: Path, cache: dict) -> str | None:
    """For a figure in a table row: ``None`` when the table's caption (the paragraph just above it)
    cites nothing, else ``"ok"``, ``"missing"`` or ``"wrong"`` (the figure is no number of the cited part)."""
    line_start = text.rfind("\n", 0, m.start()) + 1
    if not text.startswith("|", line_start):
        return None
    lines = text[:line_start].split("\n")[:-1]
    while lines and lines[-1].startswith("|"):
        lines.pop()
    while lines and not lines[-1].strip():
        lines.pop()
    caption = []
    while lines and lines[-1].strip():
        caption.insert(0, lines.pop())
    cite = CITE.search("\n".join(caption))
    if cite is None:
        return None
    try:
        values = _numbers(_cited(*cite.groups(), root, cache))
    except LookupError:
        return "missing"
    return "ok" if any(_matches(m.group(1), v, m.group(2)) for v in values) else "wrong"


def check(text: str, root: Path) -> dict:
    """``{"wrong": [...], "missing": [...], "uncited": [...]}`` for one document's ``text``; JSON paths
    are relative to the repository ``root``."""
    out = {"wrong": [], "missing": [], "uncited": []}
    cache: dict = {}
    for m in FIGURE.finditer(text):
        end = SENTENCE_END.search(text, m.end())
        sentence_end = end.start() if end else len(text)
        cite = CITE.search(text, m.end(), sentence_end)
        line = text.count("\n", 0, m.start()) + 1
        figure = f"line {line}: {' '.join(m.group(0).split())}"
        nxt = FIGURE.search(text, m.end(), sentence_end)
        if cite is None or (nxt is not None and nxt.start() < cite.start()):
            kind = _table_caption_check(text, m, root, cache)
            if kind is not None:
                if kind != "ok":
                    out[kind].append(figure)
                continue
            out["uncited"].append(figure)
            continue
        name, key = cite.groups()
        try:
            value = _cited(name, key, root, cache)
        except LookupError:
            out["missing"].append(f"{figure} ({name} {key})")
            continue
        if not _matches(m.group(1), value, m.group(2)):
            out["wrong"].append(f"{figure}: {name} {key} = {value}")
    return out


LEDGER_ROW = re.compile(r"^\| `([\w.-]+\.json)` \|(.*)$", re.M)
REVISION = re.compile(r"(?:^|\()([0-9a-f]{7,40})\b")
COMMAND = re.compile(r"`([^`]*(?:\bclassmap bench [\w-]+|\.py\b)[^`]*)`")
CLI_OWN = ("json", "out")  # flags of `classmap bench` itself that change no result: nothing in a JSON holds them


def parse_command(command: str) -> tuple[str, dict]:
    """``(program, flags)`` of a command line: the program is ``classmap bench NAME`` or a script's file name
    (wherever the script lived then); the flags are its ``--name value`` and ``--set name=value`` pairs (a
    flag without a value: ``True``; names with ``_``), values read as the CLI reads them, and its positional
    words under ``"args"``. Words before the program (``nice -n 10``, ``PYTHONPATH=.``) are not the run's."""
    from ..settings_text import parse_value  # the CLI's own reading, so a value compares as the run read it

    words = shlex.split(command)
    for i, word in enumerate(words):
        if words[i:i + 2] == ["classmap", "bench"] and i + 2 < len(words):
            program, rest = f"classmap bench {words[i + 2]}", words[i + 3:]
            break
        if word.endswith(".py"):
            program, rest = Path(word).name, words[i + 1:]
            break
    else:
        return "", {}
    flags: dict = {}
    i = 0
    while i < len(rest):
        word, has_value = rest[i], i + 1 < len(rest) and not rest[i + 1].startswith("--")
        if not word.startswith("--"):
            flags.setdefault("args", []).append(parse_value(word))
            i += 1
            continue
        value = rest[i + 1] if has_value else "true"
        i += 2 if has_value else 1
        if word == "--set":
            word, _, value = f"--{value}".partition("=")
        flags[word[2:].replace("-", "_")] = parse_value(value)
    return program, flags


def _command_errors(name: str, data: dict, bench_column: str) -> list[str]:
    """How the command the ledger's bench column names differs from the run the JSON records: a JSON's
    ``command`` must be the same program with the same flags and words; with ``options``, every flag given
    must be the option's recorded value, ``--quiet-machine`` given exactly when the JSON has ``quiet_machine``,
    and ``classmap bench NAME`` the bench the JSON names (``bench``/``benchmark``, where it has one)."""
    options, recorded = data.get("options"), data.get("command")
    if not isinstance(options, dict) and not isinstance(recorded, str):
        return []
    cited = COMMAND.search(bench_column)
    if cited is None:
        return [f"{name}: the JSON records its {'command' if isinstance(recorded, str) else 'options'}; the ledger's bench column "
                "names no command (`classmap bench NAME ...` or `script.py ...`)"]
    program, flags = parse_command(cited.group(1))
    if isinstance(recorded, str):
        run = parse_command(recorded)
        if (program, flags) == run:
            return []
        return [f"{name}: the ledger's command `{cited.group(1)}` is not the JSON's `{recorded}`"]
    bad = []
    bench = str(data.get("bench", data.get("benchmark", ""))).split(" ")[0]
    if bench and program.startswith("classmap bench ") and program.split()[-1] != bench:
        bad.append(f"{name}: the ledger's command runs {program}; the JSON is of bench {bench}")
    if ("quiet_machine" in flags) != ("quiet_machine" in data):
        bad.append(f"{name}: the ledger's command {'has' if 'quiet_machine' in flags else 'lacks'} --quiet-machine; "
                   f"the JSON {'has no' if 'quiet_machine' in flags else 'has a'} quiet_machine")
    for key, value in flags.items():
        if key in CLI_OWN or key == "quiet_machine":
            continue
        if key not in options:
            bad.append(f"{name}: the ledger's command gives --{key.replace('_', '-')}, an option the JSON does not record")
        elif options[key] != value:
            bad.append(f"{name}: the ledger's command gives --{key.replace('_', '-')} {value}; "
                       f"the JSON's options say {options[key]!r}")
    return bad


def recorded_test_seeds(data) -> list[int]:
    """Every integer ``test_seed`` of a parsed JSON, wherever it is kept (the top, ``options``, ``real``, any
    depth), each once, in the order found."""
    found: list[int] = []
    stack = [data]
    while stack:
        node = stack.pop(0)
        if isinstance(node, dict):
            seed = node.get("test_seed")
            if isinstance(seed, int) and not isinstance(seed, bool) and seed not in found:
                found.append(seed)
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return found


#: the words a ledger row's columns hold when its test part had already steered a choice before the run
STEERED = "**test part steered**"


def steered_parts(root: Path) -> set[str]:
    """The JSONs whose ledger row says :data:`STEERED` (none when there is no ledger)."""
    ledger = root / "docs" / "bench" / "LEDGER.md"
    if not ledger.is_file():
        return set()
    return {m.group(1) for m in LEDGER_ROW.finditer(ledger.read_text()) if STEERED in m.group(2)}


def check_ledger(root: Path) -> list[str]:
    """What is wrong between ``docs/bench/*.json`` and ``docs/bench/LEDGER.md``'s rows (one line each): a JSON
    without a row or a row without a JSON; a row whose revision column does not name the commit the JSON
    recorded (``revision``: ``"0.1.0 (abc1234 ...)"`` or ``"abc1234"``); a row that does not name the JSON's
    test seeds (:func:`recorded_test_seeds`); a row whose command is not the JSON's run (:func:`_command_errors`)."""
    bench = root / "docs" / "bench"
    rows = {m.group(1): m.group(2).split(" | ") for m in LEDGER_ROW.finditer((bench / "LEDGER.md").read_text())}
    files = {f.name: f for f in bench.glob("*.json")}
    bad = [f"{name}: no ledger row" for name in sorted(set(files) - set(rows))]
    bad += [f"{name}: a ledger row without a JSON" for name in sorted(set(rows) - set(files))]
    for name in sorted(set(files) & set(rows)):
        data = json.loads(files[name].read_text())
        cols = rows[name]
        rev = REVISION.search(str(data.get("revision", ""))) if isinstance(data, dict) else None
        if rev and (len(cols) < 3 or rev.group(1)[:7] not in cols[2]):
            bad.append(f"{name}: the ledger's revision column does not name {rev.group(1)[:7]} (the JSON's revision)")
        for seed in recorded_test_seeds(data):
            if len(cols) < 2 or not re.search(rf"(?<!\d){seed}(?!\d)", cols[1]):
                bad.append(f"{name}: the ledger's test part column does not name test_seed {seed}")
        if isinstance(data, dict):
            bad += _command_errors(name, data, cols[0])
    return bad


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
    if not argv:
        for item in check_ledger(root):
            print(f"LEDGER.md: {item}")
            bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
