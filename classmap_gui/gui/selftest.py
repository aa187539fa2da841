"""``classmap-gui --self-test``: a headless check that the installed app works end to end."""
from __future__ import annotations

import os
import sys
import time

from .driving import settle


def self_test() -> int:
    """Load the demo, train a small model in the window's project, predict; 0 when it clearly beats chance."""
    if not os.environ.get("QT_QPA_PLATFORM"):
        os.environ["QT_QPA_PLATFORM"] = "offscreen"
    import numpy as np
    from PySide6.QtWidgets import QApplication

    from ..core.data import load_dataset
    from ..core.train.training import TrainConfig, train
    from .demo import demo_dataset, demo_settings
    from .mainwindow import MainWindow
    from .panels.train import held_out_part

    app = QApplication.instance() or QApplication(sys.argv[:1])
    win = MainWindow()
    win.show()
    t0 = time.perf_counter()
    # The demo set with the demo's own settings (features, bank, ClassMap), on its first 40 classes so
    # the check takes seconds: it exercises the same code a person's first click does.
    name = demo_dataset()
    full = load_dataset(name)
    ims = full.select_classes(np.arange(min(40, full.n_classes)))
    settings = demo_settings(name)
    if settings.get("classmap"):
        settings["classmap"] = dict(settings["classmap"], d=8, p=6)
    res = train(ims, TrainConfig.from_dict(settings))
    test = held_out_part(ims, settings)  # the held-out images train() reported on
    pred = res.recogniser.predict(res.recogniser.prepare(test.images), top=3)
    acc = float(np.mean(pred.labels == test.labels))
    win.project.reset(ims)
    win.project.set_trained(res.recogniser, res.report)
    # the Explore map's computation, t-SNE included: the installer carries openTSNE's compiled parts
    from ..core.explore.embedding_map import tsne_layout
    from ..core.explore.overview import explore_views
    data = explore_views(res.recogniser, test.images[:60], test.labels[:60])
    mapped = data.points is None or bool(np.isfinite(tsne_layout(data.points.stacked, max_iter=250)).all())
    # the filter index of 20 000+ class models (an HNSW graph): the installer carries faiss and its CPU modules
    from ..core.classify.filters.graph import GraphFilterIndex
    E = np.random.default_rng(0).random((300, 8), dtype=np.float32)
    graph = GraphFilterIndex(m=8, ef_search=32).fit(E, np.ones(8, np.float32))
    graph_ok = bool(np.array_equal(graph.search(E, 1)[0][:, 0], np.arange(300)))
    settle(app, 0.2)
    win.setProperty("no_confirm", True)  # the trained project is unsaved: no "discard?" dialog to block on
    win.close()
    ok = acc > 0.5 and pred.top_classes.shape == (len(test), 3) and mapped and graph_ok
    print(f"self-test {'passed' if ok else 'FAILED'}: {name}, {ims.n_classes} classes, {len(ims)} images, "
          f"test accuracy {100 * acc:.1f}%, graph filter index {'ok' if graph_ok else 'WRONG'}, "
          f"{time.perf_counter() - t0:.1f} s")
    return 0 if ok else 1
