"""The window's panels, listed once: name (``--panel``, :meth:`MainWindow.show_panel`, the window's
attribute), class and title (tab and View menu), in tab order. ``mainwindow`` builds its tabs and View menu
from it and ``classmap-gui --panel`` takes its choices from it.

The class is named by its import path and imported by :meth:`PanelEntry.load`, so reading the table (the
command line's ``--help`` and argument check) does not import Qt. Every panel is built as
``cls(project, runner)``.
"""
from __future__ import annotations

from importlib import import_module
from typing import NamedTuple


class PanelEntry(NamedTuple):
    """One panel: ``name``, ``cls`` (``"module:Class"`` under :mod:`classmap_gui.gui.panels`), ``title``."""

    name: str
    cls: str
    title: str

    def load(self) -> type:
        """The panel's class (imports its module)."""
        module, _, cls = self.cls.partition(":")
        return getattr(import_module(f"{__package__}.panels.{module}"), cls)


PANELS: tuple[PanelEntry, ...] = (
    PanelEntry("dataset", "dataset:DatasetPanel", "Dataset"),
    PanelEntry("train", "train:TrainPanel", "Train"),
    PanelEntry("run", "run:RunPanel", "Run"),
    PanelEntry("explore", "explore:ExplorePanel", "Explore"),
)


def panel_names() -> list[str]:
    """The panels' names in tab order."""
    return [p.name for p in PANELS]
