"""README's and docs' figures against the committed bench JSONs (classmap_gui/bench/figures.py)."""
import json
import re
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
    assert res["uncited"] == ["line 3: 5×", "line 5: 95.3%"]      # "paper" exempts nothing: it cites published.json


def test_every_way_of_writing_a_speed_up_or_an_accuracy_is_a_figure(tmp_path):
    text = ("Faster by 4.2x, 3×, 12.5 ms, 30 µs and 64.1 frames/s, 900 images/s, 20 fps; 87 % right.\n\n"
            "Not figures: 64x64 pixels, 2430 × 1764 weights, 81 shapes, a video at real time or ½×.\n\n"
            "A 1× playback is written as a figure, so it is one.")
    res = check(text, tmp_path)
    assert res["uncited"] == ["line 1: 4.2x", "line 1: 3×", "line 1: 12.5 ms", "line 1: 30 µs",
                              "line 1: 64.1 frames/s", "line 1: 900 images/s", "line 1: 20 fps", "line 1: 87 %",
                              "line 5: 1×"]


def test_a_table_may_cite_the_part_of_a_json_its_rows_come_from(tmp_path):
    (tmp_path / "docs" / "bench").mkdir(parents=True)
    (tmp_path / "docs" / "bench" / "x.json").write_text(json.dumps({"curve": [{"p": 5, "acc": 0.8937},
                                                                          {"p": 10, "acc": 0.8975}]}))
    text = ("The test curve (`x.json` `curve`):\n\n| p | accuracy |\n| --- | --- |\n| 5 | 89.37% |\n"
            "| 10 | 89.99% |\n\nNo caption here.\n\n| p | accuracy |\n| --- | --- |\n| 5 | 89.37% |\n\nBut 4.1× is.")
    res = check(text, tmp_path)
    assert res == {"wrong": ["line 6: 89.99%"], "missing": [], "uncited": ["line 12: 89.37%", "line 14: 4.1×"]}


def _references(root):
    (root / "docs" / "reference").mkdir(parents=True)
    (root / "docs" / "reference" / "published.json").write_text(json.dumps(
        {"paper_a": {"paper": "A. Author, A paper, 2007", "hands_real_percent": {"value": 22.5, "where": "Section 7.3"}}}))
    (root / "docs" / "reference" / "targets.json").write_text(json.dumps(
        {"scan": {"issue": 15, "at_least_frames_per_second": 15, "at_least_speedup": 3},
         "features": {"issue": 2, "at_least_percent": 91.5}}))


def test_a_paper_figure_is_checked_like_a_measured_one(tmp_path):
    _references(tmp_path)
    cited = "The paper reports 22.5 % (`docs/reference/published.json` `paper_a.hands_real_percent.value`) on real photos."
    assert check(cited, tmp_path) == {"wrong": [], "missing": [], "uncited": []}
    res = check("The paper reports 95.3 % on its synthetic hands.\n\n"
                "The paper's real photos: 23.5 % (`docs/reference/published.json` `paper_a.hands_real_percent.value`).", tmp_path)
    assert res == {"wrong": ["line 3: 23.5 %: docs/reference/published.json paper_a.hands_real_percent.value = 22.5"],
                   "missing": [], "uncited": ["line 1: 95.3 %"]}


def test_a_target_or_a_bound_is_checked_like_a_measured_figure(tmp_path):
    _references(tmp_path)
    cited = ("Issue 15 asks at least 15 frames/s (`docs/reference/targets.json` `scan.at_least_frames_per_second`) and "
             "≥ 3× (`docs/reference/targets.json` `scan.at_least_speedup`); above the 91.5% target (`docs/reference/targets.json` "
             "`features.at_least_percent`).")
    assert check(cited, tmp_path) == {"wrong": [], "missing": [], "uncited": []}
    res = check("A bound: at least 15 frames/s, ≥ 3× and at most 5 ms.\n\nAbove the 91.5% target.\n\n"
                "The target (>= 10x single-query) is met.\n\n"
                "The 90% target (`docs/reference/targets.json` `features.at_least_percent`).", tmp_path)
    assert res == {"wrong": ["line 7: 90%: docs/reference/targets.json features.at_least_percent = 91.5"], "missing": [],
                   "uncited": ["line 1: 15 frames/s", "line 1: 3×", "line 1: 5 ms", "line 3: 91.5%", "line 5: 10x"]}


def test_readme_figures_all_come_from_committed_jsons():
    assert check((ROOT / "README.md").read_text(), ROOT) == {"wrong": [], "missing": [], "uncited": []}


def test_every_figure_in_docs_cites_a_committed_json_that_holds_it():
    for doc in sorted((ROOT / "docs").glob("*.md")):
        assert check(doc.read_text(), ROOT) == {"wrong": [], "missing": [], "uncited": []}, doc.name


def test_the_ledger_lists_every_committed_bench_json_and_nothing_else():
    ledger = (ROOT / "docs" / "bench" / "LEDGER.md").read_text()
    rows = set(re.findall(r"^\| `([\w.-]+\.json)`", ledger, re.M))
    assert rows == {f.name for f in (ROOT / "docs" / "bench").glob("*.json")}


