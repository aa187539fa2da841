"""Issue 13 through the command line: every bad input, bad option, full or read-only disk ends in
one line ``classmap: error: ...`` and exit status 2, found before any training; never a traceback."""
from __future__ import annotations

import errno
import os
import shutil
from pathlib import Path

import cv2
import numpy as np
import pytest

from classmap_gui.cli import main

pytestmark = pytest.mark.timeout(120)
FAST = ["--features", "pixels", "--bank", "ova-ridge", "--size", "8x8"]


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    root = tmp_path_factory.mktemp("data") / "set"
    rng = np.random.default_rng(0)
    for c, name in enumerate(("a", "b", "c")):
        (root / name).mkdir(parents=True)
        for i in range(6):
            img = rng.integers(0, 60, (8, 8)).astype(np.uint8)
            img[c * 2:c * 2 + 3] += 150
            cv2.imwrite(str(root / name / f"{i}.png"), img)
    return root


@pytest.fixture(scope="module")
def model(data, tmp_path_factory):
    out = tmp_path_factory.mktemp("model") / "m"
    assert main(["train", "--data", str(data), *FAST, "--out", str(out)]) == 0
    return out


def one_line_error(capsys, argv: list[str], *needles: str, code: int = 2) -> str:
    capsys.readouterr()
    assert main(argv) == code
    err = capsys.readouterr().err.strip()
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("classmap: error:"), err
    for n in needles:
        assert n in lines[0], (n, lines[0])
    return lines[0]


@pytest.fixture
def no_training(monkeypatch):
    """Fail the test if the command gets as far as reading data (so a refusal came first)."""
    import classmap_gui.cli.train as train_cli

    def must_not_run(*a, **k):
        raise AssertionError("the data was read before the refusal")

    monkeypatch.setattr(train_cli, "load_data", must_not_run)


@pytest.mark.parametrize("extra, needle", [
    (["--seed", "-5"], "--seed -5"),
    (["--set", "bank.alpha=abc"], "bank.alpha='abc'"),
    (["--set", "bank.C=0"], "bank.C=0"),
    (["--set", "bank.C=-1"], "bank.C=-1"),
    (["--set", "bank.C=abc"], "bank.C='abc'"),
    (["--set", "bank.C=inf"], "bank.C=inf"),
    (["--set", "bank.tol=-1"], "bank.tol=-1"),
    (["--set", "bank.n_jobs=100000"], "bank.n_jobs=100000"),
    (["--set", "size=0"], "size=0"),
    (["--classmap", "n_triples=0"], "n_triples=0"),
    (["--classmap", "max_memory_mb=-1"], "max_memory_mb=-1"),
    (["--classmap", "hard_fraction=2"], "hard_fraction=2"),
    (["--classmap", "threshold=abc"], "threshold='abc'"),
    (["--classmap", "d"], "--classmap expects key=value"),
    (["--max-image-pixels", "0"], "--max-image-pixels"),
])
def test_bad_options_are_refused_before_reading_data(data, tmp_path, capsys, no_training, extra, needle):
    argv = ["train", "--data", str(data), *FAST, "--out", str(tmp_path / "m"), *extra]
    if "--max-image-pixels" in extra:  # an argparse type error: usage + one error line, also exit 2
        capsys.readouterr()
        with pytest.raises(SystemExit) as ex:
            main(argv)
        line = capsys.readouterr().err.splitlines()[-1]
        assert ex.value.code == 2 and "--max-image-pixels" in line and "must be a positive" in line
        return
    one_line_error(capsys, argv, needle)


@pytest.mark.parametrize("argv, needle", [
    (["--bank", "ova-rbf", "--set", "bank.gamma=-1"], "bank.gamma=-1"),
    (["--features", "rff", "--set", "sigma=inf"], "sigma=inf"),
    # an unprefixed key the feature map lacks goes to the bank, and is checked there
    (["--features", "pixels", "--bank", "compressive", "--set", "m=1"], "--set bank.m=1: m must lie between 2 and"),
    (["--features", "pixels", "--set", "m=64"], "--set m=64: neither the feature map 'pixels' nor the bank "
                                                "'ova-liblinear' has a parameter 'm'; the feature map's: size,"),
    (["--features", "hog", "--set", "n_jobs=0"], "--set n_jobs=0: n_jobs must lie between"),
    (["--bank", "ova-ridge", "--set", "bank.trainer=rbf"], "each trainer is a bank of its own; choose --bank from"),
    (["--bank", "ova-ridge", "--set", "bank.C=0.5"], "bank 'ova-ridge' has no parameter 'C'; valid: alpha, n_jobs"),
    (["--features", "sift"], "--features 'sift': choose from"),
])
def test_bad_component_options_are_refused_before_reading_data(data, tmp_path, capsys, no_training, argv, needle):
    one_line_error(capsys, ["train", "--data", str(data), "--size", "8x8", *argv, "--out", str(tmp_path / "m")],
                   needle)


