"""``python -m classmap_gui.cli``: the ``classmap`` command."""
import sys

from . import main

sys.exit(main())
