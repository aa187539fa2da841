"""Hostile and faulty saved files (issue 13): memory bombs, links, special files, kills at every
step of a save, full and read-only disks, concurrent saves, user files in a save's folder."""
from __future__ import annotations

import errno
import json
import os
import shutil
import stat
import struct
import threading
import zipfile
from pathlib import Path

import numpy as np
import pytest

from classmap_gui.core.errors import ConfigError, ModelFormatError, StorageError
from classmap_gui.core.recogniser import Recogniser
from classmap_gui.core.project import Project, load_project, save_project

from hostile_helpers import PEAK_BYTES, peak_memory, run_killed_at, tiny_model, tiny_set

pytestmark = pytest.mark.timeout(120)


def write_bomb_npz(path: Path, key: str, declared: np.ndarray, inflated_bytes: int, *, compress: bool = True,
                   zip64: bool = True) -> None:
    """An npz whose member ``key`` has the ``.npy`` header of ``declared`` but inflates to
    ``inflated_bytes`` of zeros after it (streamed: the test never holds the bomb in memory)."""
    header = bytearray()

    class Sink:
        def write(self, b):
            header.extend(b)

    np.lib.format.write_array_header_1_0(Sink(), np.lib.format.header_data_from_array_1_0(declared))
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED if compress else zipfile.ZIP_STORED) as zf:
        with zf.open(f"{key}.npy", "w", force_zip64=zip64) as fh:
            fh.write(bytes(header))
            chunk = bytes(1 << 20)
            left = inflated_bytes
            while left > 0:
                fh.write(chunk[:min(left, len(chunk))])
                left -= len(chunk)


def bombed_model(src: Path, dst: Path, inflated_bytes: int) -> Path:
    """A copy of the model at ``src`` whose first array is a zip bomb; the other arrays stay valid."""
    shutil.copytree(src, dst)
    doc = json.loads((dst / "model.json").read_text())
    with np.load(src / "arrays.npz") as z:
        arrays = {k: z[k] for k in z.files}
    key = max(arrays, key=lambda k: arrays[k].nbytes)
    write_bomb_npz(dst / "arrays.npz", key, arrays[key], inflated_bytes)
    with zipfile.ZipFile(dst / "arrays.npz", "a", zipfile.ZIP_DEFLATED) as zf:
        for k, v in arrays.items():
            if k != key:
                with zf.open(f"{k}.npy", "w") as fh:
                    np.lib.format.write_array(fh, v)
    assert set(doc["arrays"]) == set(arrays)
    return dst


@pytest.fixture(scope="module")
def model_path(tmp_path_factory):
    return tiny_model().save(tmp_path_factory.mktemp("m") / "model")


# ---------------------------------------------------------------- 1. memory bombs

def test_an_npz_member_inflating_far_beyond_its_declared_size_is_refused_at_small_peak(model_path, tmp_path):
    bad = bombed_model(model_path, tmp_path / "bomb", 512 << 20)  # 512 MB of zeros in ~0.5 MB
    assert (bad / "arrays.npz").stat().st_size < 2 << 20
    with peak_memory() as peak, pytest.raises(ModelFormatError, match="more than its declared|more data than"):
        Recogniser.load(bad)
    assert peak[0] < PEAK_BYTES


def test_a_bomb_whose_zip_directory_lies_about_its_size_is_stopped_by_the_running_cap(model_path, tmp_path):
    bad = tmp_path / "liar"
    shutil.copytree(model_path, bad)
    with np.load(model_path / "arrays.npz") as z:
        arrays = {k: z[k] for k in z.files}
    key = max(arrays, key=lambda k: arrays[k].nbytes)
    write_bomb_npz(bad / "arrays.npz", key, arrays[key], 256 << 20, zip64=False)
    with zipfile.ZipFile(bad / "arrays.npz", "a", zipfile.ZIP_DEFLATED) as zf:
        for k, v in arrays.items():
            if k != key:
                with zf.open(f"{k}.npy", "w") as fh:
                    np.lib.format.write_array(fh, v)
    raw = bytearray((bad / "arrays.npz").read_bytes())
    name = f"{key}.npy".encode()
    small = struct.pack("<I", arrays[key].nbytes + 128)
    for sig, size_at, name_at in ((b"PK\x03\x04", 22, 30), (b"PK\x01\x02", 24, 46)):  # local and central headers
        pos = raw.find(sig)
        while pos >= 0:
            if raw[pos + name_at:pos + name_at + len(name)] == name:
                raw[pos + size_at:pos + size_at + 4] = small
            pos = raw.find(sig, pos + 4)
    (bad / "arrays.npz").write_bytes(bytes(raw))
    with zipfile.ZipFile(bad / "arrays.npz") as zf:
        assert zf.getinfo(f"{key}.npy").file_size == arrays[key].nbytes + 128  # the directory now lies
    with peak_memory() as peak, pytest.raises(ModelFormatError, match="more data than|Bad CRC"):
        Recogniser.load(bad)
    assert peak[0] < PEAK_BYTES


