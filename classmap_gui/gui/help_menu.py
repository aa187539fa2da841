"""The window's *Help* menu: *Manual* (F1) opens the built manual, else the README, in the system's viewer;
*About ClassMap Studio* names the version."""
from __future__ import annotations

import sys
from pathlib import Path

from PySide6.QtCore import QUrl
from PySide6.QtGui import QAction, QDesktopServices, QKeySequence
from PySide6.QtWidgets import QMessageBox

def manual_path() -> Path | None:
    """The manual a person reads: ``build/docs/index.html`` (``make docs``) of the source tree, else its
    ``README.md`` (in the installed bundle: ``docs/index.html`` or ``README.md`` beside the app); None when
    this copy has neither."""
    here = Path(__file__).resolve()
    roots = [here.parents[2], here.parents[1]]
    if getattr(sys, "_MEIPASS", None):
        roots.insert(0, Path(sys._MEIPASS))
    for root in roots:
        for rel in ("build/docs/index.html", "docs/index.html", "README.md"):
            if (root / rel).is_file():
                return root / rel
    return None


def open_manual(win) -> bool:
    """F1: the manual in the system's viewer; where this copy has none, a box that says how to build it."""
    path = manual_path()
    if path is not None and QDesktopServices.openUrl(QUrl.fromLocalFile(str(path))):
        win.statusBar().showMessage(f"Opened the manual: {path}", 8000)
        return True
    QMessageBox.information(win, "Manual", "This copy of ClassMap Studio has no manual to open"
                            + (f" (the viewer did not open {path})" if path is not None else "")
                            + ".\n\nIn a source checkout, make docs builds it into build/docs/index.html.")
    return False


def about_text() -> str:
    """The About box's text: the version and what the app is."""
    from .. import __version__

    return (f"<b>ClassMap Studio {__version__}</b><br>Recognise images among many classes, fast: a classifier "
            f"bank with ClassMap's filter-and-refine.<br><br>Python {sys.version.split()[0]} · Manual: F1")


def add_help_menu(win) -> None:
    """The *Help* menu of ``win`` (a MainWindow): ``win.act_manual`` (F1) and ``win.act_about``."""
    m = win.menuBar().addMenu("&Help")
    win.act_manual = QAction("ClassMap Studio &manual", win)
    win.act_manual.setShortcut(QKeySequence.HelpContents)   # F1
    win.act_manual.triggered.connect(lambda: open_manual(win))
    m.addAction(win.act_manual)
    win.act_about = QAction("&About ClassMap Studio", win)
    win.act_about.triggered.connect(lambda: QMessageBox.about(win, "About ClassMap Studio", about_text()))
    m.addAction(win.act_about)


__all__ = ["about_text", "add_help_menu", "manual_path", "open_manual"]