def test_each_json_is_the_run_its_ledger_row_names(tmp_path):
    from classmap_gui.bench.figures import check_ledger

    assert check_ledger(ROOT) == []
    bench = tmp_path / "docs" / "bench"
    bench.mkdir(parents=True)
    (bench / "a.json").write_text('{"revision": "0.1.0 (abc1234 + uncommitted changes)", "test_seed": 7501}')
    (bench / "b.json").write_text('{"revision": "0.1.0 (def5678)", "test_seed": 36507}')
    (bench / "LEDGER.md").write_text(
        "| JSON | bench | test part | revision | seen | status |\n| --- | --- | --- | --- | --- | --- |\n"
        "| `a.json` | scan | videos 7501-7505 | abc1234 | 0 | in use |\n"
        "| `b.json` | a re-run nobody wrote down | seed 36505 | 28e1e1c | 0 | in use |\n"
        "| `c.json` | gone | seed 1 | 1111111 | 0 | in use |\n")
    assert check_ledger(tmp_path) == [
        "c.json: a ledger row without a JSON",
        "b.json: the ledger's revision column does not name def5678 (the JSON's revision)",
        "b.json: the ledger's test part column does not name test_seed 36507"]


def test_a_ledger_row_must_name_the_run_its_json_records(tmp_path):
    from classmap_gui.bench.figures import check_ledger

    bench = tmp_path / "docs" / "bench"
    bench.mkdir(parents=True)
    options = {"data": "hand-pose", "test_seed": 6, "latency_rounds": 9, "recheck_seeds": "1,2,3,4,5", "mips": True}
    for name in ("ok", "value", "unknown", "quiet", "none", "bench"):
        (bench / f"{name}.json").write_text(json.dumps({"benchmark": "scale", "options": options, "test_seed": 6}))
    (bench / "script.json").write_text(json.dumps({"command": "PYTHONPATH=. python docs/curve.py --ipc 32,64 --lda"}))
    (bench / "moved.json").write_text(json.dumps({"command": "PYTHONPATH=. python docs/curve.py --ipc 32,64 --lda"}))
    head = "| JSON | bench | test part | revision | seen | status |\n| --- | --- | --- | --- | --- | --- |\n"
    run = "classmap bench scale --data hand-pose --set test_seed=6 --set recheck_seeds=1,2,3,4,5 --mips true"
    (bench / "LEDGER.md").write_text(head + "".join(f"| `{name}.json` | scale (`{command}`) | seed 6 | - | 0 | in use |\n" for name, command in [
        ("ok", f"nice -n 10 {run} --out x.json"),
        ("value", run.replace("test_seed=6", "test_seed=7")),
        ("unknown", f"{run} --set latency_rounds=9 --set filter=hnsw"),
        ("quiet", f"{run} --quiet-machine 300"),
        ("bench", run.replace("bench scale", "bench classmap")),
        ("script", "scripts/experiments/curve.py --ipc 32,64 --lda"),
        ("moved", "scripts/experiments/curve.py --ipc 32,64,128 --lda")]) + "| `none.json` | scale | seed 6 | - | 0 | in use |\n")
    assert check_ledger(tmp_path) == [
        "bench.json: the ledger's command runs classmap bench classmap; the JSON is of bench scale",
        "moved.json: the ledger's command `scripts/experiments/curve.py --ipc 32,64,128 --lda` is not the JSON's "
        "`PYTHONPATH=. python docs/curve.py --ipc 32,64 --lda`",
        "none.json: the JSON records its options; the ledger's bench column names no command "
        "(`classmap bench NAME ...` or `script.py ...`)",
        "quiet.json: the ledger's command has --quiet-machine; the JSON has no quiet_machine",
        "unknown.json: the ledger's command gives --filter, an option the JSON does not record",
        "value.json: the ledger's command gives --test-seed 7; the JSON's options say 6"]


def test_a_bare_revision_is_held_to_the_ledger_too(tmp_path):
    from classmap_gui.bench.figures import check_ledger

    bench = tmp_path / "docs" / "bench"
    bench.mkdir(parents=True)
    (bench / "a.json").write_text('{"revision": "d08355f", "test_seed": null}')
    (bench / "LEDGER.md").write_text("| JSON | bench | test part | revision | seen | status |\n| --- | --- | --- | --- | --- | --- |\n"
                                     "| `a.json` | a script | none | the JSON's `revision` | - | in use |\n")
    assert check_ledger(tmp_path) == ["a.json: the ledger's revision column does not name d08355f (the JSON's revision)"]


def test_a_test_seed_is_found_wherever_the_json_keeps_it(tmp_path):
    """scale-hand-pose.json keeps its test seed under ``options`` and ``real``, not at the top: it is held to
    its ledger row too (only a top-level ``test_seed`` was read, so such a JSON went unchecked)."""
    from classmap_gui.bench.figures import check_ledger

    bench = tmp_path / "docs" / "bench"
    bench.mkdir(parents=True)
    (bench / "nested.json").write_text(json.dumps({"options": {"test_seed": 7}, "real": {"test_seed": 7}}))
    (bench / "two.json").write_text(json.dumps({"options": {"test_seed": 7}, "real": {"parts": [{"test_seed": 8}]}}))
    (bench / "LEDGER.md").write_text("| JSON | bench | test part | revision | seen | status |\n"
                                     "| --- | --- | --- | --- | --- | --- |\n"
                                     "| `nested.json` | scale (`classmap bench scale --test-seed 7`) | generated afresh, "
                                     "seed 6 | - | 0 | in use |\n"
                                     "| `two.json` | scale (`classmap bench scale --test-seed 7`) | seed 7 | - | 0 | in use |\n")
    assert check_ledger(tmp_path) == ["nested.json: the ledger's test part column does not name test_seed 7",
                                      "two.json: the ledger's test part column does not name test_seed 8"]


def test_a_ledger_row_marks_a_test_part_that_steered_a_choice(tmp_path):
    from classmap_gui.bench.figures import steered_parts

    assert "features.json" in steered_parts(ROOT)  # the official test set steered the network's first pick
    assert "scan.json" not in steered_parts(ROOT)
    assert steered_parts(tmp_path) == set()         # no ledger: nothing marked
