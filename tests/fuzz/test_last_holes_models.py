"""Issue 26 items 2, 5, 6, 8 through the commands people run, each in a child process with its peak
memory measured against the same command on a harmless model: a model whose arrays inflate from 1 MB
to 1 GiB (`predict`, the exported predict.py), FIFOs where predict.py expects files, a model file
overwritten in place while in use, and `predict` from a read-only install with no writable home."""
from __future__ import annotations

import os
import shutil
import stat
import sys
import tempfile
from pathlib import Path

import pytest

from hostile_files import bomb_arrays, sparse_arrays
from measured import REPO, assert_bounded, assert_one_error, classmap, run, train_and_export

pytestmark = pytest.mark.timeout(600)


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    return train_and_export(tmp_path_factory.mktemp("models"))


def test_predict_refuses_a_model_inflating_to_a_gibibyte_before_inflating(setup, tmp_path):
    base = classmap("predict", str(setup["model"]), str(setup["image"]))
    assert base.code == 0
    bad = tmp_path / "bomb"
    shutil.copytree(setup["model"], bad)
    bomb_arrays(bad)
    assert (bad / "arrays.npz").stat().st_size < 4 << 20
    r = classmap("predict", str(bad), str(setup["image"]))
    assert_one_error(r, "arrays.npz", "refused before inflating")
    assert_bounded(r, base)


def test_predict_refuses_a_sparse_gibibyte_member_before_reading_it(setup, tmp_path):
    """Stored, not deflated: the 1 GiB are a hole in the file. The model's shapes are checked before its
    pages are read (the file is mapped, not read, when it occupies less disk than its size)."""
    base = classmap("predict", str(setup["model"]), str(setup["image"]))
    bad = tmp_path / "sparse"
    shutil.copytree(setup["model"], bad)
    sparse_arrays(bad)
    assert (bad / "arrays.npz").stat().st_blocks * 512 < 4 << 20
    r = classmap("predict", str(bad), str(setup["image"]))
    assert_one_error(r, "model file is invalid")
    assert_bounded(r, base)


def test_the_exported_predictor_refuses_the_same_bomb_before_inflating(setup, tmp_path):
    predict = setup["export"] / "predict.py"
    base = run(["python", "-I", str(predict), str(setup["image"])])
    assert base.code == 0, base.err
    bad = tmp_path / "export"
    shutil.copytree(setup["export"], bad)
    bomb_arrays(bad)
    r = run(["python", "-I", str(bad / "predict.py"), str(setup["image"])])
    assert_one_error(r, "arrays.npz", "refused before inflating", prefix="predict.py: error:")
    assert_bounded(r, base)


@pytest.mark.parametrize("which", ["model.json", "arrays.npz"])
def test_the_exported_predictor_does_not_hang_on_a_fifo_in_the_model(setup, tmp_path, which):
    bad = tmp_path / "export"
    shutil.copytree(setup["export"], bad)
    (bad / which).unlink()
    os.mkfifo(bad / which)
    r = run(["python", "-I", str(bad / "predict.py"), str(setup["image"])], timeout=60)
    assert_one_error(r, "not a regular file", prefix="predict.py: error:")


def test_a_model_overwritten_in_place_while_in_use_keeps_predicting(tmp_path):
    """`cp other/arrays.npz model/arrays.npz` truncates and rewrites the file a running app loaded: a
    memory map of it would die of SIGBUS; arrays read into memory are unaffected."""
    script = f"""
import numpy as np
from classmap_gui.core.classify.banks.ridge_moments import ova_ridge_bank
from classmap_gui.core.features.pixels import PixelFeatures
from classmap_gui.core.recogniser import Recogniser
rng = np.random.default_rng(0)
C, D = 70_000, 64  # 18 MB of weights: large enough that the store used to map them
bank = ova_ridge_bank(rng.standard_normal((C, D)).astype(np.float32), rng.standard_normal(C).astype(np.float32), 1.0)
rec = Recogniser(PixelFeatures().fit(np.zeros((1, 8, 8), np.uint8)), bank, None, [f"c{{i}}" for i in range(C)],
                 (8, 8), True)
path = rec.save({str(tmp_path / 'm')!r})
images = rng.integers(0, 256, (3, 8, 8), dtype=np.uint8)
before = rec.predict(images, top=3).top_classes
loaded = Recogniser.load(path)
npz = path / "arrays.npz"
size = npz.stat().st_size
with open(npz, "r+b") as fh:  # what cp does: the same file, truncated, then rewritten
    fh.truncate(0)
    fh.flush()
    fh.write(bytes(size // 3))
after = loaded.predict(images, top=3).top_classes
print("same" if np.array_equal(before, after) else "different")
"""
    r = run(["python", "-c", script], timeout=300)
    assert r.code == 0 and r.out.strip() == "same", (r.code, r.err[-1500:])


