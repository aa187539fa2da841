"""Where joblib work runs: this process (loky processes or threads) or a Dask cluster.

Core code never picks a cluster itself. It calls ``joblib.Parallel(n_jobs=..., prefer="threads")``
(a *soft* hint, never ``backend=...``, which would pin the work to this machine) and inherits the
backend chosen by the caller with :func:`parallel_backend`::

    with parallel_backend("dask", scheduler="tcp://10.0.0.5:8786"):
        bank.fit(X, y)              # one-vs-all tasks run on the cluster's workers
        F = encode(features, images)  # image chunks run on the cluster's workers

This is joblib's own mechanism (``joblib.parallel_config``) wrapped so that the CLI and the app
have one call with one set of errors. The ``dask`` backend needs the optional install extra
``classmap-studio[cluster]`` (``dask.distributed``); without a scheduler address it starts a local
cluster of worker processes for the duration of the block. Large arguments (the feature matrix)
are scattered to the workers once per ``Parallel`` call by joblib's Dask backend, not sent with
every task.

A Dask worker imports ``classmap_gui`` to run the tasks, so the package (same version) must be
installed in the workers' environment.
"""
from __future__ import annotations

import contextlib
from typing import Iterator

from .errors import ConfigError

BACKENDS = ("loky", "threading", "dask")


@contextlib.contextmanager
def parallel_backend(backend: str | None = None, scheduler: str | None = None, *, n_jobs: int | None = None,
                     n_workers: int | None = None, timeout: float = 10.0) -> Iterator[dict]:
    """Run every ``joblib.Parallel`` call inside the block on ``backend``.

    backend : ``None`` (change nothing: each call keeps its own preference, e.g. the banks' threads),
        ``"loky"`` (processes on this machine for every call), ``"threading"`` (threads of this
        process) or ``"dask"`` (a Dask cluster).
    scheduler : Dask only: the scheduler address (``tcp://host:8786``). ``None`` starts a local
        cluster of ``n_workers`` processes (default: one per core) that is shut down on exit.
    n_jobs : the default worker count of ``Parallel`` calls that pass ``n_jobs=None``.
    timeout : seconds to wait for the scheduler to answer.

    Yields a dict describing where work runs (``backend``, and for Dask ``scheduler``,
    ``workers``, ``threads``), for logs and the app's status line.
    Raises :class:`ConfigError` for an unknown backend, a missing ``dask.distributed``, or a
    scheduler that cannot be reached.
    """
    import joblib

    if backend is None and scheduler is not None:
        backend = "dask"  # a scheduler address alone means the cluster
    if backend is None:
        yield {"backend": "default"}
        return
    if backend not in BACKENDS:
        raise ConfigError(f"unknown parallel backend {backend!r}; choose one of {', '.join(BACKENDS)}")
    if scheduler is not None and backend != "dask":
        raise ConfigError(f"a scheduler address is only used with the dask backend, not {backend!r}")
    if backend != "dask":
        with joblib.parallel_config(backend=backend, n_jobs=n_jobs):
            yield {"backend": backend}
        return

    client, cluster = _dask_client(scheduler, n_workers, timeout)
    try:
        info = client.scheduler_info()
        workers = info.get("workers", {})
        desc = {"backend": "dask", "scheduler": client.scheduler.address, "workers": len(workers),
                "threads": int(sum(w.get("nthreads", 0) for w in workers.values()))}
        with joblib.parallel_config(backend="dask", n_jobs=n_jobs):
            yield desc
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


def _dask_client(scheduler: str | None, n_workers: int | None, timeout: float):
    """``(Client, LocalCluster | None)`` for ``scheduler``, or for a new local cluster."""
    try:
        from distributed import Client, LocalCluster
    except ImportError as exc:
        raise ConfigError("the dask backend needs dask.distributed: "
                          "pip install 'classmap-studio[cluster]'") from exc
    if scheduler is None:
        cluster = LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=True,
                               dashboard_address=None)
        return Client(cluster), cluster
    try:
        client = Client(scheduler, timeout=f"{float(timeout)}s")
    except (OSError, TimeoutError) as exc:
        raise ConfigError(f"cannot reach the Dask scheduler at {scheduler!r} ({exc}); start one with "
                          "`dask scheduler` and workers with `dask worker ADDRESS`, or check the address") from exc
    except Exception as exc:  # noqa: BLE001 - MemoryError, struct.error, ...: the peer spoke another protocol
        raise ConfigError(f"{scheduler!r} did not answer as a Dask scheduler ({type(exc).__name__}: "
                          f"{str(exc)[:120]}); check the address and port (`dask scheduler` prints it)") from None
    return client, None


def describe_backend() -> str:
    """The joblib backend active here: ``"loky"`` outside any block, ``"threading"``, ``"dask"``..."""
    from joblib.parallel import get_active_backend

    backend, _ = get_active_backend()
    name = type(backend).__name__.replace("Backend", "").lower()
    return "dask" if name.startswith("dask") else name
