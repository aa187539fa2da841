"""The window's panels, listed once: name (``--panel``, :meth:`MainWindow.show_panel`, the window's
attribute), class and title (tab and View menu), in tab order. ``mainwindow`` builds its tabs and View menu
from it and ``classmap-gui --panel`` takes its choices from it.

The class is named by its import path and imported by :meth:`PanelEntry.load`, so reading the table (the
command line's ``--help`` and argument check) does not import Qt. Every panel is built as
``cls(project, runner)`` and follows :class:`Panel`: it reads and changes the project (and asks other panels
for work only through it, e.g. :meth:`~classmap_gui.core.project.Project.request_training`), and the window
calls its ``stop()`` and ``shutdown()`` from this table, never a panel's parts by name.
"""
from __future__ import annotations

from importlib import import_module
from typing import NamedTuple, Protocol


class Panel(Protocol):
    """What the window asks of every panel."""

    def stop(self) -> None:
        """The project is being replaced (new, opened): end live work now (streams, recordings); the panel
        stays usable."""

    def shutdown(self) -> None:
        """The window closes: end the panel's live work and its own threads; returns at once."""


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