def _readonly_run(args: list[str], tmp: Path):
    """``classmap ARGS`` as it runs from a read-only install with a read-only home and no NUMBA_CACHE_DIR:
    as root, the child becomes `nobody` (root writes anywhere); otherwise the package is a read-only copy.
    The home folder is read-only either way."""
    home = tmp / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("NUMBA_") and k != "XDG_CACHE_HOME"}
    env["HOME"] = str(home)
    env["TMPDIR"] = str(tmp / "tmp")
    (tmp / "tmp").mkdir()
    os.chmod(tmp / "tmp", 0o1777)
    prefix = []
    python = sys.executable
    if os.geteuid() == 0 and shutil.which("setpriv"):  # root may write anywhere: run as `nobody`
        prefix = [shutil.which("setpriv"), "--reuid=65534", "--regid=65534", "--clear-groups"]
        pkg = tmp / "install"
        _read_only_copy(REPO / "classmap_gui", pkg / "classmap_gui")
        python, runtime_env = _runtime_for(prefix, tmp, args)
        env.update(runtime_env)
    else:
        pkg = tmp / "install"
        shutil.copytree(REPO / "classmap_gui", pkg / "classmap_gui", ignore=shutil.ignore_patterns("__pycache__"))
        for d, dirs, files in os.walk(pkg):
            for n in dirs + files:
                p = Path(d) / n
                p.chmod(p.stat().st_mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))
    home.chmod(0o555)
    env["PYTHONPATH"] = os.pathsep.join([str(pkg)] + ([env["_SITE"]] if "_SITE" in env else []))
    env.pop("_SITE", None)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    import subprocess

    return subprocess.run([*prefix, python, "-m", "classmap_gui.cli", *args], env=env, capture_output=True,
                          text=True, timeout=600, cwd=str(tmp))


def _link_or_copy(src: Path, dst: Path) -> None:
    """``dst`` as a hard link of ``src`` (instant, no space), a copy where the two lie on different disks."""
    dst.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.link(src, dst)
    except OSError:
        shutil.copy2(src, dst)


def _stage(src: Path, dst: Path, skip=()) -> None:
    """The tree ``src`` at ``dst``, every folder 0755 and file readable by all (hard links where possible)."""
    for d, dirs, files in os.walk(src):
        dirs[:] = [x for x in dirs if x not in skip]
        out = dst / Path(d).relative_to(src)
        out.mkdir(parents=True, exist_ok=True)
        out.chmod(0o755)
        for f in files:
            if not (Path(d) / f).is_symlink():
                _link_or_copy(Path(d) / f, out / f)
            else:
                (out / f).symlink_to(os.readlink(Path(d) / f))


def _read_only_copy(src: Path, dst: Path) -> None:
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns("__pycache__"))
    for d, dirs, files in os.walk(dst):
        os.chmod(d, 0o555)
        for n in files:
            (Path(d) / n).chmod(0o444)


def _runtime_for(prefix: list[str], tmp: Path, args: list[str]):
    """The Python `nobody` runs the CLI with, and its environment: this one when `nobody` can run it and read
    its packages; else a staged copy under ``tmp`` (the interpreter's prefix and the site-packages the
    command imports, hard-linked) — a checkout under a 0700 folder, or a Python under /root, is out of
    `nobody`'s reach, and the test must not depend on where they lie."""
    import subprocess

    probe = subprocess.run([*prefix, sys.executable, "-c", "import numpy, sklearn"], capture_output=True, timeout=120)
    if probe.returncode == 0:
        return sys.executable, {}
    # what the command imports, from site-packages: asked of this Python as root
    site = next(Path(p) for p in sys.path if p.endswith("site-packages") and Path(p).is_dir())
    listing = subprocess.run(
        [sys.executable, "-c", "import sys\nfrom classmap_gui.cli import main\ntry:\n    main(sys.argv[1:])\n"
         "except SystemExit:\n    pass\nprint('\\n'.join(sorted({str(getattr(m, '__file__', '') or '') for m in "
         "list(sys.modules.values())})))", *args], capture_output=True, text=True, timeout=600, cwd=str(REPO))
    tops = {Path(f).relative_to(site).parts[0] for f in listing.stdout.splitlines() if f.startswith(str(site))}
    tops |= {p.name for p in site.iterdir() if p.name.endswith(".libs")}  # the wheels' bundled shared libraries
    staged = tmp / "runtime"
    for name in sorted(tops):
        src = site / name
        (_stage(src, staged / "site-packages" / name) if src.is_dir() else
         _link_or_copy(src, staged / "site-packages" / name))
    base = Path(sys.base_prefix)
    ver = f"python{sys.version_info.major}.{sys.version_info.minor}"
    _stage(base / "bin", staged / "python" / "bin")
    _stage(base / "lib", staged / "python" / "lib",
           skip={"site-packages", "test", "idlelib", "tkinter", "turtledemo", "ensurepip", "lib2to3", "pkgconfig"})
    for d in (tmp, staged, staged / "python"):
        d.chmod(0o755)
    return (str(staged / "python" / "bin" / ver),
            {"_SITE": str(staged / "site-packages"), "LD_LIBRARY_PATH": str(staged / "python" / "lib"),
             "PYTHONHOME": str(staged / "python")})


def test_predict_works_from_a_read_only_install_with_no_writable_home(setup):
    tmp = Path(tempfile.mkdtemp(prefix="cm-readonly-"))
    try:
        os.chmod(tmp, 0o755)
        shutil.copytree(setup["model"], tmp / "model")
        shutil.copy(setup["image"], tmp / "image.png")
        for p in [tmp / "model", *(tmp / "model").iterdir(), tmp / "image.png"]:
            p.chmod(0o755 if p.is_dir() else 0o644)
        r = _readonly_run(["predict", str(tmp / "model"), str(tmp / "image.png")], tmp)
        assert r.returncode == 0 and str(tmp / "image.png") in r.stdout, r.stderr[-1500:]
    finally:
        for d, dirs, _ in os.walk(tmp):
            os.chmod(d, 0o755)
        shutil.rmtree(tmp, ignore_errors=True)
