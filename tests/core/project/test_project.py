"""Project files: what a user saves comes back exactly, nothing is lost or overwritten by accident."""
from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import textwrap
import time
import zipfile
from pathlib import Path

import numpy as np
import pytest

from classmap_gui.core.data import ImageSet
from classmap_gui.core.errors import ConfigError, ModelFormatError
from classmap_gui.core.project import Autosaver, Project, RecentProjects, load_project, project_info, save_project

ROOT = Path(__file__).resolve().parents[3]


def make_set(seed: int = 0, n: int = 18, colour: bool = False, size=(9, 7)) -> ImageSet:
    rng = np.random.default_rng(seed)
    shape = (n, *size, 3) if colour else (n, *size)
    names = ["cat/dog", "été", "..", "a b"]
    return ImageSet(rng.integers(0, 256, shape, dtype=np.uint8), rng.permutation(np.arange(n) % 4), names,
                    name=f"set{seed}")


def same(a: ImageSet, b: ImageSet) -> bool:
    return (np.array_equal(a.images, b.images) and np.array_equal(a.labels, b.labels)
            and a.class_names == b.class_names)


@pytest.mark.parametrize("name", ["proj", "proj.cmproj"])
@pytest.mark.parametrize("colour", [False, True])
def test_save_and_open_gives_back_every_image_label_and_setting(tmp_path, name, colour):
    ims = make_set(colour=colour)
    settings = {"features": "kmeans", "params": {"k": 32, "whiten": True}, "split": [0.2, None]}
    out = save_project(Project(ims, settings=settings), tmp_path / name)
    p = load_project(out)
    assert same(p.imageset, ims) and p.imageset.is_color == colour
    assert p.settings == settings and p.recogniser is None and p.imageset.name == ims.name
    assert project_info(out)["n_images"] == len(ims)


def test_folder_project_has_one_sub_folder_of_png_files_per_class(tmp_path):
    ims = make_set()
    save_project(Project(ims), tmp_path / "p")
    folders = sorted(d.name for d in (tmp_path / "p" / "images").iterdir())
    assert len(folders) == 4 and all(d[:4].isdigit() for d in folders)
    assert sum(len(list((tmp_path / "p" / "images" / d).glob("*.png"))) for d in folders) == len(ims)
    assert not [f for f in tmp_path.iterdir() if f.name.startswith(".")], "temporary files left behind"


def test_saving_again_replaces_the_old_version_and_keeps_captures(tmp_path):
    path = tmp_path / "p"
    save_project(Project(make_set(0)), path)
    cap = path / "captures" / "cat"
    cap.mkdir(parents=True)
    (cap / "capture-1.png").write_bytes(b"png bytes")
    save_project(Project(make_set(1, n=10), settings={"v": 2}), path)
    p = load_project(path)
    assert same(p.imageset, make_set(1, n=10)) and p.settings == {"v": 2}
    assert (path / "captures" / "cat" / "capture-1.png").read_bytes() == b"png bytes"
    assert p.captures_dir == path / "captures"


def test_archive_carries_captures_and_unpacks_them_on_request(tmp_path):
    caps = tmp_path / "caps" / "cat"
    caps.mkdir(parents=True)
    (caps / "c.png").write_bytes(b"xyz")
    out = save_project(Project(make_set(), captures_dir=tmp_path / "caps"), tmp_path / "p.cmproj")
    load_project(out, captures_to=tmp_path / "restored")
    assert (tmp_path / "restored" / "cat" / "c.png").read_bytes() == b"xyz"


def test_refuses_to_overwrite_what_is_not_a_project(tmp_path):
    foreign = tmp_path / "thesis.cmproj"
    foreign.write_bytes(b"my thesis, not a project")
    with pytest.raises(ConfigError, match="not a ClassMap Studio project"):
        save_project(Project(make_set()), foreign)
    assert foreign.read_bytes() == b"my thesis, not a project"
    folder = tmp_path / "photos"
    folder.mkdir()
    (folder / "holiday.jpg").write_bytes(b"jpeg")
    with pytest.raises(ConfigError, match="not a ClassMap Studio project"):
        save_project(Project(make_set()), folder)
    assert [f.name for f in folder.iterdir()] == ["holiday.jpg"]


def _rewrite_manifest(path: Path, **changes) -> None:
    doc = json.loads((path / "project.json").read_text())
    doc.update(changes)
    (path / "project.json").write_text(json.dumps(doc))