@pytest.mark.parametrize("argv, needle", [
    (["--features", "kmeans", "--set", "n_patches=1000000000"], "--set n_patches"),
    (["--features", "rff", "--set", "m=10000000000"], "--set m"),
    (["--features", "pixels", "--classmap", "d=45,p=100"], "p=100"),
])
def test_options_that_cannot_fit_are_refused_once_the_data_is_known(data, tmp_path, capsys, argv, needle, monkeypatch):
    import classmap_gui.core.train.training as training

    monkeypatch.setattr(training, "train", lambda *a, **k: pytest.fail("training started"))
    one_line_error(capsys, ["train", "--data", str(data), "--size", "8x8", "--bank", "ova-ridge", *argv,
                            "--out", str(tmp_path / "m")], needle)


def test_auto_sizes_pass_the_memory_check_and_train(data, tmp_path, capsys):
    argv = ["train", "--data", str(data), "--size", "8x8", "--bank", "ova-ridge", "--features", "kmeans",
            "--set", "patch_size=auto,n_patches=auto,n_centroids=8,kmeans_max_iter=2", "--out", str(tmp_path / "m")]
    assert main(argv) == 0, capsys.readouterr().err
    assert (tmp_path / "m" / "model.json").is_file()


def test_unusable_out_folders_are_refused_before_reading_data(data, tmp_path, capsys, no_training, monkeypatch):
    base = ["train", "--data", str(data), *FAST, "--out"]
    (tmp_path / "afile").write_text("x")
    one_line_error(capsys, base + [str(tmp_path / "afile" / "sub")], "is not a folder")
    one_line_error(capsys, base + [str(tmp_path / "afile")], "is a file")
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "notes.txt").write_text("keep me")
    one_line_error(capsys, base + [str(tmp_path / "docs")], "left untouched")
    assert (tmp_path / "docs" / "notes.txt").read_text() == "keep me"

    import classmap_gui.core.store.format as fmt

    def read_only(*a, **k):
        raise OSError(errno.EROFS, os.strerror(errno.EROFS))

    with monkeypatch.context() as m:
        m.setattr(fmt.tempfile, "mkdtemp", read_only)
        one_line_error(capsys, base + [str(tmp_path / "new")], "cannot create files in", "Read-only file system")
    real_statvfs = os.statvfs

    class Full:
        def __init__(self, st):
            self.f_frsize, self.f_bavail = st.f_frsize, 1

    monkeypatch.setattr(fmt.os, "statvfs", lambda p: Full(real_statvfs(p)))
    one_line_error(capsys, base + [str(tmp_path / "new")], "free some space")


def test_a_full_disk_while_saving_after_training_is_one_line_and_keeps_the_old_model(data, model, tmp_path, capsys,
                                                                                     monkeypatch):
    import classmap_gui.core.store.atomic as atomic

    target = tmp_path / "m"
    shutil.copytree(model, target)
    before = (target / "arrays.npz").read_bytes()

    def full(fd):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(atomic.os, "fsync", full)
    one_line_error(capsys, ["train", "--data", str(data), *FAST, "--seed", "3", "--out", str(target)],
                   "No space left on device", "unchanged")
    assert (target / "arrays.npz").read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m"]


def test_out_dot_inside_a_model_folder_replaces_it_and_keeps_other_files(data, model, tmp_path, capsys, monkeypatch):
    target = tmp_path / "m"
    shutil.copytree(model, target)
    (target / "README.txt").write_text("mine")
    monkeypatch.chdir(target)
    capsys.readouterr()
    assert main(["train", "--data", str(data), *FAST, "--out", "."]) == 0
    out = capsys.readouterr().out
    assert "kept 1 file(s)" in out and "README.txt" in out
    assert (target / "README.txt").read_text() == "mine" and (target / "model.json").is_file()


def test_damaged_model_files_are_one_line(model, data, tmp_path, capsys):
    bad = tmp_path / "bad"
    shutil.copytree(model, bad)
    (bad / "model.json").write_text("[" * 100_000 + "]" * 100_000)
    one_line_error(capsys, ["eval", str(bad), "--data", str(data)], "nested too deeply")
    (bad / "model.json").unlink()
    os.mkfifo(bad / "model.json")
    one_line_error(capsys, ["predict", str(bad), str(data / "a" / "0.png")], "FIFO")


def test_class_folder_names_that_would_break_an_export_are_refused_by_train(data, tmp_path, capsys):
    root = tmp_path / "d"
    shutil.copytree(data, root)
    shutil.copytree(root / "a", root / os.fsdecode(b"caf\xe9"))
    one_line_error(capsys, ["train", "--data", str(root), *FAST, "--out", str(tmp_path / "m")], "not valid UTF-8")


