"""The `classmap` command's frame: listing data sets and refusing bad input with one clear line."""
import json

from classmap_gui.cli import main, parse_sets


def test_datasets_json_lists_builtins(capsys):
    assert main(["datasets", "--json"]) == 0
    rows = {r["name"]: r for r in json.loads(capsys.readouterr().out)}
    assert rows["digits"]["available"] is True
    assert "fashion-mnist" in rows and rows["fashion-mnist"]["how_to_get"]


def test_set_values_are_typed():
    assert parse_sets(["k=1600,eps=0.1", "hellinger=true", "name=hog"]) == {
        "k": 1600, "eps": 0.1, "hellinger": True, "name": "hog"}
    # a list option keeps its commas; the next key=value starts the next option
    assert parse_sets(["penalties=300,1000,3000,p=40", "recheck_seeds=1,2"]) == {
        "penalties": "300,1000,3000", "p": 40, "recheck_seeds": "1,2"}


def test_bad_set_is_one_line_error(capsys):
    assert main(["bench", "features", "--set", "novalue"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("classmap: error:") and "key=value" in err[0]