@pytest.mark.parametrize("change, message", [
    ({"version": 3}, "newer ClassMap Studio"),
    ({"format": "something-else"}, "foreign format"),
    ({"class_names": ["a", "a", "b", "c"]}, "duplicates"),
    ({"image_size": [9, 100000]}, "image_size"),
    ({"images": [["../../etc/passwd", 0]]}, "bad image entry"),
    ({"images": [["images/0000-cat_dog/000000.png", 7]]}, "bad image entry"),
])
def test_corrupt_foreign_or_newer_project_is_a_clear_error(tmp_path, change, message):
    path = save_project(Project(make_set()), tmp_path / "p")
    _rewrite_manifest(path, **change)
    before = (path / "project.json").read_bytes()
    with pytest.raises(ModelFormatError, match=message):
        load_project(path)
    assert (path / "project.json").read_bytes() == before


def test_image_replaced_by_a_different_size_or_garbage_is_named(tmp_path):
    path = save_project(Project(make_set()), tmp_path / "p")
    victim = sorted((path / "images").glob("*/*.png"))[3]
    victim.write_bytes(b"\x89PNG\r\n\x1a\n" + b"\x00" * 40)
    with pytest.raises(ModelFormatError, match=victim.name):
        load_project(path)


def _zip(path: Path, members: dict[str, bytes], symlink: str | None = None) -> Path:
    with zipfile.ZipFile(path, "w") as zf:
        for name, data in members.items():
            zf.writestr(name, data)
        if symlink:
            info = zipfile.ZipInfo(symlink)
            info.create_system = 3
            info.external_attr = (stat.S_IFLNK | 0o777) << 16
            zf.writestr(info, "/etc/passwd")
    return path


@pytest.mark.parametrize("member", ["../evil.txt", "/tmp/evil.txt", "images/../../evil.txt", "C:/evil.txt",
                                    "images\\..\\evil.txt", "unknown/evil.txt"])
def test_archive_members_cannot_escape_their_folder(tmp_path, member):
    good = save_project(Project(make_set()), tmp_path / "good.cmproj")
    bad = tmp_path / "bad.cmproj"
    with zipfile.ZipFile(good) as src, zipfile.ZipFile(bad, "w") as dst:
        for info in src.infolist():
            dst.writestr(info, src.read(info))
        dst.writestr(member, b"owned")
    with pytest.raises(ModelFormatError, match="refused"):
        load_project(bad)
    assert not (tmp_path / "evil.txt").exists() and not Path("/tmp/evil.txt").exists()


def test_archive_symlink_member_is_refused(tmp_path):
    bad = _zip(tmp_path / "bad.cmproj", {"project.json": b"{}"}, symlink="images/link.png")
    with pytest.raises(ModelFormatError, match="link"):
        load_project(bad)


def test_zip_bomb_is_refused_before_unpacking(tmp_path):
    bomb = tmp_path / "bomb.cmproj"
    with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("project.json", b"{}")
        zf.writestr("captures/zeros.bin", b"\x00" * (30 * 1024 * 1024))
    with pytest.raises(ModelFormatError, match="zip bomb"):
        load_project(bomb)
    with pytest.raises(ModelFormatError, match="GiB"):
        load_project(bomb, max_total_bytes=1024)


