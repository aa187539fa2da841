"""`make run` (a plain `classmap-gui`) opens the built-in demo the first time and the project saved last
after that, as the README says; the Makefile starts it that way."""
from pathlib import Path

import pytest

from classmap_gui.gui.app import _parse, open_at_start

ROOT = Path(__file__).resolve().parents[2]


def _window(qtbot):
    from classmap_gui.gui.mainwindow import MainWindow

    win = MainWindow()
    win.setProperty("no_confirm", True)
    qtbot.addWidget(win)
    win.show()
    return win


def test_first_start_opens_the_demo_and_later_the_last_project(qtbot, tmp_path, monkeypatch, shapes_folder):
    from classmap_gui.gui import demo
    from classmap_gui.gui import project as project_mod

    monkeypatch.setattr(project_mod, "default_capture_root", lambda: tmp_path / "captures")
    monkeypatch.setattr(demo, "demo_dataset", lambda: "digits")  # the small demo: a quick test
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg-data"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg-config"))
    run = [line for line in (ROOT / "Makefile").read_text().splitlines() if "bin/classmap-gui" in line]
    assert run and "--demo" not in run[0]  # `make run` starts the app plainly
    args = _parse([])
    win = _window(qtbot)
    assert open_at_start(win, args) == "demo"  # nothing saved yet
    qtbot.waitUntil(lambda: not win.runner.busy, timeout=120000)
    assert win.project.imageset.name == "digits"
    with qtbot.waitSignal(win.runner.finished, timeout=20000):
        win.dataset.import_folder(str(shapes_folder))
    saved = tmp_path / "mine.cmproj"
    with qtbot.waitSignal(win.runner.finished, timeout=60000):
        win.save_project(str(saved))
    win.close()
    win2 = _window(qtbot)
    assert open_at_start(win2, args) == "recent"
    qtbot.waitUntil(lambda: not win2.runner.busy, timeout=60000)
    assert win2.project.path == saved and win2.project.class_names == ["bars", "columns", "cross", "ring"]
    win2.close()


def test_the_readme_names_the_menu_items_as_the_menus_do(qtbot, window):
    import re

    menus = {}
    for top in window.menuBar().actions():
        items = [a.text().replace("&", "") for a in top.menu().actions() if a.text()]
        menus[top.text().replace("&", "")] = set(items)
    named = re.findall(r"\b(File|View) > ([^*(;,]+?)(?=\*|\s+(?:asks|keeps|in the|\())", (ROOT / "README.md").read_text())
    assert len(named) >= 5
    for menu, item in named:
        item = " ".join(item.split())  # a name wrapped across README lines reads as one
        assert item in menus[menu], f"README says {menu} > {item!r}; the menu has {sorted(menus[menu])}"


def test_the_app_freezes_its_start_up_objects_out_of_the_garbage_collector(qtbot, monkeypatch):
    """A full garbage collection over the imported libraries and the window held the window 170-200 ms each
    time one came due; the app freezes what start-up left alive before any project opens."""
    import gc

    from PySide6.QtWidgets import QApplication

    from classmap_gui.gui import app as app_mod
    from classmap_gui.gui import errorlog

    seen = {}

    def opened(win, args):
        qtbot.addWidget(win)
        seen["frozen"] = gc.get_freeze_count()
        return "demo"

    monkeypatch.setattr(errorlog, "setup", lambda: None)  # the test session keeps its own log and excepthook
    monkeypatch.setattr(app_mod, "open_at_start", opened)
    monkeypatch.setattr(QApplication, "exec", lambda self: 0)
    gc.unfreeze()
    try:
        assert app_mod.main([]) == 0
    finally:
        gc.unfreeze()
    assert seen["frozen"] > 50_000  # the libraries and the window (some 254 000 objects in the app)


def test_the_panel_table_is_what_the_window_and_the_panel_option_show(qtbot, window, capsys):
    """One list of panels: the tabs, the View menu and ``classmap-gui --panel`` all come from it, and each
    View item (and ``show_panel``) brings up the panel of its name."""
    import pytest

    from classmap_gui.gui.panel_table import PANELS

    tabs = window.tabs
    assert [tabs.tabText(i) for i in range(tabs.count())] == [p.title for p in PANELS]
    view = next(a.menu() for a in window.menuBar().actions() if a.text() == "&View")
    for i, (entry, action) in enumerate(zip(PANELS, view.actions(), strict=True)):
        assert action.text().replace("&", "") == entry.title and action.shortcut().toString() == f"Ctrl+{i + 1}"
        tabs.setCurrentIndex(0 if i else 1)
        action.trigger()
        assert tabs.currentWidget() is getattr(window, entry.name) and isinstance(tabs.currentWidget(), entry.load())
        window.show_panel(PANELS[0].name)
        assert tabs.currentIndex() == 0
        window.show_panel(entry.name)
        assert tabs.currentIndex() == i
        assert _parse(["--screenshot", "x.png", "--panel", entry.name]).panel == entry.name
    with pytest.raises(SystemExit):
        _parse(["--screenshot", "x.png", "--panel", "nowhere"])
    err = capsys.readouterr().err
    assert all(repr(p.name) in err for p in PANELS), err  # the refusal lists the table's names


@pytest.mark.parametrize("argv, needle", [
    (["--screenshot", "s.png", "--size", "100000x100000"], "--size '100000x100000'"),
    (["--screenshot", "s.png", "--size", "abc"], "--size 'abc'"),
    (["--screenshot", "s.png", "--size", "0x10"], "--size '0x10'"),
    (["--screenshot", "s.png", "--data", "nonexistent"], "--data 'nonexistent'"),
    (["--screenshot", "s.png", "--video", "missing.avi"], "--video 'missing.avi'"),
    (["missing-project"], "project 'missing-project'"),
])
def test_bad_command_line_options_are_one_line_and_exit_2_before_any_window(argv, needle, capsys, tmp_path,
                                                                             monkeypatch):
    """Issue 49 item 5: ``--size 100000x100000`` crashed, ``--size abc`` printed a traceback, ``--data
    nonexistent`` exited 0; each is refused as ``classmap`` refuses its options."""
    from classmap_gui.gui import app

    monkeypatch.chdir(tmp_path)
    assert app.main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("classmap-gui: error: ") and needle in err[0], err
    assert not (tmp_path / "s.png").exists()
