"""``classmap train | eval | predict | add-class``: model commands of the CLI."""
from __future__ import annotations

import argparse


def add_commands(sub: argparse._SubParsersAction) -> None:
    """Register the model sub-commands on the ``classmap`` parser."""
