"""The pages a user reads (README.md and the manual, docs/*.md) read as a product's pages: no history in
them (commit hashes, times of day, issue numbers: docs/bench/LEDGER.md is the one place for those), no
scripts among them, and a README that stays a front page."""
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
COMMIT = re.compile(r"\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{7,40}\b")
TIME_OF_DAY = re.compile(r"\b\d{1,2}:\d{2}(?:[-–]\d{1,2}:\d{2})?\s*(?:UTC)?\b|\bUTC\b")
ISSUE = re.compile(r"\bissues?\s+#?\d+|\bthe issue\b", re.I)
HISTORY = re.compile(r"\b(?:previous|earlier|this) revision\b", re.I)


def test_docs_holds_the_manual_only_no_scripts():
    assert sorted(str(p.relative_to(ROOT)) for p in (ROOT / "docs").rglob("*.py")) == []


def test_no_history_in_a_user_page():
    found = []
    for page in PAGES:
        for n, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
            for what, rx in (("commit", COMMIT), ("time of day", TIME_OF_DAY), ("issue talk", ISSUE),
                             ("history", HISTORY)):
                found += [f"{page.name}:{n}: {what}: {m.group(0)!r}" for m in rx.finditer(line)]
    assert found == []


def test_no_line_a_reader_must_scroll_across():
    long = [f"{p.name}:{n}: {len(line)} characters" for p in PAGES
            for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
            if len(line) > 400 and not line.startswith(("|", "!["))]
    assert long == []


def test_the_readme_is_a_front_page():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert readme.startswith(
        "# ClassMap Studio\n\n```sh\n"
        "make run    # installs everything, then opens the app: the project you saved last (the built-in demo "
        "the first time)\n"
        "make test   # installs everything, then runs the whole test suite headless\n```\n")
    assert len(readme.splitlines()) <= 160
    prose = re.sub(r"<!-- results:.*?<!-- end of results -->", "", readme, flags=re.S)
    assert len(re.findall(r"\b[\w.-]+\.json\b", prose)) <= 2               # the table names its sources
    for name in ("Train a recogniser", "hand-pose demo", "Look inside the embedding", "Install it"):
        assert re.search(rf"^## .*{name}", readme, re.M | re.I), name
