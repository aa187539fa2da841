"""README's and docs' figures against the committed bench JSONs (classmap_gui/bench/figures.py)."""
import json
from pathlib import Path

from classmap_gui.bench.figures import check

ROOT = Path(__file__).resolve().parents[2]


def test_a_figure_must_match_the_json_key_it_cites(tmp_path):
    (tmp_path / "docs" / "bench").mkdir(parents=True)
    (tmp_path / "docs" / "bench" / "x.json").write_text(json.dumps({"a": {"acc": 0.8732, "speed": [4.26]}}))
    text = ("It scores 87.3% (`docs/bench/x.json` `a.acc`) at 4.3× (`x.json` `a.speed.0`).\n\n"
            "It scores 87.9% (`x.json` `a.acc`), 2.0× (`x.json` `a.nothing`) and 5× without a source.\n\n"
            "The paper reports 95.3% on its photographs.")
    res = check(text, tmp_path)
    assert res["wrong"] == ["line 3: 87.9%: x.json a.acc = 0.8732"]
    assert res["missing"] == ["line 3: 2.0× (x.json a.nothing)"]
    assert res["uncited"] == ["line 3: 5×"]                       # the paper's figure is not the bench's


def test_readme_figures_all_come_from_committed_jsons():
    assert check((ROOT / "README.md").read_text(), ROOT) == {"wrong": [], "missing": [], "uncited": []}


def test_every_citation_in_docs_holds():
    for doc in sorted((ROOT / "docs").glob("*.md")):
        res = check(doc.read_text(), ROOT)
        assert res["wrong"] == [] and res["missing"] == [], doc.name
