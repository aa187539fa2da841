"""``classmap bench report``: the results page and the README's table are what the committed JSONs make."""
import json
import re
import shutil
from pathlib import Path

import pytest

from classmap_gui.bench import report
from classmap_gui.bench.figures import check
from classmap_gui.cli import main
from classmap_gui.core.errors import DataError

ROOT = Path(__file__).resolve().parents[2]


def test_the_committed_pages_regenerate_byte_identically_from_the_committed_json():
    pages = report.render(ROOT)
    assert set(pages) == {"README.md", "docs/results.md"}
    for path, text in pages.items():
        assert (ROOT / path).read_text(encoding="utf-8") == text, f"{path} is stale: run `classmap bench report`"


def test_every_generated_figure_cites_the_json_key_it_was_read_from():
    pages = report.render(ROOT)
    assert check(pages["docs/results.md"], ROOT) == {"wrong": [], "missing": [], "uncited": []}
    table = pages["README.md"].split(report.README_START)[1].split(report.README_END)[0]
    assert table.count("\n| ") == sum(r.readme for r in report.ROWS) + 2      # header, rule, one per row
    assert "scan.json` `scan.0.shape_accuracy`" in table


def _repo(tmp_path: Path) -> Path:
    (tmp_path / "docs" / "bench").mkdir(parents=True)
    (tmp_path / "docs" / "bench" / "x.json").write_text(json.dumps({"a": {"acc": 0.8732}, "runs": [{"s": 125.0}]}))
    (tmp_path / "README.md").write_text(f"# Top\n\n{report.README_START}\nold\n{report.README_END}\n\n"
                                        f"{report.COMMANDS_START}\n{report.COMMANDS_END}\ntail\n")
    return tmp_path


def test_a_row_is_one_line_and_a_listed_json_that_is_not_there_fails_naming_it(tmp_path, monkeypatch):
    root = _repo(tmp_path)
    monkeypatch.setattr(report, "ROWS", [report.Row("hand-pose", "Accuracy", "x.json", "a.acc", "{:.1%}", True)])
    monkeypatch.setattr(report, "COMMANDS", [report.Command("classmap bench x", "the x bench", "x.json", "runs.0.s")])
    out = report.run(root=str(root))
    assert out["written"] == ["docs/results.md", "README.md"]
    readme = (root / "README.md").read_text()
    assert "| Hand-pose demo: accuracy | 87.3% | `x.json` `a.acc` |" in readme and "old" not in readme
    assert "# the x bench: 2 min\n.venv/bin/classmap bench x\n" in readme and readme.endswith("tail\n")
    assert "| Accuracy | 87.3% | `x.json` `a.acc` |" in (root / "docs" / "results.md").read_text()
    assert report.run(root=str(root))["written"] == []                            # nothing changed: nothing written

    report.ROWS.append(report.Row("hand-pose", "Speed", "hand-network.json", "speedup", "{:.1f}×"))
    with pytest.raises(DataError, match=r"hand-network\.json is listed in the results \('Speed'\) but is not there"):
        report.run(root=str(root))
    report.ROWS[-1] = report.Row("hand-pose", "Speed", "x.json", "a.speed", "{:.1f}×")
    with pytest.raises(DataError, match=r"x\.json has no 'a\.speed'"):
        report.run(root=str(root))


def test_check_finds_a_hand_edited_figure_and_writes_nothing(tmp_path):
    root = tmp_path
    shutil.copytree(ROOT / "docs" / "bench", root / "docs" / "bench", ignore=shutil.ignore_patterns("*.md"))
    shutil.copy(ROOT / "docs" / "bench" / "LEDGER.md", root / "docs" / "bench")  # it says which figures are marked
    shutil.copy(ROOT / "README.md", root / "README.md")
    shutil.copy(ROOT / "docs" / "results.md", root / "docs" / "results.md")
    assert report.run(root=str(root), check=True)["checked"] == ["README.md", "docs/results.md"]
    page = root / "docs" / "results.md"
    shown = re.search(r"\b\d+\.\d%", page.read_text()).group(0)     # a figure the page shows now
    page.write_text(page.read_text().replace(shown, "31.0%"))
    with pytest.raises(DataError, match="docs/results.md differ"):
        report.run(root=str(root), check=True)
    assert "31.0%" in page.read_text()
    assert main(["bench", "report", "--root", str(root)]) == 0                      # the command puts it right
    assert "31.0%" not in page.read_text() and shown in page.read_text()


def test_report_outside_a_repository_says_what_to_do(tmp_path):
    with pytest.raises(DataError, match="has no docs/bench folder"):
        report.run(root=str(tmp_path))


def test_a_figure_whose_test_part_steered_a_choice_is_marked_in_the_readme():
    """README says its figures were measured on test parts no choice saw: every figure of a JSON whose ledger
    row says its test part steered a choice (Fashion-MNIST's official test set) carries the mark and the note
    saying so, and no other figure does."""
    from classmap_gui.bench.figures import steered_parts

    table = report.render(ROOT)["README.md"].split(report.README_START)[1].split(report.README_END)[0]
    rows = [line for line in table.splitlines() if line.startswith("| ") and "`" in line]
    steered = steered_parts(ROOT)
    assert "features.json" in steered
    for line in rows:
        cited = line.split("`")[1]
        assert (report.STEERED_MARK in line.split("|")[1]) == (cited in steered), line
    assert report.STEERED_NOTE in table
