"""Training and encoding on a real Dask cluster give the same model as on this machine.

The test starts a scheduler and two single-thread worker processes on 127.0.0.1 (free ports),
sends work through :func:`parallel_backend`, and stops the processes afterwards.
"""
from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

distributed = pytest.importorskip("distributed")  # in the test extra; a bare install skips

from classmap_gui.core.classify.banks.ova import OneVsAllSVM  # noqa: E402
from classmap_gui.core.train.encode import encode  # noqa: E402
from classmap_gui.core.errors import ConfigError  # noqa: E402
from classmap_gui.core.features.kmeans import KMeansFeatures  # noqa: E402
from classmap_gui.core.parallel import describe_backend, parallel_backend  # noqa: E402

REPO = Path(__file__).resolve().parents[2]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _dask_cli() -> list[str]:
    exe = Path(sys.executable).with_name("dask")
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "dask"]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """Address of a local scheduler with two worker processes; all three stopped afterwards."""
    port = _free_port()
    addr = f"tcp://127.0.0.1:{port}"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
               OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    logs = tmp_path_factory.mktemp("dask")
    procs = []

    def start(args, name):
        fh = open(logs / f"{name}.log", "wb")
        procs.append((subprocess.Popen(_dask_cli() + args, env=env, stdout=fh, stderr=subprocess.STDOUT,
                                       cwd=str(logs)), fh))

    try:
        start(["scheduler", "--host", "127.0.0.1", "--port", str(port), "--no-dashboard"], "scheduler")
        for i in range(2):
            start(["worker", addr, "--host", "127.0.0.1", "--nthreads", "1", "--nworkers", "1",
                   "--no-dashboard", "--memory-limit", "0", "--local-directory", str(logs / f"w{i}")], f"worker{i}")
        client = None
        deadline = time.monotonic() + 90
        while client is None:
            try:
                client = distributed.Client(addr, timeout="5s")
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.5)
        client.wait_for_workers(2, timeout=90)
        client.close()
        yield addr
    finally:
        try:  # the quick way: the scheduler tells its workers to close
            with distributed.Client(addr, timeout="5s") as c:
                c.shutdown()
        except Exception:  # noqa: BLE001 - best effort: the processes are killed below either way
            pass
        for p, _ in reversed(procs):
            p.terminate()
        for p, fh in reversed(procs):
            try:
                p.wait(timeout=5)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
            fh.close()


def _digits():
    from sklearn.datasets import load_digits

    d = load_digits()
    images = np.clip(d.images * 16, 0, 255).astype(np.uint8)  # (n, 8, 8) uint8 like an ImageSet
    return images[:400], d.target[:400]


def test_ova_liblinear_bank_trained_on_the_cluster_equals_the_local_one(cluster):
    images, y = _digits()
    X = images.reshape(len(images), -1).astype(np.float32) / 255.0
    local = OneVsAllSVM(C=1.0, n_jobs=2, random_state=0).fit(X, y)
    with parallel_backend("dask", scheduler=cluster) as where:
        assert where["workers"] == 2
        assert describe_backend() == "dask"
        with distributed.get_task_stream() as ts:
            remote = OneVsAllSVM(C=1.0, n_jobs=2, random_state=0).fit(X, y)
    ran_on = {t["worker"] for t in ts.data}
    assert len(ran_on) == 2, f"tasks ran on {ran_on}, expected both workers"
    np.testing.assert_array_equal(remote.classes_, local.classes_)
    np.testing.assert_allclose(remote.coef_, local.coef_, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(remote.intercept_, local.intercept_, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(remote.predict(X), local.predict(X))


def test_kmeans_encoding_on_the_cluster_equals_the_local_one(cluster, tmp_path):
    images, _ = _digits()
    feats = KMeansFeatures(patch_size=4, n_centroids=16, n_patches=3000, n_jobs=1, random_state=0).fit(images)
    local = feats.transform(images)
    with parallel_backend("dask", scheduler=cluster):
        with distributed.get_task_stream() as ts:
            remote = encode(feats, images, chunk_size=50)
            on_disk = encode(feats, images, chunk_size=64, out=tmp_path / "features.npy")
    assert len({t["worker"] for t in ts.data}) == 2
    np.testing.assert_allclose(remote, local, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.load(tmp_path / "features.npy"), local, rtol=1e-5, atol=1e-6)
    assert on_disk.shape == local.shape


def test_train_on_the_cluster_gives_the_local_recogniser(cluster):
    from classmap_gui.core.data import ImageSet
    from classmap_gui.core.train.training import TrainConfig, train

    images, y = _digits()
    data = ImageSet(images, y, [str(c) for c in range(10)], name="digits")
    config = TrainConfig(features="pixels", bank="ova-liblinear", bank_params={"random_state": 0}, seed=0)
    local = train(data, config).recogniser
    with parallel_backend("dask", scheduler=cluster):
        with distributed.get_task_stream() as ts:
            remote = train(data, config).recogniser
    assert len({t["worker"] for t in ts.data}) == 2
    np.testing.assert_allclose(remote.classifier.coef_, local.classifier.coef_, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(remote.predict(images[:50]).labels, local.predict(images[:50]).labels)


def test_an_unreachable_scheduler_is_a_clear_error():
    port = _free_port()  # nothing listens there
    with pytest.raises(ConfigError, match="cannot reach the Dask scheduler"):
        with parallel_backend("dask", scheduler=f"tcp://127.0.0.1:{port}", timeout=1.0):
            pass


def test_local_backends_and_bad_names():
    with parallel_backend("threading"):
        assert describe_backend() == "threading"
    assert describe_backend() == "loky"
    with pytest.raises(ConfigError, match="unknown parallel backend"):
        with parallel_backend("spark"):
            pass
    with pytest.raises(ConfigError, match="only used with the dask backend"):
        with parallel_backend("loky", scheduler="tcp://127.0.0.1:1"):
            pass
