"""Issue 26 items 3, 4, 9 (projects): a `.cmproj` member or project.json that inflates to hundreds of
megabytes, an archive listing 500 000 entries, and a `captures` link out of a folder project; each
load runs in a child process whose peak memory stays within 300 MB of loading the harmless project.
Also: a killed save's temporary model folders are cleaned by the next save, and only those."""
from __future__ import annotations

import os
import struct
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

import numpy as np
import pytest

from classmap_gui.core.errors import ModelFormatError
from classmap_gui.core.project.format import Project, load_project, save_project
from hostile_helpers import tiny_model, tiny_set
from measured import assert_bounded, assert_one_error, run

pytestmark = pytest.mark.timeout(600)
LOAD = """
import sys
from classmap_gui.core.errors import ClassMapError
from classmap_gui.core.project.format import load_project
try:
    p = load_project(sys.argv[1])
except ClassMapError as exc:
    print(f"error: {exc}", file=sys.stderr)
    sys.exit(2)
print(len(p.imageset))
"""


def load_in_child(path: Path):
    return run(["python", "-c", LOAD, str(path)])


def _poorly_compressible(nbytes: int):
    """Chunks of ``nbytes`` that deflate ~150-fold: under the archive's zip-bomb ratio, yet huge."""
    rng = np.random.default_rng(0)
    noise = rng.integers(0, 256, 7000, dtype=np.uint8).tobytes()
    chunk = noise + bytes((1 << 20) - len(noise))
    for _ in range(nbytes >> 20):
        yield chunk


def _replace_member(archive: Path, name: str, head: bytes, nbytes: int, out: Path) -> None:
    with zipfile.ZipFile(archive) as src, zipfile.ZipFile(out, "w") as dst:
        for info in src.infolist():
            if info.filename != name:
                dst.writestr(info, src.read(info))
        info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
        info.compress_type = zipfile.ZIP_DEFLATED
        info.file_size = len(head) + nbytes
        with dst.open(info, "w", force_zip64=True) as w:
            w.write(head)
            for chunk in _poorly_compressible(nbytes):
                w.write(chunk)


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    root = tmp_path_factory.mktemp("projects")
    ims = tiny_set()
    path = save_project(Project(ims, recogniser=tiny_model()), root / "p.cmproj")
    base = load_in_child(path)
    assert base.code == 0, base.err
    return {"root": root, "archive": path, "base": base, "n": len(ims)}


def test_an_image_member_inflating_to_half_a_gigabyte_is_refused_before_reading(project, tmp_path):
    with zipfile.ZipFile(project["archive"]) as zf:
        name = next(n for n in zf.namelist() if n.startswith("images/"))
        png = zf.read(name)
    bad = tmp_path / "bad.cmproj"
    _replace_member(project["archive"], name, png, 512 << 20, bad)
    assert bad.stat().st_size < 8 << 20
    r = load_in_child(bad)
    assert_one_error(r, name, "refused before reading it", prefix="error:")
    assert_bounded(r, project["base"])


def test_a_huge_project_json_is_refused_before_reading_it(project, tmp_path):
    bad = tmp_path / "bad.cmproj"
    _replace_member(project["archive"], "project.json", b'{"format": "classmap-studio-project", "x": "', 400 << 20,
                    bad)
    r = load_in_child(bad)
    assert_one_error(r, "project.json", "refused before reading it", prefix="error:")
    assert_bounded(r, project["base"])


def test_a_huge_project_json_in_a_folder_is_refused_before_reading_it(project, tmp_path):
    folder = save_project(Project(tiny_set()), tmp_path / "folder")
    with open(folder / "project.json", "r+b") as fh:  # 1.2 GB, sparse: costs no disk
        fh.truncate(1200 << 20)
    r = load_in_child(folder)
    assert_one_error(r, "project.json", "too large", prefix="error:")
    assert_bounded(r, project["base"])