def test_the_same_bomb_stored_inside_a_cmproj_is_refused_at_small_peak(model_path, tmp_path):
    proj = save_project(Project(tiny_set(), recogniser=Recogniser.load(model_path)), tmp_path / "p.cmproj")
    bad = bombed_model(model_path, tmp_path / "bomb", 512 << 20)
    out = tmp_path / "bomb.cmproj"
    with zipfile.ZipFile(proj) as src, zipfile.ZipFile(out, "w") as dst:
        for info in src.infolist():
            if info.filename == "model/arrays.npz":  # stored uncompressed, as the app writes .npz members
                dst.writestr(info, (bad / "arrays.npz").read_bytes(), compress_type=zipfile.ZIP_STORED)
            else:
                dst.writestr(info, src.read(info))
    with peak_memory() as peak, pytest.raises(ModelFormatError, match="recogniser cannot be loaded"):
        load_project(out)
    assert peak[0] < PEAK_BYTES


def test_a_manifest_declaring_more_than_the_budget_is_refused_before_inflating(model_path, tmp_path):
    bad = tmp_path / "huge"
    shutil.copytree(model_path, bad)
    doc = json.loads((bad / "model.json").read_text())
    key = next(iter(doc["arrays"]))
    doc["arrays"][key]["shape"] = [1 << 20, 1 << 20]  # 4 TB of float32
    (bad / "model.json").write_text(json.dumps(doc))
    with peak_memory() as peak, pytest.raises(ModelFormatError, match="declares .* of arrays, more than"):
        Recogniser.load(bad)
    assert peak[0] < PEAK_BYTES


@pytest.mark.parametrize("payload, message", [
    (b"not a zip at all", "not a valid .npz archive"),
    (b"PK\x03\x04" + bytes(40), "not a valid .npz archive"),
])
def test_an_arrays_file_that_is_not_a_zip_is_called_corrupt_not_a_pickle(model_path, tmp_path, payload, message):
    bad = tmp_path / "m"
    shutil.copytree(model_path, bad)
    (bad / "arrays.npz").write_bytes(payload)
    with pytest.raises(ModelFormatError, match=message) as err:
        Recogniser.load(bad)
    assert "pickle" not in str(err.value)


def test_json_nested_deeply_or_with_a_huge_integer_is_a_clear_error(model_path, tmp_path):
    bad = tmp_path / "m"
    shutil.copytree(model_path, bad)
    (bad / "model.json").write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(ModelFormatError, match="nested too deeply"):
        Recogniser.load(bad)
    doc = json.loads((model_path / "model.json").read_text())
    for digits, message in ((5000, "not valid JSON"), (4300, "newer ClassMap Studio")):
        (bad / "model.json").write_text(json.dumps(doc).replace('"version": 1', '"version": ' + "9" * digits))
        with pytest.raises(ModelFormatError, match=message) as err:
            Recogniser.load(bad)
        assert len(str(err.value)) < 400 + len(str(bad))


def test_duplicate_class_names_in_a_model_are_refused(model_path, tmp_path):
    bad = tmp_path / "m"
    shutil.copytree(model_path, bad)
    doc = json.loads((bad / "model.json").read_text())
    doc["class_names"] = ["a", "a", "c"]
    (bad / "model.json").write_text(json.dumps(doc))
    with pytest.raises(ModelFormatError, match="appears twice"):
        Recogniser.load(bad)


# ---------------------------------------------------------------- 2/9. special files and links

@pytest.mark.parametrize("name", ["model.json", "arrays.npz"])
def test_a_fifo_in_a_model_is_refused_without_blocking(model_path, tmp_path, name):
    bad = tmp_path / "m"
    shutil.copytree(model_path, bad)
    (bad / name).unlink()
    os.mkfifo(bad / name)
    with pytest.raises(ModelFormatError, match="FIFO"):
        Recogniser.load(bad)


def test_a_fifo_among_a_folder_projects_images_is_refused_without_blocking(tmp_path):
    path = save_project(Project(tiny_set()), tmp_path / "p")
    victim = sorted((path / "images").rglob("*.png"))[0]
    victim.unlink()
    os.mkfifo(victim)
    with pytest.raises(ModelFormatError, match="FIFO"):
        load_project(path)
    cm = tmp_path / "fifo.cmproj"
    os.mkfifo(cm)
    with pytest.raises(ModelFormatError, match="FIFO"):
        load_project(cm)