def test_truncated_or_foreign_archive_is_a_clear_error(tmp_path):
    good = save_project(Project(make_set()), tmp_path / "good.cmproj")
    data = good.read_bytes()
    (tmp_path / "cut.cmproj").write_bytes(data[: len(data) // 2])
    with pytest.raises(ModelFormatError):
        load_project(tmp_path / "cut.cmproj")
    _zip(tmp_path / "other.cmproj", {"images/readme.txt": b"hello"})
    with pytest.raises(ModelFormatError, match="project.json is missing"):
        load_project(tmp_path / "other.cmproj")


def test_a_save_that_died_between_its_two_renames_is_recovered(tmp_path):
    path = save_project(Project(make_set(3), settings={"v": 3}), tmp_path / "p")
    # What a kill between "old version moved aside" and "new version moved in" leaves behind.
    dead = 2 ** 22 + 12345
    os.replace(path, tmp_path / f".p.old-{dead}-1")
    (tmp_path / f".p.saving-{dead}-x").mkdir()
    p = load_project(path)
    assert same(p.imageset, make_set(3)) and p.settings == {"v": 3}
    save_project(Project(make_set(4)), path)
    assert sorted(f.name for f in tmp_path.iterdir()) == ["p"], "stale leftovers were not cleaned"


KILLER = textwrap.dedent("""
    import sys
    import numpy as np
    sys.path.insert(0, {root!r})
    from classmap_gui.core.data import ImageSet
    from classmap_gui.core.project import Project, save_project

    def version(k):
        rng = np.random.default_rng(k)
        return ImageSet(rng.integers(0, 256, (150, 24, 24), dtype=np.uint8), np.arange(150) % 5,
                        list("abcde"), name=f"v{{k}}")

    k = int(sys.argv[2])
    while True:
        save_project(Project(version(k), settings={{"k": k}}), sys.argv[1])
        print(k, flush=True)
        k += 1
""")


@pytest.mark.parametrize("name", ["proj", "proj.cmproj"])
def test_killing_the_process_during_saves_leaves_the_last_complete_save_intact(tmp_path, name):
    script = tmp_path / "saver.py"
    script.write_text(KILLER.format(root=str(ROOT)))
    path = tmp_path / name
    ns: dict = {}
    exec(compile(KILLER.format(root=str(ROOT)).split("k = int")[0], "killer", "exec"), ns)
    rng = np.random.default_rng(0)
    start = 0
    for _ in range(3):
        proc = subprocess.Popen([sys.executable, str(script), str(path), str(start)], stdout=subprocess.PIPE, text=True)
        done = [int(proc.stdout.readline())]  # at least one complete save in this round
        time.sleep(float(rng.uniform(0.0, 0.4)))
        os.kill(proc.pid, signal.SIGKILL)
        rest = proc.stdout.read()
        proc.wait()
        done += [int(x) for x in rest.split()]
        p = load_project(path)
        k = p.settings["k"]
        assert k in (done[-1], done[-1] + 1), f"opened save {k}, last complete save was {done[-1]}"
        assert same(p.imageset, ns["version"](k))
        start = done[-1] + 10


def test_autosave_keeps_at_most_interval_of_work_at_risk_and_never_touches_the_user_file(tmp_path):
    user_file = save_project(Project(make_set(0)), tmp_path / "mine.cmproj")
    before = user_file.read_bytes()
    auto = Autosaver(tmp_path / "autosave", interval=60)
    auto.mark_saved(now=1000.0)
    assert not auto.due(dirty=True, now=1059.0)
    assert auto.due(dirty=True, now=1060.0) and not auto.due(dirty=False, now=5000.0)
    out = auto.save(Project(make_set(1), settings={"edited": True}), user_file)
    assert user_file.read_bytes() == before and out.parent == tmp_path / "autosave"
    (pending,) = auto.pending()
    assert pending["autosave"] == out and pending["n_images"] == len(make_set(1))
    assert load_project(out).settings == {"edited": True}
    auto.discard(user_file)
    assert auto.pending() == []


def test_recent_projects_newest_first_bounded_and_robust_to_a_damaged_file(tmp_path):
    cfg = tmp_path / "config"
    recent = RecentProjects(cfg, limit=3)
    paths = [save_project(Project(make_set(i, n=8)), tmp_path / f"p{i}") for i in range(4)]
    for p in paths + [paths[1]]:
        recent.add(p)
    assert recent.list() == [paths[1], paths[3], paths[2]]
    recent.remove(paths[3])
    assert recent.list() == [paths[1], paths[2]]
    (cfg / "recent-projects.json").write_text("{not json")
    assert RecentProjects(cfg).list() == []


def test_project_with_recogniser_round_trips_predictions(tmp_path):
    from classmap_gui.core import recogniser as rec_mod
    from classmap_gui.core.train import training
    ims = make_set(5, n=60, size=(12, 12))
    result = training.train(ims, training.TrainConfig(features="pixels", bank="ova-ridge", test_fraction=0.2))
    rec = result.recogniser
    for name in ("p", "p.cmproj"):
        p = load_project(save_project(Project(ims, recogniser=rec), tmp_path / name))
        assert isinstance(p.recogniser, rec_mod.Recogniser)
        a, b = rec.predict(ims.images, top=3), p.recogniser.predict(ims.images, top=3)
        assert np.array_equal(a.top_classes, b.top_classes) and np.array_equal(a.top_scores, b.top_scores)


def test_a_manifest_declaring_more_images_than_memory_holds_is_a_clear_error(tmp_path):
    path = save_project(Project(make_set()), tmp_path / "p")
    doc = json.loads((path / "project.json").read_text())
    digest = doc["images"][0][2]
    _rewrite_manifest(path, image_size=[4096, 4096], colour=True,
                      images=[[f"images/0000-x/{i:06d}.png", 0, digest] for i in range(4000)])  # ~190 GiB
    with pytest.raises(ModelFormatError, match="GiB of memory"):
        load_project(path)


def test_a_capture_written_while_the_project_is_being_saved_is_not_lost(tmp_path, monkeypatch):
    import classmap_gui.core.project.format as proj

    path = save_project(Project(make_set()), tmp_path / "p")
    (path / "captures" / "cat").mkdir(parents=True)
    real_swap = proj.swap_dir

    def camera_writes_during_save(tmp, target, *rest, **kw):
        (target / "captures" / "cat" / "late.png").write_bytes(b"frame")  # into the version being replaced
        return real_swap(tmp, target, *rest, **kw)

    monkeypatch.setattr(proj, "swap_dir", camera_writes_during_save)
    save_project(Project(make_set(1)), path)
    assert (path / "captures" / "cat" / "late.png").read_bytes() == b"frame"