def _many_entries(path: Path, n: int) -> None:
    """A zip of ``n`` empty files written by hand (zipfile would hold n ZipInfo objects here too)."""
    local, central = bytearray(), bytearray()
    for i in range(n):
        name = f"images/0000-a/{i:09d}.png".encode()
        offset = len(local)
        local += struct.pack("<4sHHHHHIIIHH", b"PK\x03\x04", 20, 0, 0, 0, 0, 0, 0, 0, len(name), 0) + name
        central += struct.pack("<4sHHHHHHIIIHHHHHII", b"PK\x01\x02", 20, 20, 0, 0, 0, 0, 0, 0, 0, len(name), 0, 0,
                               0, 0, 0, offset) + name
    n16 = min(n, 0xFFFF)
    end = struct.pack("<4sHHHHIIH", b"PK\x05\x06", 0, 0, n16, n16, len(central), len(local), 0)
    if n > 0xFFFF:  # Zip64 end record and locator
        z64 = struct.pack("<4sQHHIIQQQQ", b"PK\x06\x06", 44, 45, 45, 0, 0, n, n, len(central), len(local))
        loc = struct.pack("<4sIQI", b"PK\x06\x07", 0, len(local) + len(central), 1)
        end = z64 + loc + end
    path.write_bytes(bytes(local + central + end))


def test_an_archive_listing_500000_entries_is_refused_before_listing_them(project, tmp_path):
    bad = tmp_path / "many.cmproj"
    _many_entries(bad, 500_000)
    r = load_in_child(bad)
    assert_one_error(r, "500000 entries", prefix="error:")
    assert_bounded(r, project["base"])


@pytest.fixture
def linked_project(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / ".secret").write_text("not for the project")
    (outside / "photo.png").write_bytes(b"\x89PNG not really")
    folder = save_project(Project(tiny_set()), tmp_path / "p")
    os.symlink(outside, folder / "captures")
    return folder


def test_a_captures_link_out_of_a_folder_project_is_refused_on_load(linked_project):
    with pytest.raises(ModelFormatError, match="captures/ is a link") as exc:
        load_project(linked_project)
    assert "\n" not in str(exc.value)
    r = load_in_child(linked_project)
    assert_one_error(r, "captures/ is a link", prefix="error:")


@pytest.mark.parametrize("target", ["folder", "archive"])
def test_saving_never_copies_files_from_behind_a_captures_link(linked_project, tmp_path, target):
    dest = linked_project if target == "folder" else tmp_path / "out.cmproj"
    save_project(Project(tiny_set()), dest)
    if target == "archive":
        with zipfile.ZipFile(dest) as zf:
            assert not [n for n in zf.namelist() if n.startswith("captures/")]
    else:
        copied = [p for p in dest.rglob("*") if p.name in (".secret", "photo.png") and not p.is_symlink()
                  and dest in p.parents and "outside" not in str(p.resolve())]
        assert not copied
    outside = linked_project.parent / "outside"
    assert sorted(p.name for p in outside.iterdir()) == [".secret", "photo.png"]  # nothing moved out either


def test_a_killed_saves_temporary_model_folders_are_removed_by_the_next_save(tmp_path, monkeypatch):
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp))
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    dead_pid = int(dead.stdout)
    stale = tmp / f"classmap-model-{dead_pid}-abc"
    (stale / "model").mkdir(parents=True)
    (stale / "model" / "arrays.npz").write_bytes(b"x" * 1000)
    alive = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        busy = tmp / f"classmap-model-{alive.pid}-def"  # a save running in another process
        busy.mkdir()
        other = tmp / "classmap-model-notours"
        other.mkdir()
        save_project(Project(tiny_set(), recogniser=tiny_model()), tmp_path / "p.cmproj")
        assert not stale.exists() and busy.exists() and other.exists()
        assert not [p for p in tmp.iterdir() if p.name.startswith(f"classmap-model-{os.getpid()}-")]
    finally:
        alive.kill()
        alive.wait()