def test_add_class_refuses_names_no_export_could_hold(model, data, tmp_path, capsys):
    for name, needle in (("", "cannot be empty"), ("two\nlines", "control characters"), ("a", "already has")):
        one_line_error(capsys, ["add-class", str(model), "--name", name, "--images", str(data / "a")], needle)


def test_predict_reads_the_same_files_train_does_and_keeps_opencv_quiet(model, data, tmp_path, capfd):
    gif = tmp_path / "x.gif"
    gif.write_bytes(b"GIF89a" + bytes(20))
    broken = tmp_path / "broken.png"
    broken.write_bytes((data / "a" / "0.png").read_bytes()[:60])
    good = data / "b" / "1.png"
    capfd.readouterr()
    assert main(["predict", str(model), str(gif), str(broken), str(good), "--top", "1"]) == 1
    cap = capfd.readouterr()
    assert cap.err.splitlines() == [f"{gif}: cannot read image: GIF images are not read (an animated GIF would be "
                                    f"classified by its first frame alone); convert it to PNG",
                                    f"{broken}: cannot read image: the PNG data is corrupt, truncated or of an "
                                    f"unsupported kind"]
    assert "[ WARN" not in cap.err and cap.out.startswith(f"{good}: b")


def test_an_internal_error_says_so_in_one_line_with_its_log(data, tmp_path, capsys, monkeypatch):
    import classmap_gui.cli.train as train_cli

    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))

    def bug(*a, **k):
        raise KeyError("oops")

    monkeypatch.setattr(train_cli, "load_data", bug)
    capsys.readouterr()
    assert main(["train", "--data", str(data), *FAST, "--out", str(tmp_path / "m")]) == 70
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("classmap: internal error (KeyError") and "this is a bug" in err[0]
    log = Path(err[0].rsplit("log in ", 1)[1])
    assert log.is_file() and "Traceback" in log.read_text() and "oops" in log.read_text()


def test_an_unusable_out_is_refused_without_loading_the_numeric_stack(data, tmp_path):
    """The refusal comes before scikit-learn, numba or the data are loaded: it costs the start of
    Python and nothing more (measured 0.77 s wall at load 7 on 2 cores; tests assert no times)."""
    import subprocess
    import sys

    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.txt").write_text("x")
    code = ("import sys; from classmap_gui.cli import main; "
            f"rc = main(['train', '--data', {str(data)!r}, '--out', {str(tmp_path / 'docs')!r}]); "
            "print(rc, sorted(m for m in ('sklearn', 'numba', 'cv2', 'scipy') if m in sys.modules))")
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60)
    assert res.stdout.strip() == "2 []", res.stdout + res.stderr
    assert res.stderr.strip().startswith("classmap: error:") and "left untouched" in res.stderr


# ---------------------------------------------------------------- issue 26 item 9

def test_a_scheduler_address_that_is_not_a_dask_scheduler_is_reported_as_such(data, tmp_path, capsys):
    """A peer that answers with a frame length of 64 TiB used to end as "out of memory"."""
    import socket
    import struct
    import threading

    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()

    def serve():
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            try:
                conn.sendall(struct.pack("<Q", 2 ** 46) + b"x" * 64)
                conn.recv(100)
            except OSError:
                pass
            finally:
                conn.close()

    threading.Thread(target=serve, daemon=True).start()
    try:
        line = one_line_error(capsys, ["train", "--data", str(data), *FAST, "--out", str(tmp_path / "m"),
                                       "--scheduler", f"tcp://127.0.0.1:{server.getsockname()[1]}"],
                              "did not answer as a Dask scheduler")
        assert "memory" not in line.split("(")[0]
    finally:
        server.close()


def test_the_error_log_never_follows_a_link_when_the_log_folder_is_not_writable(tmp_path, monkeypatch, capsys):
    import tempfile

    import classmap_gui.cli.train as train_cli

    victim = tmp_path / "victim.txt"
    victim.write_text("keep me\n")
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    os.symlink(victim, tmp / "classmap-cli.log")  # the fixed name another user could have prepared
    monkeypatch.setattr(tempfile, "tempdir", str(tmp))
    monkeypatch.setenv("XDG_STATE_HOME", str(victim / "not-a-folder"))  # the user's log folder cannot be made

    def bug(*a, **k):
        raise RuntimeError("a bug")

    monkeypatch.setattr(train_cli, "load_data", bug)
    capsys.readouterr()
    assert main(["train", "--data", "digits", *FAST, "--out", str(tmp_path / "m")]) == 70
    err = capsys.readouterr().err
    log = Path(err.rsplit("log in ", 1)[1].strip())
    assert victim.read_text() == "keep me\n"
    assert log.parent == tmp and not log.is_symlink() and "a bug" in log.read_text()
    assert (log.stat().st_mode & 0o077) == 0  # private