@pytest.mark.parametrize("name", ["model.json", "arrays.npz"])
def test_links_inside_a_model_are_not_followed(model_path, tmp_path, name):
    outside = tmp_path / f"outside-{name}"
    shutil.copy(model_path / name, outside)  # a perfectly valid file, but outside the model
    bad = tmp_path / "m"
    shutil.copytree(model_path, bad)
    (bad / name).unlink()
    (bad / name).symlink_to(outside)
    with pytest.raises(ModelFormatError, match="symbolic link"):
        Recogniser.load(bad)


def test_links_out_of_a_folder_project_are_not_followed(tmp_path):
    rec = tiny_model()
    path = save_project(Project(tiny_set(), recogniser=rec), tmp_path / "p")
    elsewhere = tmp_path / "elsewhere"
    shutil.move(str(path / "model"), elsewhere)
    (path / "model").symlink_to(elsewhere)
    with pytest.raises(ModelFormatError, match="model/ is a link"):
        load_project(path)
    (path / "model").unlink()
    shutil.move(str(elsewhere), path / "model")
    cls = sorted((path / "images").iterdir())[0]
    shutil.move(str(cls), tmp_path / "cls")
    cls.symlink_to(tmp_path / "cls")
    with pytest.raises(ModelFormatError, match="link"):
        load_project(path)


# ---------------------------------------------------------------- 5. saves keep what they did not write

def test_saving_a_model_over_a_model_folder_keeps_the_users_files(tmp_path):
    path = tiny_model(0).save(tmp_path / "m")
    (path / "README.txt").write_text("my notes")
    (path / "runs").mkdir()
    (path / "runs" / "log.txt").write_text("log")
    tiny_model(1).save(path)
    assert (path / "README.txt").read_text() == "my notes" and (path / "runs" / "log.txt").read_text() == "log"
    Recogniser.load(path)


def test_saving_a_project_over_a_project_folder_keeps_the_users_files(tmp_path):
    path = save_project(Project(tiny_set()), tmp_path / "p")
    (path / "README.txt").write_text("my notes")
    save_project(Project(tiny_set(seed=1)), path)
    assert (path / "README.txt").read_text() == "my notes"
    assert len(load_project(path).imageset) == len(tiny_set())


