"""``python -m classmap_gui`` starts the desktop app (``classmap-gui``); the CLI is ``classmap``."""
from .gui.app import main

raise SystemExit(main())
