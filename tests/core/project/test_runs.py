"""Training runs kept in a project: records and models survive save and reopen (folder and .cmproj),
restoring a run reproduces its predictions, the model store is bounded, and bad records are refused."""
import json

import numpy as np
import pytest

from classmap_gui.core.data import ImageSet, load_digits
from classmap_gui.core.errors import ModelFormatError
from classmap_gui.core.project import Project, load_project, save_project
from classmap_gui.core.project.runs import RunLog, data_version, predictions_match, run_record
from classmap_gui.core.train.training import TrainConfig, split_parts, train


@pytest.fixture(scope="module")
def data():
    d = load_digits()
    keep = np.concatenate([np.flatnonzero(d.labels == c)[:40] for c in range(d.n_classes)])
    d = d.subset(keep)
    # capture groups: pairs of images form a burst
    return ImageSet(d.images, d.labels, d.class_names, name="digits-400", groups=np.arange(len(d)) // 2)


@pytest.fixture(scope="module")
def runs(data):
    """Three runs with different settings, each with its record and model."""
    out = []
    for cfg in (TrainConfig(features="pixels", bank="ova-ridge", seed=0),
                TrainConfig(features="pixels", bank="ova-ridge", bank_params={"alpha": 1e4}, seed=1),
                TrainConfig(features="pixels", bank="ova-ridge", classmap={"d": 4, "p": 3, "n_triples": 500}, seed=2)):
        res = train(data, cfg)
        out.append((res, run_record(res, data, seconds=1.5)))
    return out


def _test_part(data, record):
    cfg = TrainConfig.from_dict(record["settings"])
    return data.subset(split_parts(data.labels, cfg, data.groups)["test"])


def test_record_says_what_was_trained_and_how_it_did(runs, data):
    res, rec = runs[2]
    assert rec["settings"] == res.recogniser.metadata["config"] and rec["settings"]["classmap"]["d"] == 4
    assert rec["data"] == {"name": "digits-400", "version": data_version(data), "images": 400, "classes": 10,
                           "bursts": 200}
    assert rec["split"]["by"] == "capture group" and rec["split"]["groups"] == 200
    assert rec["accuracy"] == res.report.accuracy and rec["report_on"] == "test"
    assert rec["evaluations_per_query"] == res.report.evaluations_per_query < 10
    assert set(rec["latency_speedup"]) == {"single", "batch"}          # ClassMap: speed-up measured
    assert runs[0][1]["latency_speedup"] is None                       # brute force: nothing to compare
    assert rec["train_seconds"] == 1.5 and "search" in rec["stage_seconds"]  # the bank and ClassMap are fitted by the one search
    assert rec["n_predictions"] == res.sizes["test"]
    json.dumps(rec, allow_nan=False)                                    # plain JSON
    # another data version: one image changed
    other = ImageSet(data.images.copy(), data.labels, data.class_names, groups=data.groups)
    other.images[0, 0, 0] ^= 1
    assert data_version(other) != data_version(data)


@pytest.mark.parametrize("suffix", ["", ".cmproj"])
def test_runs_survive_save_and_reopen_and_restore_reproduces_predictions(tmp_path, data, runs, suffix):
    log = RunLog(keep_models=5)
    for res, rec in runs:
        log.add(rec, res.recogniser)
    current = runs[-1][0].recogniser
    path = save_project(Project(data, current, {"seed": 2}, runs=log), tmp_path / f"p{suffix}")
    back = load_project(path)
    assert [r["id"] for r in back.runs.records] == [1, 2, 3]
    assert [r["accuracy"] for r in back.runs.records] == [rec["accuracy"] for _, rec in runs]
    assert all(r["model_kept"] for r in back.runs.records)
    assert back.runs.model(3) is back.recogniser                        # the current run's model is not stored twice
    assert np.array_equal(back.imageset.groups, data.groups)
    for (res, rec), kept in zip(runs, back.runs.records):
        model = back.runs.model(kept["id"])
        test = _test_part(back.imageset, kept)
        pred = model.predict(test.images, top=1).labels
        assert np.array_equal(pred, res.test_predictions.labels)      # restoring reproduces its predictions
        assert predictions_match(kept, pred)
    # runs 1 and 2 disagree somewhere, so the check above could tell them apart
    assert not predictions_match(back.runs.get(1), back.runs.model(2).predict(_test_part(data, back.runs.get(1)).images).labels)


def test_run_ids_are_never_reused(tmp_path, data, runs):
    log = RunLog()
    for res, rec in runs:
        log.add(rec, res.recogniser)
    log.remove(3)
    back = load_project(save_project(Project(data, None, runs=log), tmp_path / "p"))
    assert back.runs.add(runs[0][1])["id"] == 4


def test_model_store_is_bounded(tmp_path, data, runs):
    log = RunLog(keep_models=2)
    for res, rec in runs:
        log.add(rec, res.recogniser)
    assert [r["model_kept"] for r in log.records] == [False, True, True]
    assert log.model(1) is None and log.model(3) is runs[2][0].recogniser
    path = save_project(Project(data, None, runs=log), tmp_path / "p")
    assert sorted(p.name for p in (path / "runs").iterdir()) == ["0002", "0003"]
    back = load_project(path)
    assert [r["model_kept"] for r in back.runs.records] == [False, True, True] and back.recogniser is None


def test_a_run_without_its_model_is_reproduced_by_retraining(data, runs):
    """The fallback for runs beyond the bound: same settings, seed and data version -> same predictions."""
    res, rec = runs[1]
    again = train(data, TrainConfig.from_dict(rec["settings"]))
    assert data_version(data) == rec["data"]["version"]
    assert predictions_match(rec, again.test_predictions.labels)


def test_old_format_project_opens_without_groups_or_runs(tmp_path, data):
    path = save_project(Project(data), tmp_path / "old")
    doc = json.loads((path / "project.json").read_text())
    for k in ("groups", "runs", "run_models", "runs_current"):
        doc.pop(k, None)
    doc["version"] = 1
    (path / "project.json").write_text(json.dumps(doc))
    back = load_project(path)
    assert back.imageset.groups is None and len(back.runs) == 0 and len(back.imageset) == len(data)


@pytest.mark.parametrize("change, message", [
    ({"runs": [{"id": 1}]}, "run record"),
    ({"runs": [{"id": 1, "date": "x", "settings": {}, "data": {}, "accuracy": "high"}]}, "bad 'accuracy'"),
    ({"runs": [{"id": 1, "date": "x", "settings": {}, "data": {}}] * 2}, "distinct"),
    ({"run_models": [7]}, "run_models"),
    ({"groups": [0, 1]}, "groups"),
])
def test_bad_run_records_or_groups_are_refused(tmp_path, data, change, message):
    path = save_project(Project(data), tmp_path / "p")
    doc = json.loads((path / "project.json").read_text())
    doc.update(change)
    (path / "project.json").write_text(json.dumps(doc))
    with pytest.raises(ModelFormatError, match=message):
        load_project(path)


def test_kept_models_say_their_saved_size_and_can_be_let_go_but_the_one_in_use(tmp_path, runs):
    """What the Runs tab tells a person: the bytes a kept model adds (close to what saving writes), and
    forgetting kept models keeps the run in use and every record."""
    (r1, rec1), (r2, rec2), (r3, rec3) = runs
    folder = r3.recogniser.save(tmp_path / "m")
    written = sum(f.stat().st_size for f in folder.iterdir())
    assert abs(r3.recogniser.saved_bytes() - written) <= 0.02 * written + 4096
    log = RunLog()
    for res, rec in runs:
        log.add(rec, res.recogniser)
    assert log.models_bytes() == sum(r.recogniser.saved_bytes() for r, _ in runs)
    current = log.current_of(r2.recogniser)
    assert log.forget_models(keep=current) == 2
    assert list(log.models) == [current] and len(log) == 3
    assert [r["model_kept"] for r in log.records] == [False, True, False]