def test_a_non_empty_folder_that_is_not_a_model_is_refused_and_left_untouched(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.txt").write_text("x")
    with pytest.raises(ConfigError, match="left untouched"):
        tiny_model().save(tmp_path / "docs")
    assert [p.name for p in (tmp_path / "docs").iterdir()] == ["a.txt"]


def test_saves_follow_the_users_umask(tmp_path):
    old = os.umask(0o022)
    try:
        m = tiny_model().save(tmp_path / "m")
        p = save_project(Project(tiny_set()), tmp_path / "p")
        a = save_project(Project(tiny_set()), tmp_path / "p.cmproj")
    finally:
        os.umask(old)
    assert stat.S_IMODE(m.stat().st_mode) == 0o755 and stat.S_IMODE(p.stat().st_mode) == 0o755
    assert stat.S_IMODE(a.stat().st_mode) == 0o644


# ---------------------------------------------------------------- 6. kills at every step

MODEL_POINTS = [("fsync-file", 1), ("fsync-file", 2), ("fsync-tmp", 1), ("rename-old", 1), ("rename-new", 1),
                ("fsync-parent", 1), ("remove-old", 1)]


@pytest.mark.parametrize("point, nth", MODEL_POINTS)
def test_a_model_save_killed_at_any_step_leaves_a_loadable_model(tmp_path, point, nth):
    old, new = tiny_model(0), tiny_model(1)
    path = old.save(tmp_path / "k0")
    (path / "README.txt").write_text("mine")
    assert run_killed_at(point, nth, lambda: new.save(path))
    got = Recogniser.load(path)  # reads a save that died between the renames where it lies
    X = tiny_set().images
    assert any(np.array_equal(got.predict(X).top_scores, r.predict(X).top_scores) for r in (old, new))
    new.save(path)  # the next save puts the previous version back, carries its files and cleans the rest
    assert (path / "README.txt").read_text() == "mine"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["k0"]
    assert np.array_equal(Recogniser.load(path).predict(X).top_scores, new.predict(X).top_scores)


def test_a_first_model_save_killed_before_its_last_rename_is_recovered(tmp_path):
    rec = tiny_model(0)
    path = tmp_path / "first"
    assert run_killed_at("rename-new", 1, lambda: rec.save(path))
    assert not path.exists()
    Recogniser.load(path)  # read where the killed save left it: nothing is renamed by a read
    assert not path.exists()
    rec.save(path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["first"]


@pytest.mark.parametrize("point, nth", [("fsync-file", 1), ("fsync-file", 2), ("fsync-tmp", 1), ("rename-old", 1),
                                        ("rename-new", 1), ("fsync-parent", 1), ("remove-old", 1)])
def test_a_folder_project_save_killed_at_any_step_opens(tmp_path, point, nth):
    path = save_project(Project(tiny_set()), tmp_path / "p")
    assert run_killed_at(point, nth, lambda: save_project(Project(tiny_set(n_per_class=5, seed=1)), path))
    assert len(load_project(path).imageset) in (24, 15)
    save_project(Project(tiny_set()), path)  # the next save cleans what the killed one left
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p"]


@pytest.mark.parametrize("point", ["fsync-file", "rename-new"])
def test_an_archive_project_save_killed_at_any_step_keeps_the_old_file(tmp_path, point):
    path = save_project(Project(tiny_set()), tmp_path / "p.cmproj")
    assert run_killed_at(point, 1, lambda: save_project(Project(tiny_set(n_per_class=5, seed=1)), path))
    assert len(load_project(path).imageset) == 24
    save_project(Project(tiny_set()), path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.cmproj"]


# ---------------------------------------------------------------- 7/8. full, read-only, concurrent

def _fail_with(code):
    def boom(*a, **k):
        raise OSError(code, os.strerror(code))
    return boom


def test_a_full_disk_during_a_model_save_is_a_storage_error_and_the_old_model_stays(tmp_path, monkeypatch):
    import classmap_gui.core.store.atomic as atomic

    old = tiny_model(0)
    path = old.save(tmp_path / "m")
    monkeypatch.setattr(atomic.os, "fsync", _fail_with(errno.ENOSPC))
    with pytest.raises(StorageError, match="No space left.*unchanged"):
        tiny_model(1).save(path)
    monkeypatch.undo()
    X = tiny_set().images
    assert np.array_equal(Recogniser.load(path).predict(X).top_scores, old.predict(X).top_scores)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m"]


def test_a_full_disk_during_a_project_save_is_a_storage_error(tmp_path, monkeypatch):
    import classmap_gui.core.project.containers as pf

    path = save_project(Project(tiny_set()), tmp_path / "p")
    monkeypatch.setattr(pf.os, "fsync", _fail_with(errno.ENOSPC))
    with pytest.raises(StorageError, match="No space left.*unchanged"):
        save_project(Project(tiny_set(seed=1)), path)
    monkeypatch.undo()
    assert len(load_project(path).imageset) == len(tiny_set())


def test_a_read_only_target_is_refused_before_writing(tmp_path, monkeypatch):
    import classmap_gui.core.store.format as fmt

    monkeypatch.setattr(fmt.tempfile, "mkdtemp", _fail_with(errno.EROFS))
    with pytest.raises(StorageError, match="cannot create files in.*Read-only"):
        fmt.check_bundle_target(tmp_path / "m", "model.json")


def test_two_saves_to_one_folder_at_once_leave_one_whole_model(tmp_path):
    models = [tiny_model(0), tiny_model(1)]
    path = tmp_path / "cc"
    errors = []

    def save(rec):
        try:
            for _ in range(5):
                rec.save(path)
        except Exception as exc:  # noqa: BLE001 - any failure is what the test reports
            errors.append(exc)

    threads = [threading.Thread(target=save, args=(m,)) for m in models]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    Recogniser.load(path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cc"]


def test_cmproj_load_errors_name_the_project_not_an_internal_folder(model_path, tmp_path):
    proj = save_project(Project(tiny_set(), recogniser=Recogniser.load(model_path)), tmp_path / "p.cmproj")
    out = tmp_path / "bad.cmproj"
    with zipfile.ZipFile(proj) as src, zipfile.ZipFile(out, "w") as dst:
        for info in src.infolist():
            data = b"{broken" if info.filename == "model/model.json" else src.read(info)
            dst.writestr(info, data)
    with pytest.raises(ModelFormatError) as err:
        load_project(out)
    assert "classmap-open" not in str(err.value) and str(out) in str(err.value)



def test_saving_over_a_fifo_and_a_fifo_recent_list_do_not_block(tmp_path):
    from classmap_gui.core.project import RecentProjects

    os.mkfifo(tmp_path / "x.cmproj")
    with pytest.raises(ConfigError, match="not a ClassMap Studio project"):
        save_project(Project(tiny_set()), tmp_path / "x.cmproj")
    (tmp_path / "cfg").mkdir()
    os.mkfifo(tmp_path / "cfg" / "recent-projects.json")
    assert RecentProjects(tmp_path / "cfg").list() == []


def test_a_model_folder_holding_a_fifo_is_refused_before_any_work(tmp_path):
    from classmap_gui.core.store.format import check_bundle_target

    path = tiny_model().save(tmp_path / "m")
    os.mkfifo(path / "pipe")
    with pytest.raises(ConfigError, match="'pipe', which is neither a file nor a folder"):
        check_bundle_target(path, "model.json")
    assert (path / "pipe").exists()
